"""The Manager and its supervisors against real servers: concurrency, timeouts, eras, reconnection,
discovery and list_changed on both protocol eras, over stdio and Streamable HTTP.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import orbmcp.core.session.state as state_module
import orbmcp.core.wire.era as era
from orbmcp.core.session.discovery import MAX_PAGES, collect_pages
from orbmcp.core.session.hints import hint_for
from orbmcp.core.session.manager import Manager
from orbmcp.core.session.state import State
from orbmcp.core.session.supervisor import Supervisor
from orbmcp.core.tooling.calls import call_tool
from orbmcp.core.tooling.registry import BridgedTool
from orbmcp.core.tooling.results import TextBlock
from orbmcp.core.wire.era import EraCache
from orbmcp.errors import ConnectionFailed, cmd
from tests.core.live import (
    enable_debug_log,
    logged,
    managed,
    raw_entry,
    recorded_methods,
    stdio_entry,
    wait_until,
    write_config,
)
from tests.memory import MemoryTransport, memory_entry
from tests.servers.launch import http_server
from tests.timeouts import HANG_GUARD_S

LEGACY_VERSION = "2025-11-25"


def seed_era(manager: Manager, name: str, version: str) -> None:
    """Make ``name`` connect as if an earlier run had negotiated ``version``."""
    EraCache(manager.runtime.era_cache_path).record(manager.config.servers[name].definition_hash(), version)


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "RETRY_SCHEDULE_S", (0.05, 0.05, 0.05, 0.05, 0.05))


class Events:
    """A tool-registry listener that records what it is told."""

    def __init__(self) -> None:
        self.registered: list[str] = []
        self.activation: list[tuple[str, bool]] = []

    def tool_registered(self, tool: BridgedTool) -> None:
        self.registered.append(tool.name)

    def tool_activation(self, tool: BridgedTool, active: bool) -> None:
        self.activation.append((tool.name, active))

    def tools_synced(self, server: str) -> None:
        pass


# --- start-up: concurrency, timeouts, eras ----------------------------------------------------


async def test_eager_servers_connect_concurrently(tmp_path: Path) -> None:
    # Each server answers initialize only once all ten have received theirs: a start-up that
    # connected them one at a time would leave the first one waiting, and fail the bound below.
    names = [f"s{i}" for i in range(10)]
    barrier = f"{tmp_path / 'barrier'}:{len(names)}"
    config = write_config(
        tmp_path / "mcp.json", {n: raw_entry("--barrier", barrier, timeoutMs=60000) for n in names}
    )
    async with managed(config) as manager:
        for name in names:
            seed_era(manager, name, LEGACY_VERSION)
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
        assert {manager.supervisors[n].state for n in names} == {State.READY}
        assert manager.tools.counts("s9") == (2, 2)
    assert len(list((tmp_path / "barrier").iterdir())) == len(names)


async def test_hung_server_is_bounded_by_its_own_timeout_and_delays_no_one(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "mcp.json",
        {
            "hung": raw_entry("--hang", "--record", str(tmp_path / "hung.jsonl"), timeoutMs=3000),
            "fast": raw_entry(),
        },
    )
    async with managed(config) as manager, anyio.create_task_group() as tg:
        hung, fast = manager.supervisors["hung"], manager.supervisors["fast"]
        tg.start_soon(manager.start_eager)
        # fast is ready while hung still waits for its initialize answer: nobody waits for hung.
        await wait_until(lambda: fast.state == State.READY, 10, "the fast server")
        assert hung.state == State.STARTING
        await wait_until(lambda: hung.state == State.FAILED, 10, "the hung server's own timeout")
        assert hung.snap.last_error_code == "timeout"
        assert hung.snap.last_error == (
            "server 'hung' did not become ready within 3000 ms (connect + initialize + discovery)"
        )
        await wait_until(lambda: hung.process is None, 10, "the hung server's stop")
        assert fast.state == State.READY
    # The unanswered initialize is not cancelled: the connection is just closed.
    assert recorded_methods(tmp_path / "hung.jsonl") == ["server/discover", "initialize"]


async def test_a_server_that_ignores_discover_costs_the_short_probe_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(era, "DISCOVER_PROBE_TIMEOUT_S", 0.6)
    record = tmp_path / "raw.jsonl"
    config = write_config(tmp_path / "mcp.json", {"quiet": stdio_entry("raw", "--record", str(record))})
    for run in range(2):
        async with managed(config) as manager:
            # Well inside the 30 s connect timeout: the short probe gave up on server/discover.
            with anyio.fail_after(HANG_GUARD_S):
                sup = await manager.ready("quiet")
            assert sup.snap.protocol_version == LEGACY_VERSION
        if run == 0:
            assert recorded_methods(record)[:2] == ["server/discover", "initialize"]
    methods = recorded_methods(record)
    assert methods.count("server/discover") == 1  # the second run knew the era: no probe
    assert methods.count("initialize") == 2


async def test_any_error_to_the_discover_probe_falls_back_to_initialize(tmp_path: Path) -> None:
    codes = {"not-found": "-32601", "bad-params": "-32602", "server-error": "-32000"}
    config = write_config(
        tmp_path / "mcp.json",
        {name: stdio_entry("raw", "--answer-discover-error", code) for name, code in codes.items()},
    )
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
        for name in codes:
            sup = manager.supervisors[name]
            assert sup.state == State.READY, sup.snap.last_error
            assert sup.snap.protocol_version == LEGACY_VERSION


# A stdlib server that speaks only 2026-07-28: it answers server/discover and refuses initialize.
MODERN_ONLY = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, page = msg["method"], {"cacheScope": "public", "ttlMs": 0, "resultType": "complete"}
    if method == "server/discover":
        reply = {"result": {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, **page}}
    elif method == "tools/list":
        reply = {"result": {"tools": [{"name": "only", "inputSchema": {"type": "object"}}], **page}}
    else:
        reply = {"error": {"code": -32601, "message": "Method not found: " + method}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **reply}) + "\\n")
    sys.stdout.flush()
"""


async def test_a_server_remembered_as_legacy_that_became_modern_only_still_connects(tmp_path: Path) -> None:
    script = tmp_path / "modern_only.py"
    script.write_text(MODERN_ONLY, encoding="utf-8")
    config = write_config(tmp_path / "mcp.json", {"mo": {"command": sys.executable, "args": [str(script)]}})
    async with managed(config) as manager:
        seed_era(manager, "mo", LEGACY_VERSION)  # what an older version of the server spoke
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.start("mo")
        assert sup.state == State.READY, sup.snap.last_error
        assert sup.snap.protocol_version == "2026-07-28"
        assert manager.tools.counts("mo") == (1, 1)
        key = manager.config.servers["mo"].definition_hash()
        assert EraCache(manager.runtime.era_cache_path).get(key) == "modern"


# --- reconnection -------------------------------------------------------------------------------


@pytest.mark.usefixtures("fast_retries")
async def test_crash_loop_ends_in_failed_with_retries_counted(tmp_path: Path) -> None:
    record = tmp_path / "raw.jsonl"
    config = write_config(
        tmp_path / "mcp.json",
        {
            "loop": raw_entry(
                "--exit-after-init", "--stderr-lines", "1", "--record", str(record), maxRetries=2
            )
        },
    )
    async with managed(config, retries=True) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.start("loop")
            await wait_until(lambda: sup.state == State.FAILED, 10, "the crash loop to end")
        assert sup.snap.retries == 2
        # Each attempt's server exited by itself: the error says so, with its last stderr line.
        assert sup.snap.last_error == (
            "server 'loop' exited with code 0 while connecting; "
            "last stderr: raw stderr line 0: Authorization: Bearer <redacted>"
        )
        assert not sup.running
        # The tail outlives the processes: one line per attempt, secrets masked.
        assert sup.stderr_tail() == ["raw stderr line 0: Authorization: Bearer <redacted>"] * 3
    assert recorded_methods(record).count("initialize") == 3


@pytest.mark.usefixtures("fast_retries")
async def test_max_retries_zero_means_no_retry(tmp_path: Path) -> None:
    record = tmp_path / "raw.jsonl"
    config = write_config(
        tmp_path / "mcp.json", {"once": raw_entry("--exit-after-init", "--record", str(record), maxRetries=0)}
    )
    async with managed(config, retries=True) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.start("once")
        assert sup.state == State.FAILED
        assert sup.snap.retries == 0
    assert recorded_methods(record).count("initialize") == 1


async def test_start_returns_after_the_first_try_while_retries_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A dead server in a long-lived session retries in the background; whoever waited for the
    # eager servers (an agent host's start-up) must not sit out its whole schedule.
    monkeypatch.setattr(state_module, "RETRY_SCHEDULE_S", (30.0,))
    config = write_config(
        tmp_path / "mcp.json",
        {"dead": {"command": "/nonexistent/orb-dead", "maxRetries": 5}, "fine": raw_entry()},
    )
    async with managed(config, retries=True) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
        dead = manager.supervisors["dead"]
        assert manager.supervisors["fine"].state == State.READY
        assert dead.state == State.STARTING  # waiting for its first retry
        assert dead.running
        assert dead.snap.retries == 1
        assert dead.snap.last_error == "server 'dead': command not found: /nonexistent/orb-dead"


def _replaced(sup: Supervisor, old_pid: int | None) -> bool:
    """Ready again, on a new process."""
    return sup.state == State.READY and sup.process is not None and sup.process.pid != old_pid


async def test_the_schedule_is_followed_and_starts_afresh_after_a_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_module, "RETRY_SCHEDULE_S", (0.2, 0.4))
    record = tmp_path / "raw.jsonl"
    config = write_config(
        tmp_path / "mcp.json",
        {
            "loop": raw_entry("--exit-after-init", "--record", str(record), maxRetries=2),
            "crashy": raw_entry("--crash-on-call", maxRetries=1),
        },
    )
    log_file = enable_debug_log(tmp_path / "debug")
    async with managed(config, retries=True) as manager:
        loop, crashy = manager.supervisors["loop"], manager.supervisors["crashy"]
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
            await wait_until(lambda: loop.state == State.FAILED, 10, "the crash loop to end")
        # The waits of the schedule, in order: 0.2 s, then 0.4 s.
        retries = [(r["attempt"], r["delay_ms"]) for r in logged(log_file, "server.retry", "loop")]
        assert retries == [(1, 200), (2, 400)]
        assert loop.snap.retries == 2
        assert recorded_methods(record).count("initialize") == 3
        # maxRetries 1, yet every crash after a successful reconnect is retried again.
        for _ in range(3):
            assert crashy.state == State.READY and crashy.process is not None
            pid = crashy.process.pid
            with anyio.fail_after(HANG_GUARD_S), pytest.raises(ConnectionFailed):
                await call_tool(crashy, "echo", {"text": "x"})
            await wait_until(lambda old=pid: _replaced(crashy, old), 10, "the reconnect")


async def test_stop_during_a_retry_wait_really_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "RETRY_SCHEDULE_S", (30.0,))
    record = tmp_path / "raw.jsonl"
    config = write_config(
        tmp_path / "mcp.json",
        {"flaky": raw_entry("--exit-after-init", "--record", str(record), maxRetries=5)},
    )
    async with managed(config, retries=True) as manager:
        sup = manager.supervisors["flaky"]
        starter_done = anyio.Event()

        async def starter() -> None:
            await manager.start("flaky")
            starter_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(starter)
            await wait_until(
                lambda: sup.snap.retries == 1 and sup.process is None, what="the first retry wait"
            )
            assert sup.state == State.STARTING
            # Well inside the 30 s retry wait: the stop cut it short.
            with anyio.fail_after(HANG_GUARD_S):
                await manager.stop("flaky")
                await starter_done.wait()  # whoever waited for the outcome is released too
        assert sup.state == State.STOPPED
        assert not sup.running
    assert recorded_methods(record).count("initialize") == 1


@pytest.mark.usefixtures("fast_retries")
async def test_call_on_a_dead_server_deactivates_its_tools_at_once_then_it_reconnects(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"e": stdio_entry("everything"), "r": raw_entry()})
    async with managed(config, retries=True) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
        sup = manager.supervisors["e"]
        before = {t.name: t for t in manager.tools.for_server("e")}
        assert {"crash", "echo", "add_tool"} <= set(before)
        first_pid = sup.process.pid if sup.process else None
        events = Events()
        manager.tools.add_listener(events)
        events.registered.clear()
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(ConnectionFailed) as caught:
            await call_tool(sup, "crash", {})
        # The crash ended the call (not the 30 s request timeout, which the bound above excludes).
        # ...and says how the server ended: its exit code (its stderr tail is quoted when it wrote one).
        assert caught.value.message == "server 'e' exited with code 3 during tools/call crash"
        assert caught.value.reason == "server_exited"
        # Deactivated before the error reached the caller; the other server is untouched.
        assert manager.tools.counts("e") == (len(before), 0)
        assert manager.tools.counts("r") == (2, 2)
        await wait_until(lambda: _replaced(sup, first_pid), 20, "the reconnect")
        after = {t.name: t for t in manager.tools.for_server("e")}
        assert after.keys() == before.keys()
        assert all(after[n] is before[n] for n in before)  # toggled, never re-registered
        assert events.registered == []
        assert manager.tools.counts("e") == (len(before), len(before))
        result = await call_tool(sup, "echo", {"text": "back"})
        assert [b.text for b in result.content if isinstance(b, TextBlock)] == ["back"]


async def test_reconnect_toggles_the_same_tools_instead_of_churning_them(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"r": raw_entry()})
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
        before = manager.tools.for_server("r")
        events = Events()
        manager.tools.add_listener(events)
        events.registered.clear()
        events.activation.clear()
        with anyio.fail_after(HANG_GUARD_S):
            (sup,) = await manager.reconnect("r")
        assert sup.state == State.READY
        after = manager.tools.for_server("r")
        assert len(after) == 2
        assert all(a is b for a, b in zip(after, before, strict=True))
        assert events.registered == []
        assert sorted(events.activation) == sorted(
            [("echo", False), ("never", False), ("echo", True), ("never", True)]
        )


async def test_failed_health_check_reconnects(tmp_path: Path, fast_retries: None) -> None:
    config = write_config(tmp_path / "mcp.json", {"r": raw_entry(healthCheckIntervalMs=200)})
    async with managed(config, retries=True) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("r")
        assert sup.process is not None
        frozen = sup.process.pid
        os.kill(frozen, signal.SIGSTOP)  # alive but silent: only a ping can tell
        try:
            await wait_until(lambda: manager.tools.counts("r")[1] == 0, 5, "the failed health check")
            await wait_until(lambda: _replaced(sup, frozen), 10, "the reconnect")
        finally:
            try:
                os.kill(frozen, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert manager.tools.counts("r") == (2, 2)


# --- discovery ----------------------------------------------------------------------------------


async def test_ten_thousand_tools_over_a_hundred_pages_and_a_repeated_cursor(
    tmp_path: Path, in_memory: MemoryTransport
) -> None:
    """What discovery does with the pages, not the process: the servers run in this loop."""
    config = write_config(
        tmp_path / "mcp.json",
        {
            "big": memory_entry("paged", "--tools", "10000", "--page-size", "100"),
            "stuck": memory_entry("paged", "--tools", "10", "--page-size", "2", "--repeat-cursor"),
            "bad": memory_entry("paged", "--tools", "2", "--bad-header-tool"),
        },
    )
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
        big, stuck, bad = manager.supervisors["big"], manager.supervisors["stuck"], manager.supervisors["bad"]
        assert big.state == stuck.state == bad.state == State.READY
        # A tool the SDK must drop (2026-07-28: invalid x-mcp-header) does not go missing silently.
        assert bad.snap.protocol_version == "2026-07-28"
        assert manager.tools.counts("bad") == (2, 2)
        dropped = (
            "server 'bad': tool 'bad_header' is not available: property 'where': x-mcp-header is only "
            "permitted on integer/string/boolean properties (got 'object') (2026-07-28 clients must drop "
            "such tools)"
        )
        assert list(bad.snap.warnings) == [dropped]
        with anyio.fail_after(HANG_GUARD_S):
            await bad._discover(bad.client)  # what a list_changed re-discovery runs
        assert list(bad.snap.warnings) == [dropped]  # said once, not once per listing
        assert manager.tools.counts("big") == (10_000, 10_000)
        assert manager.tools.get("big", "t9999") is not None
        assert list(big.snap.warnings) == []
        # A repeated cursor stops discovery with a warning instead of looping.
        assert manager.tools.counts("stuck") == (2, 2)
        assert list(stuck.snap.warnings) == ["server 'stuck' repeated a tools cursor; stopped after 2 pages"]
    assert in_memory.opened == ["paged"] * 3


def _pages(count: int, *, first_cursor: str | None = None) -> Any:
    """A fetch function serving ``count`` pages of one item; cursors are page numbers."""
    asked: list[str | None] = []

    async def fetch(cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        asked.append(cursor)
        page = 0 if cursor is None else (1 if cursor == "" else int(cursor))
        nxt = None if page + 1 >= count else str(page + 1)
        if page == 0 and first_cursor is not None:
            nxt = first_cursor
        return [{"name": f"t{page}"}], nxt

    fetch.asked = asked  # type: ignore[attr-defined]
    return fetch


async def test_more_than_a_hundred_pages_stops_at_the_cap_with_a_warning() -> None:
    warnings: list[str] = []
    fetch = _pages(150)
    items = await collect_pages(fetch, what="tools", server="s", warn=warnings.append)
    assert len(items) == MAX_PAGES == len(fetch.asked)
    assert warnings == ["server 's' sent more than 100 pages of tools; using the first 100"]


async def test_an_empty_cursor_is_followed_not_taken_for_the_end() -> None:
    warnings: list[str] = []
    fetch = _pages(3, first_cursor="")
    items = await collect_pages(fetch, what="tools", server="s", warn=warnings.append)
    assert [i["name"] for i in items] == ["t0", "t1", "t2"]
    assert fetch.asked == [None, "", "2"]
    assert warnings == []


def _tool_state(manager: Manager, server: str, tool: str) -> tuple[bool, bool] | None:
    t = manager.tools.get(server, tool)
    return None if t is None else (t.present, t.active)


async def _add_then_remove(manager: Manager, sup: Supervisor, tool: str) -> None:
    await call_tool(sup, "add_tool", {"name": tool})
    await wait_until(
        lambda: _tool_state(manager, sup.name, tool) == (True, True), 10, f"{tool} on {sup.name}"
    )
    result = await call_tool(sup, tool, {})
    assert [b.text for b in result.content if isinstance(b, TextBlock)] == [f"dynamic {tool}"]
    await call_tool(sup, "remove_tool", {"name": tool})
    await wait_until(lambda: _tool_state(manager, sup.name, tool) == (False, False), 10, f"{tool} removed")


async def test_list_changed_rediscovers_on_both_eras_over_stdio_and_http(tmp_path: Path) -> None:
    async with http_server() as http:
        config = write_config(
            tmp_path / "mcp.json",
            {
                "stdio-modern": stdio_entry("everything"),
                "stdio-legacy": stdio_entry("everything"),
                "http-modern": {"url": http.url},
                "http-legacy": {"url": http.url},
            },
        )
        async with managed(config) as manager:
            seed_era(manager, "stdio-legacy", LEGACY_VERSION)
            seed_era(manager, "http-legacy", LEGACY_VERSION)
            with anyio.fail_after(HANG_GUARD_S):
                await manager.start_eager()
            versions = {name: sup.snap.protocol_version for name, sup in manager.supervisors.items()}
            assert versions == {
                "stdio-modern": "2026-07-28",
                "stdio-legacy": LEGACY_VERSION,
                "http-modern": "2026-07-28",
                "http-legacy": LEGACY_VERSION,
            }
            original = {name: manager.tools.for_server(name) for name in manager.supervisors}
            with anyio.fail_after(HANG_GUARD_S):
                async with anyio.create_task_group() as tg:
                    for name, sup in manager.supervisors.items():
                        tg.start_soon(_add_then_remove, manager, sup, f"dyn_{name.replace('-', '_')}")
            for name, tools in original.items():
                # The tools that were there all along were never touched. (The two HTTP entries
                # share one server, which tells a 2025-era session only of its own changes.)
                assert len(tools) >= 15
                assert all(t.present and t.active for t in tools), name
                assert manager.tools.for_server(name)[: len(tools)] == tools


# --- HTTP failures ------------------------------------------------------------------------------


def _unauthorized(request: Request) -> JSONResponse:
    return JSONResponse(
        {"error": "unauthorized"},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer resource_metadata="http://127.0.0.1/.well-known/x"'},
    )


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[int]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        await wait_until(lambda: server.started, 10, "uvicorn")
        try:
            yield int(server.servers[0].sockets[0].getsockname()[1])
        finally:
            server.should_exit = True


async def test_401_without_auth_configured_fails_with_an_auth_hint(tmp_path: Path) -> None:
    app = Starlette(routes=[Route("/mcp", _unauthorized, methods=["GET", "POST", "DELETE"])])
    async with serving(app) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        config = write_config(
            tmp_path / "mcp.json",
            {
                "plain": {"url": url},
                "keyed": {"url": url, "headers": {"Authorization": "Bearer sk-wrong-123456"}},
            },
        )
        async with managed(config, retries=True) as manager:
            with anyio.fail_after(HANG_GUARD_S):
                await manager.start_eager()
            for name in ("plain", "keyed"):
                sup = manager.supervisors[name]
                # No OAuth configured, so `orbmcp auth` cannot help: failed, not needs-auth.
                assert sup.state == State.FAILED, name
                assert sup.snap.last_error_code == "auth"
                assert sup.snap.retries == 0  # retrying cannot fix credentials
                assert sup.snap.last_error == f"server '{name}' requires authorization (HTTP 401)"
                hint = hint_for(sup)
                assert hint is not None and "orbmcp auth" not in hint
            assert "headers" in (hint_for(manager.supervisors["keyed"]) or "")
            assert '"auth"' in (hint_for(manager.supervisors["plain"]) or "")
            assert "sk-wrong-123456" not in repr([s.snap for s in manager.supervisors.values()])


async def test_start_during_a_retry_wait_tries_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The schedule's first wait is long: only an explicit start can make the next try happen soon.
    monkeypatch.setattr(state_module, "RETRY_SCHEDULE_S", (60.0,))
    cfg = write_config(tmp_path / "mcp.json", {"flaky": raw_entry("--exit-after-init", maxRetries=5)})
    with anyio.fail_after(HANG_GUARD_S):
        async with managed(cfg, retries=True) as manager:
            sup = await manager.start("flaky")
            assert sup.state == State.STARTING and sup.snap.retries == 1  # settled, waiting 60 s
            sup = await manager.start("flaky")  # the person asks again: no 60 s wait
            assert sup.snap.retries == 2
            assert sup.snap.last_error


async def test_a_stop_sticks_until_an_explicit_start(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "mcp.json", {"r": raw_entry(lifecycle="lazy")})
    with anyio.fail_after(HANG_GUARD_S):
        async with managed(cfg, retries=True) as manager:
            assert (await manager.ready("r")).state == State.READY  # lazy: connected on demand
            await manager.stop("r")
            with pytest.raises(ConnectionFailed, match="was stopped in this session") as info:
                await manager.ready("r")
            assert info.value.hint_template is not None and cmd("start", "r") in info.value.hint_template
            assert manager.get("r").state == State.STOPPED  # not revived behind the person's back
            await manager.start("r")
            assert (await manager.ready("r")).state == State.READY
