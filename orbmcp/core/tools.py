"""The tool registry: tools are registered once and toggled, so reconnects never churn them.

Front ends (an agent host, the REPL's completion cache) subscribe as listeners. The registry is
the single source of "discovered" and "active" counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from orbmcp.core.naming import bridged_name, describe_tool


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


@dataclass
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
    active: bool = False
    present: bool = True  # False once the server stopped listing it (list_changed removal)

    def to_json(self) -> dict[str, Any]:
        return tool_json(
            server=self.server,
            name=self.name,
            bridged_name=self.bridged_name,
            description=self.raw_description,
            input_schema=self.input_schema,
            annotations=self.annotations,
        )


class ToolListener(Protocol):
    def tool_registered(self, tool: BridgedTool) -> None: ...

    def tool_activation(self, tool: BridgedTool, active: bool) -> None: ...


@dataclass
class ToolRegistry:
    prefix: str = "mcp"
    _tools: dict[tuple[str, str], BridgedTool] = field(default_factory=dict)
    _listeners: list[ToolListener] = field(default_factory=list)
    # Lets a host say which bridged tools it really has active (seed 003: another extension may
    # restrict them); None means "trust our own flag".
    external_active: Callable[[BridgedTool], bool] | None = None

    def add_listener(self, listener: ToolListener) -> None:
        self._listeners.append(listener)
        for tool in self._tools.values():
            listener.tool_registered(tool)
            if tool.active:
                listener.tool_activation(tool, True)

    def for_server(self, server: str, *, present_only: bool = True) -> list[BridgedTool]:
        return [t for (s, _), t in self._tools.items() if s == server and (t.present or not present_only)]

    def all(self) -> list[BridgedTool]:
        return [t for t in self._tools.values() if t.present]

    def get(self, server: str, tool: str) -> BridgedTool | None:
        return self._tools.get((server, tool))

    def by_bridged_name(self, name: str) -> BridgedTool | None:
        for t in self._tools.values():
            if t.bridged_name == name:
                return t
        return None

    def sync(self, server: str, tools: Iterable[Mapping[str, Any]], *, active: bool) -> tuple[int, int]:
        """Make the registry match a fresh listing. Returns (added, removed)."""
        seen: set[str] = set()
        added = 0
        for wire in tools:
            name = str(wire.get("name", ""))
            if not name or name in seen:
                continue
            seen.add(name)
            annotations = wire.get("annotations")
            title = wire.get("title")
            desc = wire.get("description")
            schema = wire.get("inputSchema") or {"type": "object"}
            existing = self._tools.get((server, name))
            if existing is None:
                existing = BridgedTool(
                    server=server,
                    name=name,
                    bridged_name=bridged_name(self.prefix, server, name),
                    description="",
                    raw_description=None,
                    input_schema={},
                    annotations=None,
                )
                self._tools[(server, name)] = existing
                added += 1
                fresh = True
            else:
                fresh = not existing.present
                if fresh:
                    added += 1
            existing.present = True
            raw = (
                desc if isinstance(desc, str) else None,
                annotations if isinstance(annotations, Mapping) else None,
                title if isinstance(title, str) else None,
            )
            # A re-discovery (list_changed, reconnect) mostly re-lists unchanged tools: with
            # thousands of them, describing each again would cost more than the listing itself.
            if fresh or raw != (existing.raw_description, existing.annotations, existing.title):
                existing.raw_description, existing.annotations, existing.title = raw
                existing.description = describe_tool(*raw)
            existing.input_schema = schema if isinstance(schema, Mapping) else {"type": "object"}
            out = wire.get("outputSchema")
            existing.output_schema = out if isinstance(out, Mapping) else None
            if fresh:
                for listener in self._listeners:
                    listener.tool_registered(existing)
            self._set_active(existing, active)
        removed = 0
        for tool in self.for_server(server):
            if tool.name not in seen:
                tool.present = False
                self._set_active(tool, False)
                removed += 1
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
        if self.external_active is not None:
            active = sum(1 for t in tools if t.active and self.external_active(t))
        else:
            active = sum(1 for t in tools if t.active)
        return len(tools), active
