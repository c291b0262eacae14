"""The extension's tool table: every ``HostTool`` it made, and the host that holds them.

A host learns each tool once (``register_tool``) and afterwards only hears activation changes,
so reconnects and ``list_changed`` never churn its table. The table remembers what it told the
host, which lets ``register_into`` replay it into a fresh host table without reconnecting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from orbmcp.host.protocol import ActiveToolNames
from orbmcp.host.ui import callback_failed

if TYPE_CHECKING:
    from orbmcp.core.tooling.registry import BridgedTool
    from orbmcp.host.protocol import Host
    from orbmcp.host.tools import HostTool


class ToolTable:
    """HostTools by name, in registration order; a listener of the core tool registry."""

    def __init__(self, host: Host, bridge: Callable[[BridgedTool], HostTool]) -> None:
        self.host = host
        self._bridge = bridge  # makes the HostTool of a newly discovered tool
        self._tools: dict[str, HostTool] = {}
        self._active: set[str] = set()  # what the host was last told is active

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def get(self, name: str) -> HostTool | None:
        return self._tools.get(name)

    def tools(self) -> list[HostTool]:
        return list(self._tools.values())

    def add(self, tool: HostTool) -> None:
        """Register a new tool with the host (inactive until ``set_active``)."""
        self._tools[tool.name] = tool
        self._register(tool)

    def set_active(self, name: str, active: bool) -> None:
        (self._active.add if active else self._active.discard)(name)
        try:
            self.host.set_tool_active(name, active)
        except Exception as exc:
            callback_failed(f"set_tool_active {name}", exc)

    def register_into(self, host: Host) -> None:
        """Make ``host`` the one to talk to, and give it every tool and activation it lacks."""
        self.host = host
        for tool in self._tools.values():
            self._register(tool)
        for name in self._tools:
            if name in self._active:
                self.set_active(name, True)

    def externally_active(self, tool: BridgedTool) -> bool:
        """Whether the host really offers a tool orbmcp activated (``ActiveToolNames``)."""
        if not isinstance(self.host, ActiveToolNames):
            return True
        try:
            names = self.host.active_tool_names()
        except Exception:
            return True
        return True if names is None else tool.bridged_name in names

    def _register(self, tool: HostTool) -> None:
        try:
            self.host.register_tool(tool)
        except Exception as exc:
            callback_failed(f"register_tool {tool.name}", exc)

    # -- the core tool registry's listener interface ----------------------------------------------

    def tool_registered(self, tool: BridgedTool) -> None:
        if tool.bridged_name not in self._tools:  # re-listed after a removal: same HostTool
            self.add(self._bridge(tool))

    def tool_activation(self, tool: BridgedTool, active: bool) -> None:
        self.set_active(tool.bridged_name, active)

    def tools_synced(self, server: str) -> None:
        """Nothing: a ``HostTool`` reads its description and schema from the registry each time."""
