"""``prompts/list``, ``prompts/get`` and ``completion/complete`` of a gateway.

orbmcp's own ``/mcp`` prompts come first (``slash``), then each served server's prompts under
their gateway names. Getting a server's prompt, or completing one of its arguments, goes to that
server; completing an argument of a resource template goes to the template's server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import MCPError

from orbmcp.commands.spelling import agent_message
from orbmcp.core.tooling.calls import complete_argument
from orbmcp.core.tooling.calls import get_prompt as upstream_get
from orbmcp.errors import OrbError
from orbmcp.serve import naming, slash
from orbmcp.serve.asker import AgentAsker
from orbmcp.serve.resources import locate_template

if TYPE_CHECKING:
    from orbmcp.serve.served import ServedGateway


async def _server_prompts(gateway: ServedGateway) -> dict[str, tuple[str, dict[str, Any]]]:
    """Gateway name -> (server, the prompt's wire JSON); first one wins, orbmcp's own names too."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for server in gateway.served_names():
        for prompt in await gateway.hub.listing(server, "prompts"):
            own = str(prompt.get("name", ""))
            name = naming.prompt_name(gateway.options.names, server, own)
            if not naming.valid_name(own):
                gateway.names.report_once(
                    f"prompt-invalid:{server}:{own}",
                    f"prompt {own!r} of '{server}' is outside the MCP name rules; not served",
                )
            elif name in out and out[name][0] != server:
                # "a" + "b__c" and "a__b" + "c" are one bridged name: the first keeps it.
                gateway.names.report_once(
                    f"prompt-clash:{name}:{server}",
                    f"prompt '{name}' is served for '{out[name][0]}'; '{server}' offers a prompt "
                    "of the same served name, not served",
                )
            elif name not in slash.BY_NAME and name not in out:
                out[name] = (server, prompt)
    return out


async def list_prompts(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    gateway.peer(ctx).touch()
    await gateway.ready()
    listed = [slash.prompt_wire(prompt) for prompt in slash.PROMPTS]
    for name, (_server, prompt) in (await _server_prompts(gateway)).items():
        listed.append({**prompt, "name": name})
    return {"prompts": listed}


async def get_prompt(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    peer = gateway.peer(ctx)
    peer.touch()
    arguments = dict(params.arguments or {})
    own = slash.BY_NAME.get(params.name)
    if own is not None:
        with peer.calling("", ctx) as via:
            text, _code = await slash.run(gateway, peer, via, own, arguments)
        message = {"role": "user", "content": {"type": "text", "text": text}}
        return {"description": f"Output of {own.usage}", "messages": [message]}
    await gateway.ready()
    found = (await _server_prompts(gateway)).get(params.name)
    if found is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    server, prompt = found

    try:
        with peer.calling(server, ctx) as via:
            asker = AgentAsker(peer, via, gateway.hub.asker)
            return await upstream_get(
                gateway.manager.get(server), str(prompt["name"]), arguments, asker=asker
            )
    except OrbError as err:
        raise MCPError(code=types.INTERNAL_ERROR, message=agent_message(err)) from None


async def complete(gateway: ServedGateway, ctx: Any, params: Any) -> dict[str, Any]:
    gateway.peer(ctx).touch()
    ref, argument = params.ref, params.argument
    context = dict(params.context.arguments or {}) if params.context is not None else None
    if ref.type == "ref/prompt" and ref.name in slash.BY_NAME:
        values = slash.complete(gateway, slash.BY_NAME[ref.name], argument.name, argument.value)
        return _completion(values)
    await gateway.ready()
    target = await _upstream_ref(gateway, ref)
    if target is None:
        return _completion([])
    server, upstream_ref = target

    sup = gateway.manager.get(server)
    capabilities = getattr(sup.client, "server_capabilities", None)
    if not sup.connected or getattr(capabilities, "completions", None) is None:
        return _completion([])
    try:
        values = await complete_argument(sup, upstream_ref, argument.name, argument.value, context)
    except OrbError:
        return _completion([])
    return _completion(values)


async def _upstream_ref(gateway: ServedGateway, ref: Any) -> tuple[str, tuple[str, str]] | None:
    """``(server, (kind, name))`` of a gateway prompt or resource template, as the server knows it."""
    if ref.type == "ref/prompt":
        found = (await _server_prompts(gateway)).get(ref.name)
        return None if found is None else (found[0], ("prompt", str(found[1]["name"])))

    located = await locate_template(gateway, ref.uri)
    return None if located is None else (located[0], ("resource", located[1]))


def _completion(values: list[str]) -> dict[str, Any]:
    shown = values[: slash.MAX_COMPLETIONS]
    return {"completion": {"values": shown, "total": len(values), "hasMore": len(values) > len(shown)}}
