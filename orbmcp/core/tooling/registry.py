"""The tool registry: tools are registered once and toggled, so reconnects never churn them.

Front ends (an agent host, the REPL's completion cache) subscribe as listeners. The registry is
the single source of "discovered" and "active" counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from orbmcp.core.session.discovery import wire
from orbmcp.core.tooling.naming import bridged_name, describe_tool, pi_name


def tool_json(
    *,
    server: str,
    name: str,
    bridged_name: str,
    description: str | None,
    input_schema: Mapping[str, Any],
    annotations: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The documented JSON of one tool (`orbmcp tools --json`, agent hosts): one spelling."""
    return {
        "server": server,
        "name": name,
        "bridgedName": bridged_name,
        "description": description,
        "inputSchema": dict(input_schema),
        "annotations": None if annotations is None else dict(annotations),
    }


@dataclass(slots=True)
class BridgedTool:
    server: str
    name: str  # the server's own tool name
    bridged_name: str  # stable provider-safe name
    description: str  # with annotation hints
    raw_description: str | None
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any] | None
    title: str | None = None
    output_schema: Mapping[str, Any] | None = None
    # execution.taskSupport: "forbidden", "optional" or "required" (task-augmented calls); None
    # when the server does not say (which means forbidden).
    task_support: str | None = None
    active: bool = False
    present: bool = True  # False once the server stopped listing it (list_changed removal)
    # ``_meta.ui.visibility`` without "model" (MCP Apps): a tool for a host's UI, not for a model.
    app_only: bool = False
    # The annotations as last listed (an SDK model), to tell a changed listing from the same one.
    listed_annotations: Any = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return tool_json(
            server=self.server,
            name=self.name,
            bridged_name=self.bridged_name,
            description=self.raw_description,
            input_schema=self.input_schema,
            annotations=self.annotations,
        )


class ListedTool(Protocol):
    """What discovery hands the registry: the SDK's ``Tool`` model, whose types pydantic has
    already enforced on the server's JSON (so the registry does not check them again)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str | None: ...
    @property
    def title(self) -> str | None: ...
    @property
    def annotations(self) -> Any: ...  # a ToolAnnotations model or None
    @property
    def input_schema(self) -> Mapping[str, Any]: ...
    @property
    def output_schema(self) -> Mapping[str, Any] | None: ...


def _describe(tool: BridgedTool, desc: str | None, title: str | None, annotations: Any) -> None:
    tool.listed_annotations = annotations
    tool.raw_description = desc
    tool.title = title
    tool.annotations = None if annotations is None else wire(annotations)
    tool.description = describe_tool(desc, tool.annotations, title)


def _app_only(meta: object) -> bool:
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    visibility = ui.get("visibility") if isinstance(ui, Mapping) else None
    return isinstance(visibility, list) and "model" not in visibility


class ToolListener(Protocol):
    def tool_registered(self, tool: BridgedTool) -> None: ...

    def tool_activation(self, tool: BridgedTool, active: bool) -> None: ...

    def tools_synced(self, server: str) -> None:
        """A listing of ``server`` was applied (after the registrations and activations it caused):
        descriptions or schemas may have changed in place even when no tool came or went."""
        ...


@dataclass
class ToolRegistry:
    prefix: str = "mcp"
    # The toolNaming setting: "hashed" (<prefix>__<server>__<tool>_<hash8>) or "pi"
    # (<prefix>_<server>_<tool>, hashed only when cut or taken).
    naming: str = "hashed"
    _names: set[str] = field(default_factory=set)  # every bridged name given out, for "pi"
    # server -> tool name -> tool, in discovery order: a re-discovery touches one server's tools.
    _servers: dict[str, dict[str, BridgedTool]] = field(default_factory=dict)
    _listeners: list[ToolListener] = field(default_factory=list)
    # Lets a host say which bridged tools it really has active (another extension may
    # restrict them); None means "trust our own flag".
    external_active: Callable[[BridgedTool], bool] | None = None

    def add_listener(self, listener: ToolListener) -> None:
        self._listeners.append(listener)
        for tools in self._servers.values():
            for tool in tools.values():
                listener.tool_registered(tool)
                if tool.active:
                    listener.tool_activation(tool, True)

    def for_server(self, server: str, *, present_only: bool = True) -> list[BridgedTool]:
        return [t for t in self._servers.get(server, {}).values() if t.present or not present_only]

    def all(self) -> list[BridgedTool]:
        return [t for tools in self._servers.values() for t in tools.values() if t.present]

    def get(self, server: str, tool: str) -> BridgedTool | None:
        return self._servers.get(server, {}).get(tool)

    def _new_name(self, server: str, tool: str) -> str:
        """The bridged name of a tool seen for the first time; a tool keeps it for the session."""
        if self.naming != "pi":
            return bridged_name(self.prefix, server, tool)
        name = pi_name(self.prefix, server, tool)
        if name in self._names:  # sanitising made two tools' names one: the later one is hashed
            name = pi_name(self.prefix, server, tool, hashed=True)
        self._names.add(name)
        return name

    def sync(self, server: str, tools: Iterable[ListedTool], *, active: bool) -> tuple[int, int]:
        """Make the registry match a fresh listing (SDK ``Tool`` models). Returns (added, removed).

        A re-discovery (list_changed, reconnect) mostly re-lists unchanged tools, thousands of
        them on some servers: the loop reads the models' attributes (no wire dicts) and keeps
        per-tool work for an unchanged tool to a few comparisons.
        """
        known = self._servers.setdefault(server, {})
        lookup = known.get
        seen: set[str] = set()
        remember = seen.add
        added = 0
        for listed in tools:
            name = listed.name
            if not name or name in seen:
                continue
            remember(name)
            existing = lookup(name)
            if existing is None:
                existing = known[name] = BridgedTool(
                    server=server,
                    name=name,
                    bridged_name=self._new_name(server, name),
                    description="",
                    raw_description=None,
                    input_schema={},
                    annotations=None,
                    present=False,
                )
            fresh = not existing.present
            if fresh:
                existing.present = True
                added += 1
            desc, title, annotations = listed.description, listed.title, listed.annotations
            if (
                fresh
                or desc != existing.raw_description
                or title != existing.title
                or annotations != existing.listed_annotations
            ):
                _describe(existing, desc, title, annotations)
            existing.input_schema = listed.input_schema or {"type": "object"}
            existing.output_schema = listed.output_schema
            existing.app_only = _app_only(getattr(listed, "meta", None))
            execution = getattr(listed, "execution", None)
            existing.task_support = None if execution is None else getattr(execution, "task_support", None)
            if fresh:
                for listener in self._listeners:
                    listener.tool_registered(existing)
            if existing.active is not active:
                self._set_active(existing, active)
        removed = 0
        if len(seen) != len(known):
            for tool in known.values():
                if tool.present and tool.name not in seen:
                    tool.present = False
                    self._set_active(tool, False)
                    removed += 1
        for listener in self._listeners:
            listener.tools_synced(server)
        return added, removed

    def set_server_active(self, server: str, active: bool) -> None:
        for tool in self.for_server(server):
            self._set_active(tool, active)

    def _set_active(self, tool: BridgedTool, active: bool) -> None:
        if tool.active == active:
            return
        tool.active = active
        for listener in self._listeners:
            listener.tool_activation(tool, active)

    def counts(self, server: str) -> tuple[int, int]:
        tools = self.for_server(server)
        external = self.external_active
        active = sum(1 for t in tools if t.active and (external is None or external(t)))
        return len(tools), active
