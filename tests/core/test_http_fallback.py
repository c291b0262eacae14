"""A URL entry whose server refuses Streamable HTTP (400/404/405) gets legacy SSE (the spec's
backwards compatibility with 2024-11-05 servers).

Real uvicorn servers on 127.0.0.1: ``everything.py --sse`` (2024-11-05 HTTP+SSE only) and
``everything.py --http`` (Streamable HTTP only).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import anyio

from orbmcp.commands.views import server_detail
from orbmcp.core.session.state import State
from orbmcp.core.session.supervisor import Supervisor
from orbmcp.core.wire.connect import fallback_note
from orbmcp.core.wire.era import EraCache
from tests.core.live import load, managed, write_config
from tests.servers.launch import HttpServer, http_server
from tests.timeouts import HANG_GUARD_S

SSE_FALLBACK_NOTE = fallback_note("streamable-http", "sse")
EXPECTED_NOTE = (
    "connected over legacy SSE: the URL refused Streamable HTTP; "
    'set "transport": "sse" for this server to skip that attempt'
)


def record_statuses(sup: Supervisor) -> list[int]:
    """Observe every HTTP status the supervisor's connections see (the record stays in place)."""
    seen: list[int] = []
    original = sup.http.record

    def record(status: int, www_authenticate: str | None) -> None:
        seen.append(status)
        original(status, www_authenticate)

    sup.http.record = record  # type: ignore[method-assign]
    return seen


async def servers() -> tuple[AsyncExitStack, HttpServer, HttpServer]:
    stack = AsyncExitStack()
    found: dict[str, HttpServer] = {}

    async def start(kind: str, args: list[str]) -> None:
        found[kind] = await stack.enter_async_context(http_server(args))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(start, "sse", ["--sse", "0"])
            tg.start_soon(start, "http", ["--http", "0"])
    except BaseException:
        await stack.aclose()
        raise
    return stack, found["sse"], found["http"]


async def test_url_of_a_legacy_sse_server_connects_over_sse_and_is_remembered(tmp_path: Path) -> None:
    stack, sse, http = await servers()
    async with stack:
        config = write_config(
            tmp_path / "mcp.json",
            {
                "legacy": {"url": sse.url},  # no transport: Streamable HTTP is the default
                "explicit": {"url": sse.url, "transport": "sse"},
                "wrong-path": {"url": f"http://127.0.0.1:{http.port}/nope"},
            },
        )
        cfg = load(config)
        async with managed(config) as manager:
            cache = EraCache(manager.runtime.era_cache_path)
            legacy = manager.get("legacy")
            statuses = record_statuses(legacy)
            with anyio.fail_after(HANG_GUARD_S):
                await manager.start_many(["legacy", "explicit", "wrong-path"])
            assert legacy.state == State.READY, legacy.snap.last_error
            assert 405 in statuses  # Streamable HTTP was tried first and refused
            assert legacy.snap.transport == "sse" and legacy.snap.protocol_version == "2025-11-25"
            assert manager.tools.counts("legacy") == manager.tools.counts("explicit") != (0, 0)
            assert list(legacy.snap.warnings) == [SSE_FALLBACK_NOTE] == [EXPECTED_NOTE]
            detail = server_detail(cfg.servers["legacy"], cfg, legacy)
            assert detail.transport == "sse"
            assert f"[orbmcp] {SSE_FALLBACK_NOTE}" in detail.recent_output

            explicit = manager.get("explicit")
            assert explicit.state == State.READY and list(explicit.snap.warnings) == []

            # A plain wrong path is not an SSE server either: the Streamable HTTP error stands.
            wrong = manager.get("wrong-path")
            assert wrong.state == State.FAILED
            assert wrong.snap.last_error == "server 'wrong-path' answered HTTP 404 (Not Found)"
            assert wrong.snap.last_error_hint == "check the server URL"

        key = cfg.servers["legacy"].definition_hash()
        assert cache.transport(key) == "sse"
        assert cache.transport(cfg.servers["explicit"].definition_hash()) is None
        assert cache.entry(cfg.servers["wrong-path"].definition_hash()) is None

        # The next connect goes straight to SSE: no refused POST first.
        async with managed(config) as manager:
            legacy = manager.get("legacy")
            statuses = record_statuses(legacy)
            with anyio.fail_after(HANG_GUARD_S):
                await manager.start("legacy")
            assert legacy.state == State.READY and legacy.snap.transport == "sse"
            assert statuses and all(status < 400 for status in statuses), statuses
            assert list(legacy.snap.warnings) == [SSE_FALLBACK_NOTE]


async def test_a_remembered_sse_fallback_is_dropped_when_the_url_speaks_streamable_http(
    tmp_path: Path,
) -> None:
    async with http_server() as http:
        config = write_config(tmp_path / "mcp.json", {"web": {"url": http.url}})
        key = load(config).servers["web"].definition_hash()
        async with managed(config) as manager:
            cache = EraCache(manager.runtime.era_cache_path)
            # As if an earlier run had found an SSE server at this URL.
            cache.record(key, "2025-11-25", transport="sse")
            web = manager.get("web")
            with anyio.fail_after(HANG_GUARD_S):
                await manager.start("web")
            assert web.state == State.READY, web.snap.last_error
            assert web.snap.transport == "streamable-http" and list(web.snap.warnings) == []
        assert cache.transport(key) is None
