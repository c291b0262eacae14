"""Plain text: what an agent's UI shows for a slash command, and the shell's non-TTY output.

``render_plain`` dispatches on the result's type; a type without a renderer here is a bug and
raises ``TypeError``. Every string a server or a config file supplied is escaped
(``orbmcp.text``). Kept light: no rich, no SDK, no anyio, no pydantic (fast paths print this).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch
from typing import TypeVar

from orbmcp.commands.results import (
    CallOutcome,
    CheckReport,
    CommandHelp,
    CommandIndex,
    CompletionScript,
    ConfigView,
    DaemonStatus,
    ImportPlan,
    JsonText,
    Lines,
    PathsView,
    PromptListing,
    PromptMessages,
    ResourceContents,
    ResourceListing,
    Result,
    ServerAction,
    ServerDetail,
    ServerEdit,
    ShellExit,
    Statement,
    StatusReport,
    ToolDetail,
    ToolListing,
    TrustReview,
    ValidationReport,
)
from orbmcp.render.plain import basic, call, config, daemon, edit, status, tools

R = TypeVar("R", bound=Result)


@singledispatch
def render_plain(result: object) -> str:
    """The plain text of ``result``."""
    raise TypeError(f"no plain rendering for {type(result).__name__}: every result type needs one")


def _register(kind: type[R], render: Callable[[R], str]) -> None:
    render_plain.register(kind, render)


_register(StatusReport, status.status_report)
_register(ServerDetail, status.server_detail)
_register(ServerAction, status.server_action)
_register(CheckReport, status.check_report)
_register(ToolListing, tools.tool_listing)
_register(ToolDetail, tools.tool_detail)
_register(ResourceListing, tools.resource_listing)
_register(ResourceContents, tools.resource_contents)
_register(PromptListing, tools.prompt_listing)
_register(PromptMessages, tools.prompt_messages)
_register(CallOutcome, call.call_text)
_register(ConfigView, config.config_view)
_register(PathsView, config.paths_view)
_register(ValidationReport, config.validation_report)
_register(TrustReview, config.trust_review)
_register(DaemonStatus, daemon.daemon_status)
_register(ServerEdit, edit.server_edit)
_register(ImportPlan, edit.import_plan)
# A sentence (Message, untrust, auth, logout, install); Statement is abstract, so no _register.
render_plain.register(Statement, basic.statement)
_register(Lines, basic.lines)
_register(CommandHelp, basic.command_help)
_register(CommandIndex, basic.command_index)
_register(CompletionScript, basic.completion_script)
_register(ShellExit, basic.shell_exit)
_register(JsonText, basic.json_text)


__all__ = ["render_plain"]
