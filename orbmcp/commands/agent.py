"""orbmcp's own tools for a model, shared by every agent front: ``mcp_status`` and ``mcp_connect``.

The embedding API (``orbmcp.host``) wraps them as ``HostTool``s; ``orbmcp serve`` offers them as
MCP tools. Both give the same text, the same JSON and the same honesty about inactive tools.
Results are ``ToolResult``s; the commands they name are spelled as slash commands.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from orbmcp.commands.context import server_entry
from orbmcp.commands.spelling import agent_message, agent_text
from orbmcp.commands.views import status_report
from orbmcp.core.session.hints import hint_for
from orbmcp.core.session.state import State
from orbmcp.core.tooling.results import TextBlock, ToolResult
from orbmcp.errors import OrbError
from orbmcp.suggest import unknown_server

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.supervisor import Supervisor
    from orbmcp.core.tooling.registry import BridgedTool

STATUS_TOOL = "mcp_status"
CONNECT_TOOL = "mcp_connect"

STATUS_DESCRIPTION = (
    "Show every configured MCP server as a JSON array: name, lifecycle, state, tools "
    "{discovered, active}, auth, source. 'ready' means connected and discovered; it does not "
    "mean every discovered tool is active."
)
CONNECT_DESCRIPTION = (
    "Connect a configured MCP server (lazy ones too) so its tools become available. Reports "
    "honestly when the server is connected but some of its tools are not active."
)
STATUS_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def connect_schema(servers: Collection[str]) -> dict[str, Any]:
    """The input schema of ``mcp_connect``: one ``server``, among those configured now."""
    return {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "A configured server name.", "enum": sorted(servers)}
        },
        "required": ["server"],
        "additionalProperties": False,
    }


def text_result(text: str, *, error: bool = False, structured: object | None = None) -> ToolResult:
    """A ``ToolResult`` of one text block (``error=True`` sets ``is_error``)."""
    return ToolResult([TextBlock(text)], structured=structured, is_error=error)


def error_result(err: OrbError) -> ToolResult:
    """An OrbError as an ``is_error`` result; the commands it names are spelled as slash commands."""
    return text_result(agent_message(err), error=True)


def status_rows(
    config: ResolvedConfig | None, manager: Manager | None, *, servers: Collection[str] | None = None
) -> list[dict[str, Any]]:
    """``mcp_status``'s rows: the documented JSON of ``orbmcp status --json`` (only ``servers``
    when given)."""
    if config is None:
        return []
    rows: list[dict[str, Any]] = status_report(config, manager, front="host").to_json()
    return rows if servers is None else [row for row in rows if row.get("name") in servers]


async def connect_server(
    manager: Manager,
    config: ResolvedConfig,
    server: str,
    externally_active: Callable[[BridgedTool], bool] = lambda tool: True,
    *,
    servers: Collection[str] | None = None,
) -> ToolResult:
    """Connect ``server`` (lazy ones too) and say honestly how many of its tools are active.

    ``servers`` limits which servers may be connected (an agent front serving only some of them).
    """
    if servers is not None and server not in servers:
        return error_result(unknown_server(server, [n for n in config.servers if n in servers]))
    try:
        server_entry(config, server)  # an entry that did not load says why, never "unknown"
    except OrbError as err:
        return error_result(err)
    sup = await manager.start(server)
    if sup.state != State.READY:
        hint = hint_for(sup)
        error = agent_text(sup.snap.last_error or f"state {sup.state}")
        return text_result(
            f"Server '{server}' is {sup.state}: {error}" + (f" ({agent_text(hint)})" if hint else ""),
            error=True,
            structured=_details(sup, connected=False),
        )
    discovered, active = manager.tools.counts(server)
    if discovered == 0:
        text = f"Server '{server}' is connected; it offers no tools."
    elif active < discovered:
        inactive = [
            t.bridged_name
            for t in manager.tools.for_server(server)
            if not (t.active and externally_active(t))
        ]
        shown = ", ".join(inactive[:10]) + (f" (+{len(inactive) - 10} more)" if len(inactive) > 10 else "")
        text = (
            f"Server '{server}' is connected, but only {active} of {discovered} discovered tools are "
            f"active in this session; inactive: {shown}. Another extension or the active tool policy "
            "keeps them inactive, and mcp_connect does not override it: check the tool policy or the "
            "conflicting extension (reconnecting will not help)."
        )
    else:
        text = f"Server '{server}' is connected: {active} tools active."
    return text_result(text, structured=_details(sup, connected=True))


def _details(sup: Supervisor, *, connected: bool) -> dict[str, Any]:
    discovered, active = sup.runtime.tools.counts(sup.name)
    return {
        "server": sup.name,
        "state": str(sup.state),
        "connected": connected,
        "tools": {"discovered": discovered, "active": active},
        "allToolsActive": connected and active == discovered,
    }
