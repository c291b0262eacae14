"""What handlers return: one ``Result`` type per command outcome, data only.

Every handler returns a ``Result`` (or None when it has nothing to show). ``to_json()`` gives the
documented JSON shape and ``exit_code`` the outcome; the renderers in ``orbmcp.render`` (json,
plain, rich) dispatch on the type. The models live in one module per command family; this package
re-exports them all so callers import from one place, each loaded on first use: the fast paths
(an empty ``status``) import only the results they show.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orbmcp.commands.results.auth import Authorized, AuthStatus, LoggedOut
    from orbmcp.commands.results.base import (
        CommandHelp,
        CommandIndex,
        JsonText,
        Lines,
        Message,
        ParamHelp,
        Result,
        ShellExit,
        Statement,
    )
    from orbmcp.commands.results.call import CallOutcome
    from orbmcp.commands.results.check import CheckedServer, CheckReport, RequiredTool, SmokeCall
    from orbmcp.commands.results.completion import (
        CompletionInstalled,
        Completions,
        CompletionScript,
        SlashCommandList,
    )
    from orbmcp.commands.results.config import (
        ConfigView,
        PathsView,
        TrustReview,
        TrustRevoked,
        ValidationReport,
    )
    from orbmcp.commands.results.daemon import DaemonStatus
    from orbmcp.commands.results.edit import ImportItem, ImportPlan, ServerEdit
    from orbmcp.commands.results.status import (
        Launch,
        RetryWait,
        ServerAction,
        ServerDetail,
        StatusReport,
        StatusRow,
        ToolCounts,
    )
    from orbmcp.commands.results.tools import (
        ParameterInfo,
        PromptListing,
        PromptMessages,
        ResourceContents,
        ResourceListing,
        ToolDetail,
        ToolEntry,
        ToolListing,
        ToolsToCall,
    )

# name -> the module under orbmcp.commands.results that defines it
_WHERE = {
    "Authorized": "auth",
    "AuthStatus": "auth",
    "LoggedOut": "auth",
    "CommandHelp": "base",
    "CommandIndex": "base",
    "JsonText": "base",
    "Lines": "base",
    "Message": "base",
    "ParamHelp": "base",
    "Result": "base",
    "ShellExit": "base",
    "Statement": "base",
    "CallOutcome": "call",
    "CheckedServer": "check",
    "CheckReport": "check",
    "RequiredTool": "check",
    "SmokeCall": "check",
    "CompletionInstalled": "completion",
    "CompletionScript": "completion",
    "Completions": "completion",
    "SlashCommandList": "completion",
    "ConfigView": "config",
    "PathsView": "config",
    "TrustReview": "config",
    "TrustRevoked": "config",
    "ValidationReport": "config",
    "DaemonStatus": "daemon",
    "ImportItem": "edit",
    "ImportPlan": "edit",
    "ServerEdit": "edit",
    "Launch": "status",
    "RetryWait": "status",
    "ServerAction": "status",
    "ServerDetail": "status",
    "StatusReport": "status",
    "StatusRow": "status",
    "ToolCounts": "status",
    "ParameterInfo": "tools",
    "PromptListing": "tools",
    "PromptMessages": "tools",
    "ResourceContents": "tools",
    "ResourceListing": "tools",
    "ToolDetail": "tools",
    "ToolEntry": "tools",
    "ToolListing": "tools",
    "ToolsToCall": "tools",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "AuthStatus",
    "Authorized",
    "CallOutcome",
    "CheckReport",
    "CheckedServer",
    "CommandHelp",
    "CommandIndex",
    "CompletionInstalled",
    "CompletionScript",
    "Completions",
    "ConfigView",
    "DaemonStatus",
    "ImportItem",
    "ImportPlan",
    "JsonText",
    "Launch",
    "Lines",
    "LoggedOut",
    "Message",
    "ParamHelp",
    "ParameterInfo",
    "PathsView",
    "PromptListing",
    "PromptMessages",
    "RequiredTool",
    "ResourceContents",
    "ResourceListing",
    "Result",
    "RetryWait",
    "ServerAction",
    "ServerDetail",
    "ServerEdit",
    "ShellExit",
    "SlashCommandList",
    "SmokeCall",
    "Statement",
    "StatusReport",
    "StatusRow",
    "ToolCounts",
    "ToolDetail",
    "ToolEntry",
    "ToolListing",
    "ToolsToCall",
    "TrustReview",
    "TrustRevoked",
    "ValidationReport",
]
