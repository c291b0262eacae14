"""Plain text: what an agent's UI shows for a slash command, and the shell's non-TTY output.

``render_plain`` dispatches on the result's type (its class or the nearest base class with a
renderer); a type without one is a bug and raises ``TypeError``. Every string a server or a config
file supplied is escaped (``orbmcp.text``). Kept light: no rich, no SDK, no anyio, no pydantic
(fast paths print this), and each renderer module is imported when a result of its kind is shown.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# result class name -> "module:function" under orbmcp.render.plain (class names are unique among
# the results; Statement is the abstract base of every sentence: Message, untrust, auth, logout).
_RENDERERS = {
    "StatusReport": "status:status_report",
    "ServerDetail": "status:server_detail",
    "ServerAction": "status:server_action",
    "CheckReport": "status:check_report",
    "ToolListing": "tools:tool_listing",
    "ToolDetail": "tools:tool_detail",
    "ResourceListing": "tools:resource_listing",
    "ResourceContents": "tools:resource_contents",
    "PromptListing": "tools:prompt_listing",
    "PromptMessages": "tools:prompt_messages",
    "CallOutcome": "call:call_text",
    "ConfigView": "config:config_view",
    "PathsView": "config:paths_view",
    "ValidationReport": "config:validation_report",
    "TrustReview": "config:trust_review",
    "DaemonStatus": "daemon:daemon_status",
    "ServerEdit": "edit:server_edit",
    "ServerEdits": "edit:server_edits",
    "ImportPlan": "edit:import_plan",
    "IntegratePlan": "integrate:integrate_plan",
    "AgentList": "integrate:agent_list",
    "LockReport": "lock:lock_report",
    "ToolDiff": "lock:tool_diff",
    "Lines": "basic:lines",
    "CommandHelp": "basic:command_help",
    "CommandIndex": "basic:command_index",
    "CompletionScript": "basic:completion_script",
    "Completions": "basic:completions",
    "SlashCommandList": "basic:slash_command_list",
    "ShellExit": "basic:shell_exit",
    "JsonText": "basic:json_text",
    "Statement": "basic:statement",
}


def renderer_for(result_type: type) -> Callable[[Any], str] | None:
    """The function that renders results of this type, or None when there is none."""
    for kind in result_type.__mro__:
        where = _RENDERERS.get(kind.__name__)
        if where is not None and kind.__module__.startswith("orbmcp.commands.results"):
            module, _, name = where.partition(":")
            render: Callable[[Any], str] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
            return render
    return None


def render_plain(result: object) -> str:
    """The plain text of ``result``."""
    render = renderer_for(type(result))
    if render is None:
        raise TypeError(f"no plain rendering for {type(result).__name__}: every result type needs one")
    return render(result)


__all__ = ["render_plain", "renderer_for"]
