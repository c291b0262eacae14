"""One agent connected to a gateway (one MCP session downstream): what it can do and is doing.

The SDK builds a fresh ``ServerSession`` for every request; what lasts is the connection under
it, so a ``Peer`` lives in that connection's ``state`` and leaves with its ``exit_stack``.
Requests to the agent (elicitation, sampling, roots) ride the stream of a call of the agent's that
is in flight when there is one (on Streamable HTTP that is the POST the agent is reading), else
the connection's own channel.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from mcp.shared.message import ServerMessageMetadata

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.context import ServerRequestContext
    from mcp.server.session import ServerSession

_STATE_KEY = "orbmcp.serve.peer"
NOTIFY_TIMEOUT_S = 5.0
ROOTS_WAIT_S = 5.0
# notifications/message levels, least severe first (RFC 5424 names, as MCP uses them)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_activity = itertools.count(1)


@dataclass(eq=False)
class InFlight:
    """A call of the agent's to one server: the request whose stream server requests ride."""

    server: str
    session: ServerSession | None  # None on a one-agent wire: its own channel is the call's stream
    request_id: Any


@dataclass(eq=False)
class Peer:
    connection: Connection
    calls: list[InFlight] = field(default_factory=list)
    subscriptions: set[str] = field(default_factory=set)  # gateway resource URIs
    log_level: str = "debug"  # what the agent asked for with logging/setLevel (2025: all by default)
    last_active: int = 0
    # Set once the agent's roots were asked for (or it has none): its calls wait for it, so the
    # servers they reach already know the agent's roots.
    roots_known: anyio.Event = field(default_factory=anyio.Event)

    # -- what the agent declared -------------------------------------------------------------------

    @property
    def capabilities(self) -> Any:
        return self.connection.client_capabilities

    def can_elicit(self, mode: str = "form") -> bool:
        elicitation = getattr(self.capabilities, "elicitation", None)
        if elicitation is None:
            return False
        if mode == "url":
            return elicitation.url is not None
        # An empty elicitation object (2025-06-18 clients) means form mode.
        return elicitation.form is not None or elicitation.url is None

    def can_sample(self) -> bool:
        return getattr(self.capabilities, "sampling", None) is not None

    def has_roots(self) -> bool:
        return getattr(self.capabilities, "roots", None) is not None

    def wants_log(self, level: str) -> bool:
        try:
            return LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)
        except ValueError:
            return True

    # -- calls in flight -------------------------------------------------------------------------

    @contextmanager
    def calling(self, server: str, ctx: ServerRequestContext[Any, Any]) -> Iterator[InFlight]:
        call = InFlight(server, ctx.session, ctx.request_id)
        self.calls.append(call)
        self.touch()
        try:
            yield call
        finally:
            self.calls.remove(call)

    def call_to(self, server: str) -> InFlight | None:
        """The latest call in flight to ``server``, if any."""
        for call in reversed(self.calls):
            if call.server == server:
                return call
        return None

    def touch(self) -> None:
        self.last_active = next(_activity)

    async def roots_settled(self) -> None:
        """Until the agent's roots were asked for (bounded: an agent that never finishes its
        handshake is served with the roots the servers have)."""
        if not self.roots_known.is_set():
            with anyio.move_on_after(ROOTS_WAIT_S):
                await self.roots_known.wait()

    # -- talking to the agent ----------------------------------------------------------------------

    async def request(self, request: Any, result_type: type[Any], via: InFlight | None) -> Any:
        """Send a request to the agent and return its typed result (``MCPError`` on refusal)."""

        if via is not None and via.session is not None:
            return await via.session.send_request(
                request, result_type, metadata=ServerMessageMetadata(related_request_id=via.request_id)
            )
        return await self.connection.send_request(request, result_type=result_type)

    async def notify(self, notification: Any, via: InFlight | None = None) -> None:
        """Send a notification (an SDK model), on the stream of ``via`` when given. Best effort: one
        the agent cannot take in time, or after it left, is dropped."""
        with anyio.move_on_after(NOTIFY_TIMEOUT_S):
            try:
                if via is not None and via.session is not None:
                    await via.session.send_notification(notification, related_request_id=via.request_id)
                else:
                    data = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
                    await self.connection.notify(data["method"], data.get("params"))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The SDK connection under a request. ``ServerSession`` keeps it private; it is the one handle
    that outlives the request (mcp 2.3 pins this layout: pyproject allows <2.4)."""
    connection: Connection = ctx.session._connection
    return connection


def peer_of(ctx: ServerRequestContext[Any, Any], register: Callable[[Peer], Callable[[], None]]) -> Peer:
    """The peer of the connection under ``ctx``, made (and ``register``ed) on its first message;
    the callable ``register`` returns is run when the connection closes."""
    connection = connection_of(ctx)
    peer = connection.state.get(_STATE_KEY)
    if isinstance(peer, Peer):
        return peer
    peer = Peer(connection, last_active=next(_activity))
    connection.state[_STATE_KEY] = peer
    connection.exit_stack.callback(register(peer))
    return peer


def most_recent(peers: list[Peer]) -> Peer | None:
    best: Peer | None = None
    score = -math.inf
    for peer in peers:
        if peer.last_active > score:
            best, score = peer, peer.last_active
    return best
