"""Results of ``tools``, ``resources``, ``read``, ``prompts`` and ``prompt``.

Rows keep what the server sent (wire form, plus the ``server`` they came from); the renderers
escape it. Free of the SDK: these models are built from orbmcp's own types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.results.base import Result
from orbmcp.core.capabilities import Interaction
from orbmcp.core.tooling.registry import tool_json


@dataclass(frozen=True)
class ToolEntry:
    """A snapshot of one bridged tool (the registry's objects change as servers come and go)."""

    server: str
    name: str
    bridged_name: str
    description: str  # with the title and annotation hints, as an LLM sees it
    raw_description: str | None
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any] | None
    signature: str

    def to_json(self) -> dict[str, Any]:
        return tool_json(
            server=self.server,
            name=self.name,
            bridged_name=self.bridged_name,
            description=self.raw_description,
            input_schema=self.input_schema,
            annotations=self.annotations,
        )


@dataclass(frozen=True)
class ParameterInfo:
    """One parameter of a tool, as ``tools SERVER TOOL`` shows it (server text kept raw)."""

    name: str
    type: str  # readable: string, integer[], "a"|"b"
    required: bool
    has_default: bool = False
    default: object = None  # the schema's value
    choices: tuple[object, ...] = ()  # enum members
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "type": self.type, "required": self.required}
        if self.has_default:
            body["default"] = self.default
        if self.choices:
            body["enum"] = list(self.choices)
        body["description"] = self.description
        return body


@dataclass(frozen=True)
class ToolDetail(Result):
    """``tools SERVER TOOL``: one tool, every parameter, and how it must be called."""

    entry: ToolEntry
    title: str | None
    parameters: tuple[ParameterInfo, ...]
    task_support: str | None  # execution.taskSupport: forbidden (the default), optional, required
    output_schema: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return self.entry.to_json() | {
            "title": self.title,
            "parameters": [p.to_json() for p in self.parameters],
            "taskSupport": self.task_support or "forbidden",
            "outputSchema": None if self.output_schema is None else dict(self.output_schema),
        }


@dataclass(frozen=True)
class ToolListing(Result):
    tools: tuple[ToolEntry, ...]
    servers: tuple[str, ...]  # the servers listed, in order (a server may have no tools)
    schema: bool = False  # show each tool's bridged name and input schema too
    notices: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        return [t.to_json() for t in self.tools]


@dataclass(frozen=True)
class ToolsToCall(ToolListing):
    """``call SERVER`` without a tool: no call ran (a usage error, exit 2), but the answer to "which
    tool?" is the server's tools, so they are listed (plain and rich: as ``tools SERVER`` shows
    them). JSON: the usage error's envelope with the listing beside it, ``{"error": {...},
    "tools": [...]}``, so a script sees both the failure and what it could have called."""

    message: str = ""
    hint: str = ""

    @property
    def exit_code(self) -> int:
        return int(ExitCode.USAGE)

    def to_json(self) -> dict[str, Any]:  # type: ignore[override]
        server = self.servers[0] if self.servers else None
        error = {"code": "usage", "reason": "tool_missing", "message": self.message, "server": server}
        error["hint"] = self.hint
        return {"error": error, "tools": [t.to_json() for t in self.tools]}


@dataclass(frozen=True)
class ResourceListing(Result):
    """Resources (and resource templates) of one or more servers, each row in wire form + server
    (templates also carry their ``parameters``, the variable names of ``uriTemplate``)."""

    resources: tuple[Mapping[str, Any], ...]
    templates: tuple[Mapping[str, Any], ...] = ()
    servers: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.resources] + [dict(t) for t in self.templates]


@dataclass(frozen=True)
class SavedContent:
    """One content of a resource written to a file by ``read --output``."""

    uri: str
    path: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "path": self.path, "bytes": self.size}


@dataclass(frozen=True)
class ResourceContents(Result):
    server: str
    uri: str
    contents: tuple[Mapping[str, Any], ...]  # wire TextResourceContents / BlobResourceContents
    saved: tuple[SavedContent, ...] = ()  # --output: what was written where
    interactions: tuple[Interaction, ...] = ()
    update: int | None = None  # --follow: the number of this update (0: the first read)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"contents": [dict(c) for c in self.contents]}
        if self.saved:
            body["saved"] = [s.to_json() for s in self.saved]
        if self.interactions:
            body["interactions"] = [i.to_json() for i in self.interactions]
        if self.update is not None:
            body["uri"] = self.uri
            body["update"] = self.update
        return body


@dataclass(frozen=True)
class PromptListing(Result):
    prompts: tuple[Mapping[str, Any], ...]  # wire Prompt + "server"
    servers: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        return [dict(p) for p in self.prompts]


def prompt_arguments(prompt: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The well-formed entries of a wire prompt's ``arguments`` (each has a string ``name``)."""
    args = prompt.get("arguments")
    if not isinstance(args, list):
        return []
    return [a for a in args if isinstance(a, Mapping) and isinstance(a.get("name"), str)]


@dataclass(frozen=True)
class PromptMessages(Result):
    server: str
    name: str
    result: Mapping[str, Any]  # wire GetPromptResult: description?, messages[]
    interactions: tuple[Interaction, ...] = ()

    def to_json(self) -> dict[str, Any]:
        body = dict(self.result)
        if self.interactions:
            body["interactions"] = [i.to_json() for i in self.interactions]
        return body
