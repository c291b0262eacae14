"""What handlers return: one ``Result`` type per command outcome, data only.

Every handler returns a ``Result`` (or None when it has nothing to show). ``to_json()`` gives the
documented JSON shape and ``exit_code`` the outcome; the renderers in ``orbmcp.render`` (json,
plain, rich) dispatch on the type. The models live in one module per command family; this package
re-exports them all so callers import from one place.
"""

from __future__ import annotations

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
from orbmcp.commands.results.completion import CompletionInstalled, CompletionScript
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
)

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
    "SmokeCall",
    "Statement",
    "StatusReport",
    "StatusRow",
    "ToolCounts",
    "ToolDetail",
    "ToolEntry",
    "ToolListing",
    "TrustReview",
    "TrustRevoked",
    "ValidationReport",
]
