"""The SDK ``Server`` of a gateway: every request handler wired to the gateway's modules.

The middleware refuses ``server/discover`` with "method not found" (this server speaks the
handshake era; see ``gateway``). The handlers return wire JSON where they pass data through, so a
server's tools, prompts and resources reach the agent as the server gave them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import MCPError
from mcp.server.lowlevel.server import NotificationOptions, Server

from orbmcp._version import __version__
from orbmcp.serve import prompts, resources, tools

if TYPE_CHECKING:
    from orbmcp.serve.served import ServedGateway

Handler = Callable[..., Awaitable[Any]]
INSTRUCTIONS = (
    "orbmcp: the MCP servers configured for this user and project, behind one connection. "
    "mcp_status lists them; mcp_connect connects one; the /mcp prompts (or their tools) run "
    "orbmcp's commands: status, start, stop, auth, reconnect."
)


def build_server(gateway: ServedGateway) -> Server[Any]:
    def bound(handler: Handler) -> Handler:
        return partial(handler, gateway)

    class GatewayServer(Server[Any]):
        def create_initialization_options(
            self,
            notification_options: NotificationOptions | None = None,
            experimental_capabilities: dict[str, dict[str, Any]] | None = None,
            extensions: dict[str, dict[str, Any]] | None = None,
        ) -> Any:
            # Every list follows the servers: say so, whichever transport builds the options.
            everything = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
            return super().create_initialization_options(
                notification_options or everything, experimental_capabilities, extensions
            )

    server = GatewayServer(
        "orbmcp",
        version=__version__,
        title="orbmcp",
        instructions=INSTRUCTIONS,
        on_list_tools=bound(tools.list_tools),
        on_call_tool=bound(tools.call_tool),
        on_list_prompts=bound(prompts.list_prompts),
        on_get_prompt=bound(prompts.get_prompt),
        on_completion=bound(prompts.complete),
        on_list_resources=bound(resources.list_resources),
        on_list_resource_templates=bound(resources.list_templates),
        on_read_resource=bound(resources.read_resource),
        on_subscribe_resource=bound(resources.subscribe),
        on_unsubscribe_resource=bound(resources.unsubscribe),
    )
    # Registered directly: the constructor's keyword arguments for these warn that 2026-07-28
    # removed them, and this server speaks the 2025 era where they are current.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, bound(_set_level))
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, bound(_initialized)
    )
    server.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, bound(_roots_changed)
    )
    # Replaced, not added to: the SDK's default OpenTelemetry middleware opens a span per message,
    # which a gateway on every tool call of an agent pays for whether or not anything records it.
    server.middleware = [partial(_front_door, gateway)]
    return server


async def _front_door(gateway: ServedGateway, ctx: Any, call_next: Any) -> Any:
    """``server/discover`` is refused (the handshake era); the two requests an agent sends most,
    ``tools/list`` and ``tools/call``, are answered here with the wire JSON that passes through,
    instead of being validated against the spec's models on the way in and out once more (what
    they carry was checked when it came from the server). Anything unusual takes the checked path.
    """
    method = ctx.method
    if method == "server/discover":
        raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=method)
    if ctx.request_id is not None and method in ("tools/list", "tools/call"):
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if method == "tools/list" and not params.get("cursor"):
            return await tools.list_tools(gateway, ctx, None)
        name, arguments = params.get("name"), params.get("arguments", {})
        if method == "tools/call" and isinstance(name, str) and isinstance(arguments, dict | None):
            return await tools.call(gateway, ctx, name, dict(arguments or {}))
    return await call_next(ctx)


async def _set_level(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    gateway.peer(ctx).log_level = str(params.level)
    return {}


async def _initialized(gateway: ServedGateway, ctx: Any, params: Any) -> None:
    peer = gateway.peer(ctx)
    peer.touch()  # known from now on: it hears of every change
    # Asked beside the handler: the agent answers on the wire this handler is reading.
    gateway.spawn(gateway.hub.agent_roots_changed, peer)


async def _roots_changed(gateway: ServedGateway, ctx: Any, params: Any) -> None:
    gateway.spawn(gateway.hub.agent_roots_changed, gateway.peer(ctx))
