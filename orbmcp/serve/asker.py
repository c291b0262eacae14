"""Servers' questions asked of the agents behind serve: ``Asker``s that forward to an agent.

The session's servers ask through ``core.capabilities`` like everywhere else: the command waiting
on that server is asked, else the session's own front. Serve is a front of both kinds: a call an
agent makes through serve waits with ``AgentAsker`` (that agent, on that call's stream), and
between calls ``HubAsker`` is the session's front (the agent calling that server now, else the one
most recently active), falling back to the front that answered before serve attached. A question
an agent cannot take (it did not declare the capability) goes the same way down.

A form goes to the agent with the server's own schema (orbmcp parsed and bounded it first, and
checks the answer against it), rebuilt from the parsed fields when a front has only those; the
server's name leads the message so the person knows who asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types
from mcp import MCPError

from orbmcp.core.capabilities.client_side import default_sampling
from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest, FormField
from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest

if TYPE_CHECKING:
    from orbmcp.core.capabilities.askers import Asker
    from orbmcp.serve.peer import InFlight, Peer

NO_AGENT = "no agent connected to orbmcp serve supports it"


class Router(Protocol):
    """What the asker needs of the hub (``serve.hub``, which makes the asker)."""

    def route(
        self, server: str | None, capable: Callable[[Peer], bool]
    ) -> tuple[Peer, InFlight | None] | None: ...


class HubAsker:
    """The session's front while serve runs: the right agent for each server, else ``previous``."""

    interactive = True

    def __init__(self, hub: Router, previous: Asker | None) -> None:
        self.hub = hub
        self.previous = previous

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        target = self.hub.route(request.server, lambda peer: peer.can_elicit(request.mode))
        if target is not None:
            return await elicit_agent(*target, request)
        if self.previous is not None:
            return await self.previous.elicit(request)
        return ElicitationAnswer("decline", reason=f"{request.mode} elicitation: {NO_AGENT}")

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        target = self.hub.route(request.server, lambda peer: peer.can_sample())
        if target is not None:
            return await sample_agent(*target, request)
        if self.previous is not None:
            return await self.previous.sample(request)

        return await default_sampling(request)


class AgentAsker:
    """The asker of one agent's call: that agent, on the call's stream, when it can answer."""

    interactive = True

    def __init__(self, peer: Peer, via: InFlight | None, fallback: Asker) -> None:
        self.peer, self.via, self.fallback = peer, via, fallback

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        if not self.peer.can_elicit(request.mode):
            return await self.fallback.elicit(request)
        return await elicit_agent(self.peer, self.via, request)

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        if not self.peer.can_sample():
            return await self.fallback.sample(request)
        return await sample_agent(self.peer, self.via, request)


async def elicit_agent(peer: Peer, via: InFlight | None, request: ElicitationRequest) -> ElicitationAnswer:
    message = f"[{request.server}] {request.message}"
    params: Any
    if request.mode == "url":
        params = types.ElicitRequestURLParams(
            message=message, url=request.url or "", elicitation_id=request.elicitation_id or ""
        )
    else:
        # The server's own schema when orbmcp has it (every enum spelling kept), else rebuilt.
        schema = dict(request.schema) if request.schema is not None else form_schema(request.fields)
        params = types.ElicitRequestFormParams(message=message, requested_schema=schema)
    try:
        result = await peer.request(types.ElicitRequest(params=params), types.ElicitResult, via)
    except Exception as exc:  # the agent refused, left, or answered something else
        return ElicitationAnswer("cancel", reason=f"the agent did not answer: {_why(exc)}")
    return ElicitationAnswer(result.action, result.content)


async def sample_agent(peer: Peer, via: InFlight | None, request: SamplingRequest) -> SamplingAnswer:
    try:
        params = types.CreateMessageRequestParams.model_validate(dict(request.params))
        with_tools = bool(params.tools or params.tool_choice)
        kind = types.CreateMessageResultWithTools if with_tools else types.CreateMessageResult
        result = await peer.request(types.CreateMessageRequest(params=params), kind, via)
    except Exception as exc:
        return SamplingAnswer("reject", reason=f"the agent did not answer: {_why(exc)}")
    return SamplingAnswer("result", result.model_dump(mode="json", by_alias=True, exclude_none=True))


def _why(exc: Exception) -> str:
    if isinstance(exc, MCPError):
        return f"{exc.error.message} (code {exc.error.code})"[:300]
    return type(exc).__name__


def form_schema(fields: tuple[FormField, ...]) -> dict[str, Any]:
    """The form-mode ``requestedSchema`` of parsed fields (what ``parse_form`` read, bounded)."""
    properties: dict[str, Any] = {}
    for f in fields:
        prop: dict[str, Any] = {"title": f.title}
        if f.description:
            prop["description"] = f.description
        options = [{"const": c.value, "title": c.title} for c in f.choices]
        if f.kind == "choice":
            prop.update(type="string", oneOf=options)
        elif f.kind == "choices":
            prop.update(type="array", items={"anyOf": options})
            _put(prop, minItems=f.min_items, maxItems=f.max_items)
        elif f.kind == "string":
            prop["type"] = "string"
            _put(prop, format=f.format, minLength=f.min_length, maxLength=f.max_length)
        else:
            prop["type"] = f.kind
            _put(prop, minimum=f.minimum, maximum=f.maximum)
        _put(prop, default=f.default)
        properties[f.name] = prop
    required = [f.name for f in fields if f.required]
    return {"type": "object", "properties": properties, **({"required": required} if required else {})}


def _put(target: dict[str, Any], **values: Any) -> None:
    target.update({key: value for key, value in values.items() if value is not None})
