"""``tools/list`` and ``tools/call`` of a gateway: the served servers' tools, and orbmcp's own.

Own tools: ``mcp_status`` and ``mcp_connect`` (as the host API gives them), and the tool form of
each ``/mcp`` prompt. A call of a server's tool goes to the session's live connection with the
agent's progress token (progress is relayed) and in the agent's request task (cancelling the
request cancels the call upstream); its result passes through unchanged. A tool whose server is
gone, stopped or failing answers with a tool error saying so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import MCPError

from orbmcp.commands.agent import (
    CONNECT_DESCRIPTION,
    CONNECT_TOOL,
    STATUS_DESCRIPTION,
    STATUS_SCHEMA,
    STATUS_TOOL,
    connect_schema,
    connect_server,
    error_result,
    status_rows,
    text_result,
)
from orbmcp.core.tooling.calls import call_tool_wire, owner_of
from orbmcp.errors import OrbError
from orbmcp.serve import slash
from orbmcp.serve.asker import AgentAsker

if TYPE_CHECKING:
    from orbmcp.core.tooling.results import ToolResult
    from orbmcp.serve.peer import Peer
    from orbmcp.serve.served import ServedGateway

OWN_TOOLS = frozenset({STATUS_TOOL, CONNECT_TOOL, *slash.BY_NAME})


def own_listing(gateway: ServedGateway) -> list[dict[str, Any]]:
    served = gateway.served_names()
    status = {"name": STATUS_TOOL, "description": STATUS_DESCRIPTION, "inputSchema": dict(STATUS_SCHEMA)}
    status["annotations"] = {"readOnlyHint": True, "openWorldHint": False}
    connect = {
        "name": CONNECT_TOOL,
        "description": CONNECT_DESCRIPTION,
        "inputSchema": connect_schema(served),
    }
    return [status, connect, *(slash.tool_wire(prompt, served) for prompt in slash.PROMPTS)]


async def list_tools(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    gateway.peer(ctx).touch()
    await gateway.ready()
    return {"tools": gateway.tool_listing()}


async def call_tool(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    return await call(gateway, ctx, params.name, dict(params.arguments or {}))


async def call(gateway: ServedGateway, ctx: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One ``tools/call``: its result as wire JSON (the server's, unchanged, for a bridged tool)."""

    peer = gateway.peer(ctx)
    peer.touch()
    if name in OWN_TOOLS:
        return (await _own(gateway, peer, ctx, name, arguments)).to_json()
    await gateway.ready()
    tool = gateway.tool(name)
    if tool is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")

    async def progress(value: float, total: float | None, message: str | None) -> None:
        await ctx.session.report_progress(value, total, message)

    try:
        sup = owner_of(gateway.manager, tool)
        await peer.roots_settled()
        with peer.calling(tool.server, ctx) as via:
            asker = AgentAsker(peer, via, gateway.hub.asker)
            return await call_tool_wire(sup, tool.name, arguments, progress=progress, asker=asker)
    except OrbError as err:
        return error_result(err).to_json()


async def _own(
    gateway: ServedGateway, peer: Peer, ctx: Any, name: str, arguments: dict[str, Any]
) -> ToolResult:
    if name == STATUS_TOOL:
        rows = status_rows(gateway.config, gateway.manager, servers=gateway.served_names())
        return text_result(json.dumps(rows, indent=2, ensure_ascii=False))
    if name == CONNECT_TOOL:
        server = arguments.get("server")
        served = gateway.served_names()
        if not isinstance(server, str) or not server:
            return text_result(
                f"mcp_connect needs 'server', one of: {', '.join(served) or 'none'}", error=True
            )
        try:
            return await connect_server(gateway.manager, gateway.config, server, servers=served)
        except OrbError as err:
            return error_result(err)
    prompt = slash.BY_NAME[name]
    with peer.calling("", ctx) as via:
        text, code = await slash.run(gateway, peer, via, prompt, arguments)
    return text_result(text, error=code != 0)
