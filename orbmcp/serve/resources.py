"""Resources of a gateway: listing, templates, reading and subscriptions, relayed to their server.

A gateway URI names its server (``orbmcp://<server>/<percent-encoded URI>``); in raw mode the
server's own URI is looked up in the listings, then matched against the servers' templates.
Contents read keep their data; their URIs are given in the gateway's form, so what an agent reads
is what it listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import MCPError
from mcp.shared.uri_template import UriTemplate

from orbmcp.commands.spelling import agent_message
from orbmcp.core.tooling.calls import read_resource as upstream_read
from orbmcp.errors import OrbError
from orbmcp.serve import naming
from orbmcp.serve.asker import AgentAsker

if TYPE_CHECKING:
    from orbmcp.serve.served import ServedGateway


async def list_resources(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    gateway.peer(ctx).touch()
    await gateway.ready()
    mode = gateway.options.names
    seen: set[str] = set()
    listed: list[dict[str, Any]] = []
    for server in gateway.served_names():
        for resource in await gateway.hub.listing(server, "resources"):
            uri = naming.resource_uri(mode, server, str(resource.get("uri", "")))
            if uri not in seen:
                seen.add(uri)
                listed.append({**resource, "uri": uri})
    return {"resources": listed}


async def list_templates(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    gateway.peer(ctx).touch()
    await gateway.ready()
    listed: list[dict[str, Any]] = []
    for server in gateway.served_names():
        for template in await gateway.hub.listing(server, "templates"):
            original = str(template.get("uriTemplate", ""))
            listed.append(
                {**template, "uriTemplate": naming.template_uri(gateway.options.names, server, original)}
            )
    return {"resourceTemplates": listed}


async def locate(gateway: ServedGateway, uri: str) -> tuple[str, str] | None:
    """``(server, original URI)`` of a gateway resource URI, or None when no served server has it."""
    if gateway.options.names != "raw":
        found = naming.parse_resource_uri(uri)
        return found if found is not None and gateway.serves(found[0]) else None
    for server in gateway.served_names():
        if any(str(r.get("uri")) == uri for r in await gateway.hub.listing(server, "resources")):
            return server, uri

    for server in gateway.served_names():
        for template in await gateway.hub.listing(server, "templates"):
            try:
                if UriTemplate.parse(str(template.get("uriTemplate", ""))).match(uri) is not None:
                    return server, uri
            except ValueError:
                continue
    return None


async def locate_template(gateway: ServedGateway, uri_template: str) -> tuple[str, str] | None:
    """``(server, original template)`` of a gateway resource template."""
    mode = gateway.options.names
    for server in gateway.served_names():
        for template in await gateway.hub.listing(server, "templates"):
            original = str(template.get("uriTemplate", ""))
            if naming.template_uri(mode, server, original) == uri_template:
                return server, original
    return None


async def _located(gateway: ServedGateway, uri: str) -> tuple[str, str]:
    await gateway.ready()
    found = await locate(gateway, uri)
    if found is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {uri}")
    return found


async def read_resource(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    peer = gateway.peer(ctx)
    peer.touch()
    uri = str(params.uri)
    server, original = await _located(gateway, uri)
    try:
        with peer.calling(server, ctx) as via:
            asker = AgentAsker(peer, via, gateway.hub.asker)
            contents = await upstream_read(gateway.manager.get(server), original, asker=asker)
    except OrbError as err:
        raise MCPError(code=types.INTERNAL_ERROR, message=agent_message(err)) from None
    mode = gateway.options.names
    for item in contents:
        if isinstance(item.get("uri"), str):
            item["uri"] = uri if item["uri"] == original else naming.resource_uri(mode, server, item["uri"])
    return {"contents": contents}


async def subscribe(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    peer = gateway.peer(ctx)
    uri = str(params.uri)
    server, original = await _located(gateway, uri)
    try:
        await gateway.hub.subscribe(peer, gateway, server, original, uri)
    except OrbError as err:
        raise MCPError(code=types.INTERNAL_ERROR, message=agent_message(err)) from None
    return {}


async def unsubscribe(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    peer = gateway.peer(ctx)
    uri = str(params.uri)
    found = await locate(gateway, uri)
    if found is not None:
        await gateway.hub.unsubscribe(peer, found[0], found[1], uri)
    return {}
