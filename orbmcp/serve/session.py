"""``orbmcp serve`` with a session of its own (no daemon runs for the scope, or it declined).

The served servers start as the session opens: the eager ones, or every one named with
``--server`` (lazy ones too: naming a server asks for it). The agent's handshake is answered at
once; listings wait until each of those servers has had its first attempt (bounded by its
``timeoutMs``), so an agent's first ``tools/list`` sees them. Leaving (stdin EOF, SIGTERM, the
HTTP listener stopped) stops every server the session started, process trees included.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from orbmcp.errors import UsageError

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.serve.gateway import Gateway
    from orbmcp.serve.options import ServeOptions

Notify = Callable[[str, str], None]


def check_servers(config: ResolvedConfig, options: ServeOptions) -> None:
    from orbmcp.suggest import unknown_server

    for name in options.servers:
        if name not in config.servers:
            raise unknown_server(name, list(config.servers))


def check_names(gateway: Gateway) -> None:
    """Raw names must be unique among the served servers (and orbmcp's own tools)."""
    found = gateway.clashes()
    if found:
        raise UsageError(
            "; ".join(found[:5]) + (f" (+{len(found) - 5} more)" if len(found) > 5 else ""),
            hint="serve them with --names bridged, or choose servers with --server",
            reason="name_clash",
        )


@asynccontextmanager
async def unwrapped() -> AsyncIterator[None]:
    """Errors leave task groups as groups of one: give callers (the error boundary) the error."""
    from orbmcp.core.wire.era import unwrap_exception

    try:
        yield
    except BaseExceptionGroup as group:
        inner = unwrap_exception(group)
        if isinstance(inner, Exception) and not isinstance(inner, BaseExceptionGroup):
            raise inner from None
        raise


@asynccontextmanager
async def own_gateway(
    config: ResolvedConfig, options: ServeOptions, notify: Notify
) -> AsyncIterator[Gateway]:
    """A gateway over a session of its own, started as described above, stopped on exit."""
    from orbmcp.core.session.startup import first_attempts
    from orbmcp.serve.gateway import Gateway
    from orbmcp.serve.hub import Hub
    from orbmcp.session.persistent import PersistentSessions

    check_servers(config, options)
    names = list(options.servers) or [s.name for s in config.eager_servers() if options.serves(s.name)]
    sessions = PersistentSessions(config, interactive=False, start_eager=False, retries=True)
    async with unwrapped(), sessions, anyio.create_task_group() as tg:
        manager = await sessions.manager()
        hub = Hub.of(manager)  # before any server connects: they all offer their requests to agents
        settled = anyio.Event()

        async def start() -> None:
            try:
                await first_attempts(manager, names, notify)
            finally:
                settled.set()

        tg.start_soon(start)
        gateway = Gateway(
            hub, sessions, options, ready=settled.wait, report=lambda message: notify(message, "warning")
        )
        async with gateway.running():
            if options.names == "raw":
                await settled.wait()
                check_names(gateway)
            yield gateway
        tg.cancel_scope.cancel()


async def serve_stdio(gateway: Gateway) -> None:
    """Serve one agent on this process's stdin and stdout until stdin ends."""
    import os

    from orbmcp.core.processes.pipes import PipeReceiveStream, PipeSendStream, claimed_stdio
    from orbmcp.serve.gateway import serve_stream
    from orbmcp.serve.lane import FastLane
    from orbmcp.serve.wire import message_streams

    with claimed_stdio() as (wire_in, wire_out):
        receive, send = PipeReceiveStream(os.dup(wire_in)), PipeSendStream(os.dup(wire_out))
        try:
            async with message_streams(receive, send, lane=FastLane(gateway)) as (read, write):
                await serve_stream(gateway, read, write)
        finally:
            receive.close_now()
            send.close_now()
