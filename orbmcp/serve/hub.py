"""What every gateway over one session shares: change notices, server requests, listings, subscriptions.

One ``Hub`` per ``Manager``, made by the first gateway that needs it (``Hub.of``). It hears the
session's tool registry, state changes and server notifications, and passes each to the gateways
serving that server. It is the session's front for the questions servers ask (``HubAsker``: an
agent that declared the capability, preferring the one whose call to that server is in flight,
else the front that answered before serve attached), and it gives the servers the roots of the
agent that last declared roots. It keeps each server's prompt and resource listings until they
change, and one upstream subscription per resource however many agents subscribed.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPDeprecationWarning

from orbmcp.core.capabilities.roots import Root
from orbmcp.core.session.state import State
from orbmcp.core.tooling import calls
from orbmcp.core.tooling.calls import subscribe_resource
from orbmcp.errors import OrbError
from orbmcp.log import log_event
from orbmcp.serve.asker import HubAsker
from orbmcp.serve.peer import InFlight, Peer, most_recent

if TYPE_CHECKING:
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.runtime import Watched
    from orbmcp.core.session.supervisor import Supervisor
    from orbmcp.core.tooling.registry import BridgedTool

KINDS = ("prompts", "resources", "templates")
MAX_ROOTS = 100  # an agent's roots passed on to servers
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
        self._roots_from: Peer | None = None  # the agent whose roots the servers are told
        self.asker = HubAsker(self, manager.runtime.asker)

    @classmethod
    def of(cls, manager: Manager) -> Hub:
        """The hub of ``manager``, attached on first use. Sampling and roots are advertised to
        servers that connect from then on (an agent may answer sampling and give roots;
        connections made before keep what they declared)."""
        hub = _HUBS.get(manager)
        if hub is None:
            hub = _HUBS[manager] = cls(manager)
            hub._attach()
        return hub

    def _attach(self) -> None:
        runtime = self.manager.runtime
        runtime.asker = self.asker
        runtime.features = replace(runtime.features, sampling=True)
        runtime.agent_front = True
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

    def _state_changed(self, sup: Watched, old: State, new: State) -> None:
        if State.READY not in (old, new):
            return
        for kind in KINDS:
            self._invalidate(sup.name, kind)
        self._fan(sup.name, ("prompts", "resources"))
        if new == State.READY and any(server == sup.name for server, _ in self._subscribers):
            self.manager.runtime.task_group().start_soon(self._resubscribe, sup.name)

    def _notified(self, server: str, notification: Any) -> None:
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
        """A peer left: drop its subscriptions (the last one of a resource ends it upstream); the
        servers lose its roots."""
        if peer is self._roots_from:
            self._roots_from = None
            self._set_roots(None)
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

    # -- questions and roots --------------------------------------------------------------------

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

    async def agent_roots_changed(self, peer: Peer) -> None:
        """Ask ``peer`` for its roots (it declared roots, and just started or said they changed):
        they become the servers' roots, and each server whose roots changed is told."""

        try:
            if not peer.has_roots():
                return
            try:
                result = await peer.request(types.ListRootsRequest(), types.ListRootsResult, None)
            except Exception as exc:  # an agent that cannot say keeps the roots the servers have
                log_event("serve.agent_roots_failed", level="warn", reason=type(exc).__name__)
                return
            roots = tuple(Root(str(r.uri), r.name) for r in result.roots[:MAX_ROOTS])
            self._roots_from = peer
            self._set_roots(roots)
        finally:
            peer.roots_known.set()

    def _set_roots(self, roots: tuple[Root, ...] | None) -> None:
        runtime = self.manager.runtime
        sups = list(self.manager.supervisors.values())
        before = [runtime.roots_for(sup.cfg) for sup in sups]
        runtime.agent_roots = roots
        for sup, old in zip(sups, before, strict=True):
            if runtime.roots_for(sup.cfg) != old:
                sup.roots_changed()


@contextmanager
def _sdk_deprecations_quiet() -> Iterator[None]:
    """The SDK warns that 2026-07-28 removed subscriptions and roots notices; 2025-era servers,
    which are the only ones asked, still use them."""

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


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
    if kind == "prompts":
        return await calls.list_prompts(sup)
    if kind == "resources":
        return await calls.list_resources(sup)
    return await calls.list_resource_templates(sup)
