"""SDK servers in the test's own event loop, over the SDK's in-memory message streams.

For the tests whose subject is what orbmcp does with a server's answers, not the server's process:
no interpreter start, no pipes, the same JSON-RPC messages (the SDK's ``Server.run`` loop, the one
the stdio scripts run). Tests about processes, pipes and HTTP keep real ones (``launch.py``).

- ``memory_entry("everything", "--list-changed")`` is a config entry served in-process inside
  ``installed()`` (the ``in_memory`` fixture in ``tests/conftest.py`` is one): a URL on the
  reserved ``.invalid`` host, which the installed transport answers with the server ``SERVERS``
  builds; every other URL goes over Streamable HTTP as before. orbmcp's own code is unchanged:
  the transport registry (``orbmcp.core.wire.transports.TRANSPORTS``) is its one place to add a
  way of reaching a server. Only in-process sessions see it: an ``orbmcp`` process given such an
  entry fails to resolve the host.
- A tool that ends its server's process (everything's ``crash``) is left out in memory: it would
  end the test's.
- ``memory_agent(gateway)`` is an agent's SDK ``Client`` on a ``serve`` gateway over the same
  streams: ``serve_stream``, what ``serve --stdio`` runs inside its line framing and fast lane
  (``serve/wire.py``, ``serve/lane.py``), which these tests do not go through
  (``tests/serve/test_lane.py`` and ``test_stdio.py`` do).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.server import Server
from mcp.shared.memory import create_client_server_memory_streams

from orbmcp.config.transports import STREAMABLE_HTTP, TransportKind
from orbmcp.core.wire.transports import Dial, Opened, ServerTransport
from orbmcp.serve.gateway import Gateway, serve_stream
from tests.servers import everything, paged, reference
from tests.timeouts import HANG_GUARD_S

MEMORY_HOST = "memory.invalid"  # RFC 2606: never resolves, so a URL of it reaches no network

ServerLoop = Callable[[Any, Any], Awaitable[None]]  # serves one client on (read, write) until EOF


def _takes(server: str, argv: list[str], *known: str) -> None:
    unknown = set(argv) - set(known)
    assert not unknown, f"{server}.py in memory takes only {known or 'no arguments'}, not {unknown}"


def _everything(argv: list[str]) -> ServerLoop:
    _takes("everything", argv, "--list-changed")
    server = everything.build_server(list_changed="--list-changed" in argv)
    server.remove_tool("crash")
    return run_server(server._lowlevel_server)


def _reference(argv: list[str]) -> ServerLoop:
    _takes("reference", argv)
    return reference.serve_streams


# The test servers in memory, by script name, from the script's own arguments.
SERVERS: dict[str, Callable[[list[str]], ServerLoop]] = {
    "everything": _everything,
    "paged": lambda argv: run_server(paged.from_argv(argv)),
    "reference": _reference,
}


def memory_entry(server: str, *argv: str, **entry: Any) -> dict[str, Any]:
    """The config entry of ``tests/servers/<server>.py`` with these arguments, served in memory;
    ``entry`` are further entry keys (``lifecycle="lazy"``)."""
    query = urlencode([("arg", arg) for arg in argv])
    url = f"http://{MEMORY_HOST}/{server}" + (f"?{query}" if query else "")
    return {"url": url, "transport": STREAMABLE_HTTP.name, **entry}


@asynccontextmanager
async def streams_to(run: ServerLoop) -> AsyncIterator[TransportStreams]:
    """The client's end of a stream pair whose server end ``run`` serves until it reads EOF."""
    done = anyio.Event()

    async def serve(read: Any, write: Any) -> None:
        try:
            await run(read, write)
        finally:
            done.set()

    async with create_client_server_memory_streams() as (client, server), anyio.create_task_group() as tg:
        tg.start_soon(serve, *server)
        try:
            yield client
        finally:
            with anyio.CancelScope(shield=True):
                await client[1].aclose()  # EOF: the server's loop ends by itself
                with anyio.fail_after(HANG_GUARD_S):  # a server loop must end on EOF
                    await done.wait()


def run_server(server: Server[Any]) -> ServerLoop:
    async def run(read: Any, write: Any) -> None:
        await server.run(read, write, server.create_initialization_options())

    return run


class MemoryTransport:
    """Streamable HTTP, except that a URL on ``MEMORY_HOST`` is served in this event loop."""

    kind: TransportKind = STREAMABLE_HTTP
    throttles_itself = False

    def __init__(self, network: ServerTransport) -> None:
        self.network = network
        self.opened: list[str] = []  # the in-memory servers connected, in order

    async def open(self, dial: Dial) -> Opened:
        url = urlsplit(dial.cfg.url or "")
        if url.hostname != MEMORY_HOST:
            return await self.network.open(dial)
        name = url.path.strip("/")
        self.opened.append(name)
        argv = [value for key, value in parse_qsl(url.query, keep_blank_values=True) if key == "arg"]
        return Opened(streams_to(SERVERS[name](argv)))


@contextmanager
def installed() -> Iterator[MemoryTransport]:
    """``MemoryTransport`` in this process's transport registry until the block ends (the one
    already there, in a block inside another)."""
    from orbmcp.core.wire.transports import TRANSPORTS

    name = MemoryTransport.kind.name
    current = TRANSPORTS[name]
    if isinstance(current, MemoryTransport):
        yield current
        return
    transport = TRANSPORTS[name] = MemoryTransport(current)
    try:
        yield transport
    finally:
        TRANSPORTS[name] = current


@asynccontextmanager
async def memory_agent(gateway: Gateway, **kwargs: Any) -> AsyncIterator[Client]:
    """An agent's SDK ``Client`` on ``gateway`` (``serve_stream``, without stdio's framing)."""

    async def run(read: Any, write: Any) -> None:
        await serve_stream(gateway, read, write)

    async with Client(streams_to(run), **kwargs) as client:
        yield client
