"""A gateway: one MCP server, over one session, for any number of agents (``Peer``s).

It is built from ``ServeOptions`` on a ``PersistentSessions`` (the daemon's live one, or serve's
own) and the session's ``Hub``. Its SDK ``Server`` speaks the handshake protocol era (2025-11-25
and older): ``server/discover`` is refused, so a 2026-07-28 client falls back to ``initialize`` as
the spec tells it to, and the requests serve forwards from servers to agents (elicitation,
sampling, roots) keep their meaning. Changes (tools, prompts, resources) are coalesced and sent
to every agent as ``notifications/*/list_changed``.

    async with gateway.running():
        await serve_loop(gateway.server, read, write, lifespan_state={}, init_options=gateway.init_options)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from orbmcp.serve import naming
from orbmcp.serve.peer import Peer, peer_of

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.tooling.registry import BridgedTool
    from orbmcp.serve.hub import Hub
    from orbmcp.serve.options import ServeOptions
    from orbmcp.session.persistent import PersistentSessions

_NOTICES = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


class Gateway:
    def __init__(
        self,
        hub: Hub,
        sessions: PersistentSessions,
        options: ServeOptions,
        *,
        ready: Callable[[], Awaitable[None]] | None = None,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.hub = hub
        self.sessions = sessions
        self.options = options
        self.peers: list[Peer] = []
        self.names = naming.ToolNames(options.names, options.prefix, self._name_problem)
        self._report = report
        self._ready = ready
        self._index: dict[str, BridgedTool] | None = None
        self._listing: list[dict[str, Any]] | None = None
        self._dirty: set[str] = set()
        self._wake = anyio.Event()
        self._tg: TaskGroup | None = None
        from orbmcp.serve.server import build_server

        self.server = build_server(self)

    # -- the session -------------------------------------------------------------------------------

    @property
    def manager(self) -> Manager:
        return self.hub.manager

    @property
    def config(self) -> ResolvedConfig:
        return self.sessions.config

    def serves(self, server: str) -> bool:
        return self.options.serves(server) and server in self.config.servers

    def served_names(self) -> list[str]:
        """The served servers, in configuration order."""
        return [name for name in self.config.servers if self.options.serves(name)]

    async def ready(self) -> None:
        """Until the servers serve started have had their first attempt (listings wait for it)."""
        if self._ready is not None:
            await self._ready()

    # -- tools ---------------------------------------------------------------------------------------

    def _name_problem(self, message: str) -> None:
        """A raw name another server already serves, or one outside the MCP rules (``naming``)."""
        from orbmcp import log

        log.log_event("serve.name_problem", level="warn", message=message)
        if self._report is not None:
            self._report(message)

    def _tools(self) -> Iterable[BridgedTool]:
        """The served servers' tools an agent's model may call (app-only tools are for a host's UI)."""
        registry = self.manager.tools
        for server in self.served_names():
            yield from (tool for tool in registry.for_server(server) if not tool.app_only)

    def tool(self, name: str) -> BridgedTool | None:
        """The present tool behind a gateway name (active or not: a call then says why it failed)."""
        if self._index is None:
            from orbmcp.serve.tools import OWN_TOOLS

            self._index = self.names.index(self._tools(), OWN_TOOLS)
        return self._index.get(name)

    def tool_listing(self) -> list[dict[str, Any]]:
        if self._listing is None:
            from orbmcp.serve.tools import own_listing

            self.tool("")  # build the index
            assert self._index is not None
            own = own_listing(self)
            self._listing = own + [naming.tool_wire(n, t) for n, t in self._index.items() if t.active]
        return self._listing

    def clashes(self) -> list[str]:
        """In raw mode: names two served servers (or a server and orbmcp) both offer."""
        if self.options.names != "raw":
            return []
        from orbmcp.serve.tools import OWN_TOOLS

        registry = self.manager.tools
        names = {server: [t.name for t in registry.for_server(server)] for server in self.served_names()}
        return naming.clashes(names, OWN_TOOLS, "tool")

    # -- agents ------------------------------------------------------------------------------------

    def peer(self, ctx: Any) -> Peer:
        return peer_of(ctx, self._register)

    def negotiated_version(self, session_id: str) -> str | None:
        """The protocol version agreed with the agent of an HTTP session."""
        for peer in self.peers:
            if peer.connection.session_id == session_id:
                return peer.connection.protocol_version
        return None

    def _register(self, peer: Peer) -> Callable[[], None]:
        self.peers.append(peer)

        def leave() -> None:
            if peer in self.peers:
                self.peers.remove(peer)
            self.hub.forget(peer)

        return leave

    # -- changes -------------------------------------------------------------------------------------

    def changed(self, kinds: Iterable[str]) -> None:
        kinds = set(kinds)
        if "tools" in kinds:
            self._index = None
            self._listing = None
        self._dirty |= kinds
        self._wake.set()

    def log(self, server: str, params: Any) -> None:
        """A server's log message: to each agent that wants its level, on the stream of its call to
        that server when one is in flight."""
        import mcp_types as types

        level = str(getattr(params, "level", "info"))
        for peer in list(self.peers):
            if peer.wants_log(level):
                self.spawn(peer.notify, types.LoggingMessageNotification(params=params), peer.call_to(server))

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._tg is not None:
            self._tg.start_soon(fn, *args)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Gateway]:
        """Hear the session's changes and pass them on while the block runs."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self.hub.gateways.append(self)
            tg.start_soon(self._flush_forever)
            try:
                yield self
            finally:
                self.hub.gateways.remove(self)
                self._tg = None
                tg.cancel_scope.cancel()

    async def _flush_forever(self) -> None:
        # One pass per wake-up: a reconnect that toggles ten thousand tools sends one notice.
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await anyio.lowlevel.checkpoint()
            kinds, self._dirty = self._dirty, set()
            for peer in list(self.peers):
                for kind in sorted(kinds):
                    self.spawn(peer.connection.notify, _NOTICES[kind], None)

    @property
    def init_options(self) -> Any:
        return self.server.create_initialization_options()


async def serve_stream(gateway: Gateway, read: Any, write: Any) -> None:
    """Serve one agent's connection (a stream pair of SDK messages) until it closes."""
    from mcp.server.runner import serve_loop

    await serve_loop(gateway.server, read, write, lifespan_state={}, init_options=gateway.init_options)


__all__ = ["Gateway", "serve_stream"]
