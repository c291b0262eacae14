"""One module per transport behind one interface: the registry covers every kind, and connect opens
each server through the transport its entry's kind names (stdio over a real process, Streamable
HTTP and legacy SSE over real uvicorn servers on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from orbmcp.config import transports as kinds
from orbmcp.core.session.state import State
from orbmcp.core.wire import transports
from orbmcp.core.wire.era import EraCache
from orbmcp.core.wire.transports import Dial, Opened, ServerTransport
from tests.core.live import load, managed, raw_entry, write_config
from tests.servers.launch import http_server


class Counting:
    """A registered transport, wrapped: every attempt it opens is counted by name."""

    def __init__(self, inner: ServerTransport, opened: list[str]) -> None:
        self.inner, self.opened = inner, opened
        self.kind = inner.kind
        self.throttles_itself = inner.throttles_itself

    async def open(self, dial: Dial) -> Opened:
        self.opened.append(self.kind.name)
        return await self.inner.open(dial)


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    for name, transport in list(transports.TRANSPORTS.items()):
        monkeypatch.setitem(transports.TRANSPORTS, name, Counting(transport, opened))
    return opened


def test_every_kind_has_its_transport_and_every_transport_its_kind() -> None:
    assert set(transports.TRANSPORTS) == set(kinds.KINDS)
    for name, transport in transports.TRANSPORTS.items():
        assert transport.kind is kinds.KINDS[name]
        assert transport.__module__.rpartition(".")[2] == name.replace("-", "_")  # one module each
    assert [k.name for k in kinds.KINDS.values() if k.local] == ["stdio"]
    assert kinds.BY_OPTION.keys() == {"stdio", "http", "sse"}


@pytest.mark.parametrize(
    ("spelled", "name"),
    [("stdio", "stdio"), ("HTTP", "streamable-http"), ("streamableHttp", "streamable-http"), ("sse", "sse")],
)
def test_other_clients_spellings_name_one_kind(spelled: str, name: str) -> None:
    kind = kinds.from_spelling(spelled)
    assert kind is not None and kind.name == name
    assert kinds.from_spelling("websocket") is None
    assert kinds.spellings_text() == "stdio, http (streamable-http) or sse"


async def test_connect_opens_each_entry_over_its_kinds_transport(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = counting(monkeypatch)
    async with http_server(["--sse", "0"]) as sse, http_server() as http:
        config = write_config(
            tmp_path / "mcp.json",
            {
                "local": raw_entry(),
                "web": {"url": http.url},
                "legacy": {"url": sse.url, "transport": "sse"},
            },
        )
        async with managed(config) as manager:
            for name in ("local", "web", "legacy"):
                with anyio.fail_after(30):
                    sup = await manager.start(name)
                assert sup.state == State.READY, sup.snap.last_error
                assert sup.snap.transport == manager.config.servers[name].transport
            assert manager.get("local").raw_channel is not None  # only stdio relays calls raw
            assert manager.get("web").raw_channel is None
    assert sorted(opened) == ["sse", "stdio", "streamable-http"]


async def test_a_remembered_transport_that_is_not_the_kinds_fallback_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The era cache is a file anyone with the account can write: a URL entry remembered as
    "stdio" must not make orbmcp treat a URL as a process."""
    opened = counting(monkeypatch)
    async with http_server() as http:
        config = write_config(tmp_path / "mcp.json", {"web": {"url": http.url}})
        key = load(config).servers["web"].definition_hash()
        async with managed(config) as manager:
            cache = EraCache(manager.runtime.era_cache_path)
            cache.record(key, "2025-11-25", transport="stdio")
            assert cache.transport(key) == "stdio"
            with anyio.fail_after(30):
                sup = await manager.start("web")
            assert sup.state == State.READY, sup.snap.last_error
            assert sup.snap.transport == "streamable-http"
    assert opened == ["streamable-http"]
