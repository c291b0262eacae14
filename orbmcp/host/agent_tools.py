"""The extension's own tools for the model: ``mcp_status`` and ``mcp_connect``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from orbmcp.host.tools import HostTool, ProgressCallback, text_result

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.manager import Manager
    from orbmcp.core.results import ToolResult
    from orbmcp.core.supervisor import Supervisor
    from orbmcp.core.tools import BridgedTool
    from orbmcp.host.extension import McpExtension

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


class _ConnectTool(HostTool):
    """``mcp_connect``: its schema lists the servers configured now (they change at run time)."""

    def __init__(self, ext: McpExtension) -> None:
        async def run(
            args: dict[str, Any], progress: ProgressCallback | None, timeout_s: float | None
        ) -> ToolResult:
            server = args.get("server")
            if not isinstance(server, str) or not server:
                names = ", ".join(sorted(ext.config.servers)) if ext.config else ""
                return text_result(
                    f"mcp_connect needs 'server', one of: {names or 'none configured'}", error=True
                )
            return await ext.connect(server)

        super().__init__(CONNECT_TOOL, run, description=CONNECT_DESCRIPTION)
        self._config_of: Callable[[], ResolvedConfig | None] = lambda: ext.config

    @property
    def input_schema(self) -> Mapping[str, Any]:
        config = self._config_of()
        names = sorted(config.servers) if config is not None else []
        return {
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "A configured server name.", "enum": names}
            },
            "required": ["server"],
            "additionalProperties": False,
        }


def agent_tools(ext: McpExtension) -> tuple[HostTool, HostTool]:
    """The ``mcp_status`` and ``mcp_connect`` tools of ``ext``."""

    async def status(
        args: dict[str, Any], progress: ProgressCallback | None, timeout_s: float | None
    ) -> ToolResult:
        return text_result(json.dumps(ext.status_rows(), indent=2, ensure_ascii=False))

    status_tool = HostTool(
        STATUS_TOOL,
        status,
        description=STATUS_DESCRIPTION,
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    )
    return status_tool, _ConnectTool(ext)


def status_rows(config: ResolvedConfig | None, manager: Manager | None) -> list[dict[str, Any]]:
    """``mcp_status``'s rows: the documented JSON of ``orbmcp status --json``."""
    from orbmcp.commands.views import status_report

    if config is None:
        return []
    return status_report(config, manager, front="host").to_json()


async def connect_server(
    manager: Manager,
    config: ResolvedConfig,
    server: str,
    externally_active: Callable[[BridgedTool], bool],
) -> ToolResult:
    """Connect ``server`` (lazy ones too) and say honestly how many of its tools are active."""
    from orbmcp.commands.context import server_entry
    from orbmcp.core.hints import hint_for
    from orbmcp.core.state import State
    from orbmcp.errors import OrbError
    from orbmcp.host.spelling import agent_text
    from orbmcp.host.tools import error_result

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
