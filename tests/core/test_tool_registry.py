"""ToolRegistry.sync on the SDK's own Tool models: register once, toggle, never churn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_types import Tool, ToolAnnotations

from orbmcp.core.tooling.registry import BridgedTool, ToolRegistry


@dataclass
class Events:
    registered: list[str] = field(default_factory=list)
    activations: list[tuple[str, bool]] = field(default_factory=list)
    synced: list[str] = field(default_factory=list)

    def tool_registered(self, tool: BridgedTool) -> None:
        self.registered.append(tool.name)

    def tool_activation(self, tool: BridgedTool, active: bool) -> None:
        self.activations.append((tool.name, active))

    def tools_synced(self, server: str) -> None:
        self.synced.append(server)


def tool(name: str, **extra: Any) -> Tool:
    extra.setdefault("input_schema", {"type": "object", "properties": {"x": {"type": "string"}}})
    return Tool(name=name, **extra)


def test_first_sync_registers_and_activates_each_tool_once() -> None:
    reg, events = ToolRegistry(prefix="mcp"), Events()
    reg.add_listener(events)
    added, removed = reg.sync("srv", [tool("a", description="A."), tool("b"), tool("a")], active=True)
    assert (added, removed) == (2, 0)  # the duplicate "a" is skipped
    assert events.registered == ["a", "b"]
    assert events.activations == [("a", True), ("b", True)]
    assert events.synced == ["srv"]  # told once, after the registrations and activations
    assert reg.counts("srv") == (2, 2)
    a = reg.get("srv", "a")
    assert a is not None and a.description == "A." and a.bridged_name.startswith("mcp")
    assert [t.name for t in reg.all()] == ["a", "b"]


def test_resync_of_the_same_listing_changes_nothing() -> None:
    reg, events = ToolRegistry(), Events()
    reg.sync("srv", [tool("a", description="A.")], active=True)
    reg.add_listener(events)
    before = reg.get("srv", "a")
    events.registered.clear()
    events.activations.clear()
    assert reg.sync("srv", [tool("a", description="A.")], active=True) == (0, 0)
    assert reg.get("srv", "a") is before
    assert events.registered == [] and events.activations == []


def test_changed_fields_are_taken_from_the_new_listing() -> None:
    reg = ToolRegistry()
    reg.sync("srv", [tool("a", description="Old.")], active=True)
    hints = ToolAnnotations(read_only_hint=True, title="Alpha")
    schema = {"type": "object", "properties": {"y": {"type": "integer"}}}
    out = {"type": "object"}
    reg.sync(
        "srv",
        [tool("a", description="New.", annotations=hints, input_schema=schema, output_schema=out)],
        active=True,
    )
    a = reg.get("srv", "a")
    assert a is not None
    assert a.raw_description == "New."
    assert a.annotations == {"readOnlyHint": True, "title": "Alpha"}
    assert a.description == "Alpha\n\nNew.\n\n[read-only]"
    assert a.input_schema == schema and a.output_schema == out
    # An equal annotations model in a later listing is the same listing: nothing recomputed.
    a.description = "sentinel"
    reg.sync(
        "srv",
        [tool("a", description="New.", annotations=ToolAnnotations(read_only_hint=True, title="Alpha"))],
        active=True,
    )
    assert a.description == "sentinel"
    reg.sync("srv", [tool("a", description="New.", title="Shown")], active=True)
    assert a.title == "Shown" and a.annotations is None and a.description == "Shown\n\nNew."


def test_removed_tools_go_inactive_and_come_back_as_added() -> None:
    reg, events = ToolRegistry(), Events()
    reg.add_listener(events)
    reg.sync("srv", [tool("a"), tool("b")], active=True)
    assert reg.sync("srv", [tool("a")], active=True) == (0, 1)
    b = reg.get("srv", "b")
    assert b is not None and not b.present and not b.active
    assert reg.counts("srv") == (1, 1)
    assert [t.name for t in reg.for_server("srv", present_only=False)] == ["a", "b"]
    assert reg.sync("srv", [tool("a"), tool("b")], active=True) == (1, 0)
    assert reg.get("srv", "b") is b and b.present and b.active
    assert events.registered == ["a", "b", "b"]  # a host re-registers a tool that came back


def test_servers_are_kept_apart_and_toggled_as_a_whole() -> None:
    reg = ToolRegistry()
    reg.sync("one", [tool("same")], active=True)
    reg.sync("two", [tool("same")], active=False)
    assert reg.counts("one") == (1, 1) and reg.counts("two") == (1, 0)
    reg.set_server_active("one", False)
    assert reg.counts("one") == (1, 0)
    assert reg.get("three", "same") is None and reg.for_server("three") == []


def test_an_empty_input_schema_becomes_an_object_schema() -> None:
    reg = ToolRegistry()
    reg.sync("srv", [tool("a", input_schema={})], active=True)
    a = reg.get("srv", "a")
    assert a is not None and a.input_schema == {"type": "object"}
