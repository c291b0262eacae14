"""What every gateway over one session shares: change notices, server requests, listings, subscriptions.

One ``Hub`` per ``Manager``, made by the first gateway that needs it (``Hub.of``). It hears the
session's tool registry, state changes and server notifications, and passes each to the gateways
serving that server. It answers the requests servers send to their client: an elicitation,
sampling or roots request goes to an agent that declared the capability (preferring the one
whose call to that server is in flight), else to whatever answered before serve attached (the
other fronts), else it is refused as not supported. It keeps each server's prompt and resource
listings until they change, and one upstream subscription per resource however many agents
subscribed.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from orbmcp.errors import OrbError
from orbmcp.log import log_event
from orbmcp.serve.peer import InFlight, Peer, most_recent

if TYPE_CHECKING:
    from orbmcp.core.manager import Manager
    from orbmcp.core.state import State
    from orbmcp.core.supervisor import Supervisor
    from orbmcp.core.tools import BridgedTool

KINDS = ("prompts", "resources", "templates")
_HUBS: weakref.WeakKeyDictionary[Manager, Hub] = weakref.WeakKeyDictionary()


class GatewaySide(Protocol):
    """What the hub needs of a gateway."""

    peers: list[Peer]

    def serves(self, server: str) -> bool: ...

    def changed(self, kinds: Iterable[str]) -> None: ...

    def log(self, server: str, params: Any) -> None: ...

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None: ...


class Hub:
    def __init__(self, manager: Manager) -> None:
        self.manager = manager
        self.gateways: list[GatewaySide] = []
        self._listings: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._generation: dict[tuple[str, str], int] = {}
        self._locks: dict[tuple[str, str], anyio.Lock] = {}
        # (server, upstream URI) -> each subscribed peer, with its gateway and the URI it knows
        self._subscribers: dict[tuple[str, str], dict[Peer, tuple[GatewaySide, str]]] = {}
        runtime = manager.runtime
        self._previous = (runtime.elicitation, runtime.sampling, runtime.list_roots)

    @classmethod
    def of(cls, manager: Manager) -> Hub:
        """The hub of ``manager``, attached on first use. Servers that connect from then on offer
        their requests to the agents (elicitation, sampling, roots); connections made before keep
        what they declared."""
        hub = _HUBS.get(manager)
        if hub is None:
            hub = _HUBS[manager] = cls(manager)
            hub._attach()
        return hub

    def _attach(self) -> None:
        runtime = self.manager.runtime
        runtime.elicitation = self._elicit
        runtime.sampling = self._sample
        runtime.list_roots = self._roots
        runtime.state_listeners.append(self._state_changed)
        runtime.notification_listeners.append(self._notified)
        self.manager.tools.add_listener(self)

    # -- fan-out -----------------------------------------------------------------------------------

    def _fan(self, server: str, kinds: Iterable[str]) -> None:
        kinds = tuple(kinds)
        for gateway in list(self.gateways):
            if gateway.serves(server):
                gateway.changed(kinds)

    def tool_registered(self, tool: BridgedTool) -> None:
        self._fan(tool.server, ("tools",))

    def tool_activation(self, tool: BridgedTool, active: bool) -> None:
        self._fan(tool.server, ("tools",))

    def tools_synced(self, server: str) -> None:
        self._fan(server, ("tools",))

    def _state_changed(self, sup: Supervisor, old: State, new: State) -> None:
        from orbmcp.core.state import State

        if State.READY not in (old, new):
            return
        for kind in KINDS:
            self._invalidate(sup.name, kind)
        self._fan(sup.name, ("prompts", "resources"))
        if new == State.READY and any(server == sup.name for server, _ in self._subscribers):
            self.manager.runtime.task_group().start_soon(self._resubscribe, sup.name)

    def _notified(self, server: str, notification: Any) -> None:
        import mcp_types as types

        if isinstance(notification, types.ResourceUpdatedNotification):
            uri = notification.params.uri
            for peer, (gateway, known_as) in list(self._subscribers.get((server, str(uri)), {}).items()):
                params = types.ResourceUpdatedNotificationParams(uri=known_as)
                gateway.spawn(peer.notify, types.ResourceUpdatedNotification(params=params))
        elif isinstance(notification, types.ResourceListChangedNotification):
            self._invalidate(server, "resources")
            self._invalidate(server, "templates")
            self._fan(server, ("resources",))
        elif isinstance(notification, types.PromptListChangedNotification):
            self._invalidate(server, "prompts")
            self._fan(server, ("prompts",))
        elif isinstance(notification, types.LoggingMessageNotification):
            for gateway in list(self.gateways):
                if gateway.serves(server):
                    gateway.log(server, notification.params)

    # -- listings ----------------------------------------------------------------------------------

    def _invalidate(self, server: str, kind: str) -> None:
        key = (server, kind)
        self._listings.pop(key, None)
        self._generation[key] = self._generation.get(key, 0) + 1

    async def listing(self, server: str, kind: str) -> list[dict[str, Any]]:
        """The server's prompts, resources or resource templates (wire JSON), fetched once per
        change; [] when it is not connected, offers none, or failed to list them."""
        key = (server, kind)
        cached = self._listings.get(key)
        if cached is not None:
            return cached
        sup = self.manager.supervisors.get(server)
        if sup is None or not sup.connected or not _offers(sup, kind):
            return []
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            cached = self._listings.get(key)
            if cached is not None:
                return cached
            generation = self._generation.get(key, 0)
            try:
                items = await _fetch(sup, kind)
            except OrbError as err:
                log_event("serve.listing_failed", level="warn", server=server, reason=err.reason)
                return []
            if self._generation.get(key, 0) == generation:
                self._listings[key] = items
            return items

    # -- subscriptions ---------------------------------------------------------------------------

    async def subscribe(self, peer: Peer, gateway: GatewaySide, server: str, uri: str, known_as: str) -> None:
        subscribers = self._subscribers.setdefault((server, uri), {})
        first = not subscribers
        subscribers[peer] = (gateway, known_as)
        peer.subscriptions.add(known_as)
        if first:
            try:
                await self._upstream_subscription(server, uri, subscribe=True)
            except BaseException:
                subscribers.pop(peer, None)
                peer.subscriptions.discard(known_as)
                if not subscribers:
                    del self._subscribers[(server, uri)]
                raise

    async def unsubscribe(self, peer: Peer, server: str, uri: str, known_as: str) -> None:
        peer.subscriptions.discard(known_as)
        subscribers = self._subscribers.get((server, uri))
        if subscribers is None or subscribers.pop(peer, None) is None or subscribers:
            return
        del self._subscribers[(server, uri)]
        try:
            await self._upstream_subscription(server, uri, subscribe=False)
        except OrbError:
            pass  # the server forgets subscriptions of a connection that ends anyway

    def forget(self, peer: Peer) -> None:
        """A peer left: drop its subscriptions (the last one of a resource ends it upstream)."""
        for (server, uri), subscribers in list(self._subscribers.items()):
            if subscribers.pop(peer, None) is not None and not subscribers:
                del self._subscribers[(server, uri)]
                tg = self.manager.runtime.tg
                if tg is not None:
                    tg.start_soon(self._quietly_unsubscribe, server, uri)

    async def _quietly_unsubscribe(self, server: str, uri: str) -> None:
        try:
            await self._upstream_subscription(server, uri, subscribe=False)
        except OrbError:
            pass

    async def _upstream_subscription(self, server: str, uri: str, *, subscribe: bool) -> None:
        """Subscribe (or stop) upstream when the server offers subscriptions on a 2025-era session;
        otherwise the agent's subscription is kept here and simply never fires."""
        from orbmcp.core.calls import subscribe_resource

        sup = self.manager.get(server)
        if not sup.connected or not _can_subscribe(sup):
            return
        with _sdk_deprecations_quiet():
            await subscribe_resource(sup, uri, subscribe=subscribe)

    async def _resubscribe(self, server: str) -> None:
        """A server reconnected: its new session knows none of the agents' subscriptions."""
        for key_server, uri in list(self._subscribers):
            if key_server == server:
                try:
                    await self._upstream_subscription(server, uri, subscribe=True)
                except OrbError as err:
                    log_event("serve.resubscribe_failed", level="warn", server=server, reason=err.reason)

    # -- requests from servers -------------------------------------------------------------------

    def server_of(self, context: Any) -> str | None:
        """The server whose SDK session a request came from."""
        session = getattr(context, "session", None)
        for name, sup in list(self.manager.supervisors.items()):
            client = sup.client
            if client is not None and client.session is session:
                return name
        return None

    def route(
        self, server: str | None, capable: Callable[[Peer], bool]
    ) -> tuple[Peer, InFlight | None] | None:
        """The agent to ask for ``server``: one calling that server now if any, else the one most
        recently active; only agents ``capable`` of the request."""
        peers = [
            peer
            for gateway in self.gateways
            if server is None or gateway.serves(server)
            for peer in gateway.peers
            if capable(peer)
        ]
        calling = [peer for peer in peers if server is not None and peer.call_to(server) is not None]
        chosen = most_recent(calling) or most_recent(peers)
        if chosen is None:
            return None
        return chosen, chosen.call_to(server) if server is not None else None

    async def _elicit(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        server = self.server_of(context)
        mode = getattr(params, "mode", None) or "form"
        target = self.route(server, lambda peer: peer.can_elicit(mode))
        if target is None:
            return await _fallback(self._previous[0], "elicitation/create", context, params)
        peer, via = target
        if server is not None:  # the person must know which server asks
            params = params.model_copy(update={"message": f"[{server}] {params.message}"})
        return await _ask(peer, types.ElicitRequest(params=params), types.ElicitResult, via)

    async def _sample(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        target = self.route(self.server_of(context), Peer.can_sample)
        if target is None:
            return await _fallback(self._previous[1], "sampling/createMessage", context, params)
        peer, via = target
        with_tools = bool(params.tools or params.tool_choice)
        result = types.CreateMessageResultWithTools if with_tools else types.CreateMessageResult
        return await _ask(peer, types.CreateMessageRequest(params=params), result, via)

    async def _roots(self, context: Any) -> Any:
        import mcp_types as types

        target = self.route(self.server_of(context), Peer.has_roots)
        if target is None:
            return await _fallback(self._previous[2], "roots/list", context)
        peer, via = target
        return await _ask(peer, types.ListRootsRequest(), types.ListRootsResult, via)

    async def roots_changed(self) -> None:
        """An agent's roots changed: tell every connected server (they ask again)."""
        for sup in list(self.manager.supervisors.values()):
            client = sup.client
            if client is None or not sup.connected:
                continue
            try:
                with _sdk_deprecations_quiet():
                    await client.session.send_roots_list_changed()
            except Exception as exc:  # one server's broken pipe must not keep the others from hearing
                log_event(
                    "serve.roots_notice_failed", level="warn", server=sup.name, reason=type(exc).__name__
                )


@contextmanager
def _sdk_deprecations_quiet() -> Iterator[None]:
    """The SDK warns that 2026-07-28 removed subscriptions and roots notices; 2025-era servers,
    which are the only ones asked, still use them."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


async def _ask(peer: Peer, request: Any, result_type: type[Any], via: InFlight | None) -> Any:
    """Forward a server's request to the agent; the agent's refusal goes back as an error."""
    import mcp_types as types
    from mcp import MCPError

    try:
        return await peer.request(request, result_type, via)
    except MCPError as exc:
        return exc.error
    except Exception as exc:  # the agent left, or answered something that is not a result
        return types.ErrorData(
            code=types.INTERNAL_ERROR, message=f"the agent did not answer: {type(exc).__name__}"
        )


async def _fallback(previous: Any, method: str, *args: Any) -> Any:
    if previous is not None:
        return await previous(*args)
    import mcp_types as types

    return types.ErrorData(
        code=types.METHOD_NOT_FOUND, message=f"{method} is not available: no connected agent supports it"
    )


def _offers(sup: Supervisor, kind: str) -> bool:
    capabilities = getattr(sup.client, "server_capabilities", None)
    if kind == "prompts":
        return getattr(capabilities, "prompts", None) is not None
    return getattr(capabilities, "resources", None) is not None


def _can_subscribe(sup: Supervisor) -> bool:
    resources = getattr(getattr(sup.client, "server_capabilities", None), "resources", None)
    era = sup.snap.protocol_version or ""
    return bool(getattr(resources, "subscribe", False)) and era < "2026"


async def _fetch(sup: Supervisor, kind: str) -> list[dict[str, Any]]:
    from orbmcp.core import calls

    if kind == "prompts":
        return await calls.list_prompts(sup)
    if kind == "resources":
        return await calls.list_resources(sup)
    return await calls.list_resource_templates(sup)
