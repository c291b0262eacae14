"""The tools an agent host holds: ``HostTool`` (a bridged MCP tool or one of orbmcp's own) and
the helpers that build tool results."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from orbmcp.commands.agent import error_result, text_result
from orbmcp.core.tooling.calls import call_tool, owner_of
from orbmcp.core.tooling.results import ToolResult
from orbmcp.errors import ConnectionFailed
from orbmcp.host.schemas import normalize_schema

if TYPE_CHECKING:
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.tooling.registry import BridgedTool

__all__ = ["HostTool", "ProgressCallback", "ToolRunner", "bridged_host_tool", "error_result", "text_result"]

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]
"""``progress(value, total, message)`` for one call; awaited when it returns an awaitable."""

ToolRunner = Callable[[dict[str, Any], ProgressCallback | None, float | None], Awaitable[ToolResult]]
"""What runs a ``HostTool``: ``run(arguments, progress, timeout_s)``."""


class HostTool:
    """One tool as the host sees it: a name, a description, a JSON input schema and ``call``.

    For a bridged MCP tool, ``description``, ``input_schema`` and ``annotations`` follow the
    server: a ``list_changed`` re-discovery updates them in place, so read them each turn rather
    than copying them once. The host learns of a tool once (``Host.register_tool``) and is then
    told only when it becomes active or inactive (``Host.set_tool_active``).
    """

    def __init__(
        self,
        name: str,
        run: ToolRunner,
        *,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self._run = run
        self._bridged: BridgedTool | None = None  # set by ``bridged_host_tool``
        self._normalize = False  # ``McpExtension(normalize_schemas=True)``
        self._normalized: tuple[Mapping[str, Any], dict[str, Any]] | None = None  # (from, to)
        self._description = description
        self._schema: Mapping[str, Any] = input_schema or {"type": "object"}

    @property
    def description(self) -> str:
        """The text to show the model (a bridged tool's carries its annotation hints)."""
        return self._bridged.description if self._bridged is not None else self._description

    @property
    def input_schema(self) -> Mapping[str, Any]:
        """The JSON Schema of the arguments: as the server gave it, or, with the extension's
        ``normalize_schemas``, without ``$ref``, ``allOf`` and nullable unions (``normalize_schema``)."""
        if self._bridged is None:
            return self._schema
        schema = self._bridged.input_schema
        if not self._normalize:
            return schema
        if self._normalized is None or self._normalized[0] is not schema:
            self._normalized = (schema, normalize_schema(schema))  # again after a re-discovery
        return self._normalized[1]

    @property
    def annotations(self) -> Mapping[str, Any] | None:
        """The server's tool annotations (``readOnlyHint``, ...); None for orbmcp's own tools."""
        return self._bridged.annotations if self._bridged is not None else None

    @property
    def server(self) -> str | None:
        """The MCP server behind this tool; None for the extension's own ``mcp_*`` tools."""
        return self._bridged.server if self._bridged is not None else None

    @property
    def tool_name(self) -> str | None:
        """The server's own name of the tool."""
        return self._bridged.name if self._bridged is not None else None

    @property
    def active(self) -> bool:
        """Whether orbmcp considers the tool callable now (its server is connected and lists it)."""
        return self._bridged.active if self._bridged is not None else True

    async def call(
        self,
        args: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
        timeout_s: float | None = None,
    ) -> ToolResult:
        """Call the tool; call it from the event loop the extension runs on.

        Returns a ``ToolResult`` whose ``is_error`` is set when the tool itself failed (route it
        through the agent's ordinary error path). Raises ``OrbError`` subclasses for failures around
        the tool: ``ConnectionFailed`` (server gone, extension shut down), ``UsageError`` (the server
        no longer offers the tool), ``TimeoutFailed``, ``AuthError``, ``ProtocolError``. ``progress``
        runs on the event loop for each progress notification. Cancelling the calling task cancels
        the call on the server (``notifications/cancelled``).
        """
        return await self._run(dict(args or {}), progress, timeout_s)

    def __repr__(self) -> str:
        return f"HostTool({self.name!r})"


def bridged_host_tool(
    tool: BridgedTool, manager_of: Callable[[], Manager | None], *, normalize: bool = False
) -> HostTool:
    """The HostTool of a discovered MCP tool; calls go through the session ``manager_of()`` gives.
    ``normalize``: its input schema without ``$ref``, ``allOf`` and nullable unions."""

    async def run(
        args: dict[str, Any], progress: ProgressCallback | None, timeout_s: float | None
    ) -> ToolResult:
        manager = manager_of()
        if manager is None:
            raise ConnectionFailed(
                f"the MCP extension is shut down; '{tool.bridged_name}' is unavailable", server=tool.server
            )
        return await call_tool(
            owner_of(manager, tool), tool.name, args, timeout_s=timeout_s, progress=progress
        )

    host_tool = HostTool(tool.bridged_name, run)
    host_tool._bridged = tool
    host_tool._normalize = normalize
    return host_tool
