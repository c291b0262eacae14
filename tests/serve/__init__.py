"""Helpers of the serve tests: a gateway in this process, real clients, notices.

``http_gateway(config)`` runs ``orbmcp serve --http`` in the test's event loop (its own session over
the servers the config names, a listener on 127.0.0.1:0) and yields where it listens and its token;
``agent(served, ...)`` is the SDK's ``Client`` on it. ``memory_gateway(config)`` is the same gateway
without a listener, for ``tests.memory.memory_agent``: the agent's messages over in-memory streams,
for the tests whose subject is what serve relays, not HTTP. ``Notices`` records what an agent is told.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from orbmcp.config.model import ResolvedConfig
from orbmcp.serve.gateway import Gateway
from orbmcp.serve.http import bound_address, listen, serve_http
from orbmcp.serve.options import HttpAddress, ServeOptions
from orbmcp.serve.session import own_gateway
from orbmcp.serve.token import load_or_create
from tests.core.live import FAST_GRACE_S, load, stdio_entry, write_config
from tests.memory import installed
from tests.timeouts import scaled

OWN_TOOL_NAMES = [
    "mcp_status",
    "mcp_connect",
    "mcp",
    "mcp_server",
    "mcp_start",
    "mcp_stop",
    "mcp_auth",
    "mcp_reconnect",
]


def config(tmp_path: Path, **servers: dict[str, Any]) -> Path:
    """``tmp_path/mcp.json`` naming ``servers``."""
    return write_config(tmp_path / "mcp.json", servers)


def everything_entry(*args: str, **extra: Any) -> dict[str, Any]:
    return stdio_entry("everything", "--list-changed", *args, **extra)


@dataclass
class Gatewayed:
    gateway: Gateway
    notices: list[tuple[str, str]]  # what the gateway told its user: (level, message)


@dataclass
class Served(Gatewayed):
    url: str
    token: str


@asynccontextmanager
async def _own(resolved: ResolvedConfig, options: ServeOptions | None) -> AsyncIterator[Gatewayed]:
    notices: list[tuple[str, str]] = []
    async with own_gateway(
        resolved, options or ServeOptions(), lambda m, lvl: notices.append((lvl, m))
    ) as gw:
        gw.manager.runtime.stdin_grace_s = FAST_GRACE_S
        gw.manager.runtime.term_grace_s = FAST_GRACE_S
        yield Gatewayed(gw, notices)


@asynccontextmanager
async def http_gateway(config: Path, options: ServeOptions | None = None) -> AsyncIterator[Served]:
    resolved = load(config)
    sock = listen(HttpAddress("127.0.0.1", 0), allow_remote=False)
    token = load_or_create(resolved.global_dir)
    bound = bound_address(sock, HttpAddress("127.0.0.1", 0))
    try:
        async with _own(resolved, options) as own, anyio.create_task_group() as tg:
            tg.start_soon(serve_http, own.gateway, sock, bound, token)
            yield Served(own.gateway, own.notices, bound.url, token)
            tg.cancel_scope.cancel()
    finally:
        sock.close()


@asynccontextmanager
async def memory_gateway(config: Path, options: ServeOptions | None = None) -> AsyncIterator[Gatewayed]:
    """The gateway ``serve`` runs, with no listener: agents come through ``memory_agent``."""
    with installed():  # the config's memory_entry servers, in this loop too
        async with _own(load(config), options) as own:
            yield own


@dataclass
class Notices:
    """What an agent was told, by method, each wait bounded."""

    seen: list[Any] = field(default_factory=list)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    async def __call__(self, message: Any) -> None:
        if not isinstance(message, Exception):
            self.seen.append(message)
            self._changed.set()
            self._changed = anyio.Event()

    def methods(self) -> list[str]:
        return [getattr(m, "method", "") for m in self.seen]

    def count(self, method: str) -> int:
        return self.methods().count(method)

    async def wait_for(self, predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        with anyio.fail_after(scaled(timeout)):
            while not predicate():
                await self._changed.wait()
        assert predicate(), what

    async def wait_count(self, method: str, count: int, timeout: float = 30.0) -> None:
        await self.wait_for(lambda: self.count(method) >= count, f"{count} x {method}", timeout)


@asynccontextmanager
async def agent(served: Served, *, token: str | None = None, **kwargs: Any) -> AsyncIterator[Client]:
    """The SDK ``Client`` of an agent on the gateway (``token`` replaces the right one)."""
    headers = {"Authorization": f"Bearer {token if token is not None else served.token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(scaled(30), read=scaled(300))) as http,
        Client(streamable_http_client(served.url, http_client=http), **kwargs) as client,
    ):
        yield client


def names(listing: Any) -> list[str]:
    return [t.name for t in listing.tools]


def tool_named(listing: Any, tool: str) -> Any:
    """The listed tool whose server-side name is ``tool`` (bridged or raw)."""
    pattern = re.compile(rf"(.*__)?{re.escape(tool)}(_[0-9a-f]{{8}})?")
    found = [t for t in listing.tools if pattern.fullmatch(t.name) and (t.name == tool or "__" in t.name)]
    assert len(found) == 1, (tool, names(listing))
    return found[0]
