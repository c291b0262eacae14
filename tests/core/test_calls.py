"""Requests on servers that are not ready, and how request failures reach the caller.

Every call test runs on both call paths (``call_path``). Real servers in-process: raw.py over stdio (its ``--no-ignore-unknown`` answers every unknown
method with -32601, an unknown tool with -32602) and the loopback OAuth server for needs-auth.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.commands.spelling import spell_for
from orbmcp.config.model import ServerConfig
from orbmcp.core.session.hints import hint_for
from orbmcp.core.session.state import State
from orbmcp.core.tooling.calls import (
    call_tool,
    get_prompt,
    list_prompts,
    list_resources,
    read_resource,
    request,
)
from orbmcp.errors import AuthError, ConnectionFailed, ProtocolError, TimeoutFailed, UsageError
from tests.auth.oauth_server import running_server
from tests.core.live import managed, raw_entry, stdio_entry, wait_until, write_config
from tests.core.paths import PathProbe
from tests.servers.launch import http_server
from tests.timeouts import HANG_GUARD_S

SECRET = "sk-live-0123456789abcdefXYZ"


async def test_requests_on_a_stopped_server_say_how_to_start_it(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"lazy": raw_entry(lifecycle="lazy")})
    async with managed(config) as manager:
        sup = manager.get("lazy")
        attempts: list[Callable[[], Awaitable[object]]] = [
            lambda: call_tool(sup, "echo", {"text": "x"}),
            lambda: list_resources(sup),
            lambda: list_prompts(sup),
            lambda: read_resource(sup, "file:///x"),
            lambda: get_prompt(sup, "p", {}),
        ]
        for attempt in attempts:
            with pytest.raises(ConnectionFailed) as caught:
                await attempt()
            assert caught.value.message == "server 'lazy' is not connected (stopped)"
            assert caught.value.hint == "orbmcp start lazy"
            assert caught.value.server == "lazy"
        assert sup.state == State.STOPPED  # asking did not connect it
        with pytest.raises(UsageError, match="unknown server 'nope'"):
            manager.get("nope")


async def test_requests_on_a_failed_server_carry_its_last_error_and_a_hint(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-server-binary"
    config = write_config(
        tmp_path / "mcp.json",
        {
            "gone": {"command": str(missing), "lifecycle": "lazy"},
            "hung": raw_entry("--hang", lifecycle="lazy", timeoutMs=300),
        },
    )
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            gone = await manager.start("gone")
            hung = await manager.start("hung")
        assert gone.state == State.FAILED and hung.state == State.FAILED

        with pytest.raises(ConnectionFailed) as caught:
            await call_tool(gone, "echo", {"text": "x"})
        assert caught.value.message == f"server 'gone': command not found: {missing}"
        assert caught.value.hint == "check the command and PATH"  # the error's own, specific hint

        with pytest.raises(TimeoutFailed) as timed_out:
            await list_resources(hung)
        assert "did not become ready within 300 ms" in timed_out.value.message
        assert timed_out.value.hint is not None and "raise timeoutMs" in timed_out.value.hint

        # ready() (what `orbmcp call` uses) tries again and reports the same way.
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(ConnectionFailed, match="command not found"):
            await manager.ready("gone")


async def test_requests_on_a_server_that_needs_auth_point_at_orbmcp_auth(tmp_path: Path) -> None:
    async with running_server() as srv:
        path = write_config(
            tmp_path / "mcp.json",
            {"srv": {"url": srv.mcp_url, "auth": {"type": "oauth"}, "lifecycle": "lazy"}},
        )
        async with managed(path) as manager:
            with anyio.fail_after(HANG_GUARD_S):
                sup = await manager.start("srv")
            assert sup.state == State.NEEDS_AUTH
            with pytest.raises(AuthError) as caught:
                await call_tool(sup, "whoami", None)
            assert caught.value.server == "srv"
            assert caught.value.hint == "orbmcp auth srv"
            assert spell_for(hint_for(sup) or "", "slash") == "/mcp:auth srv"
            with anyio.fail_after(HANG_GUARD_S), pytest.raises(AuthError):
                await manager.ready("srv")
        # Silent connects never register a client or open anything.
        assert srv.count("/register") == 0 and srv.count("/authorize") == 0


async def test_protocol_errors_from_the_server_leave_the_connection_up(
    tmp_path: Path, call_path: PathProbe
) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry("--no-ignore-unknown", lifecycle="lazy")})
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("raw")
        expected: dict[str, Callable[[], Awaitable[object]]] = {
            "resources/list": lambda: list_resources(sup),
            "prompts/list": lambda: list_prompts(sup),
            "resources/read file:///etc/x": lambda: read_resource(sup, "file:///etc/x"),
            "prompts/get greet": lambda: get_prompt(sup, "greet", {"who": "me"}),
        }
        for what, attempt in expected.items():
            method = what.split(" ")[0]
            with anyio.fail_after(HANG_GUARD_S), pytest.raises(ProtocolError) as caught:
                await attempt()
            assert caught.value.message == (
                f"server 'raw': {what} failed: Method not found: {method} (code -32601)"
            )
            assert caught.value.server == "raw"
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(ProtocolError) as unknown_tool:
            await call_tool(sup, "nosuch", {})
        assert unknown_tool.value.message == (
            "server 'raw': tools/call nosuch failed: Unknown tool: nosuch (code -32602)"
        )
        # An error answer is not a dead connection: nothing was deactivated.
        assert sup.state == State.READY
        assert manager.tools.counts("raw") == (2, 2)
        result = await call_tool(sup, "echo", {"text": "still here"})
        assert result.text() == "still here"


async def test_a_dead_stream_deactivates_tools_at_once_and_is_not_retried(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry(lifecycle="lazy")})
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("raw")
        assert manager.tools.counts("raw") == (2, 2)
        calls = 0

        async def broken(client: Any) -> None:
            nonlocal calls
            calls += 1
            raise BrokenPipeError(32, "Broken pipe")

        with pytest.raises(ConnectionFailed) as caught:
            await request(sup, "tools/call echo", broken)
        assert caught.value.message == "server 'raw' connection died during tools/call echo"
        assert calls == 1
        # Deactivated before the error reached us, not after the reconnect logic ran.
        assert manager.tools.counts("raw") == (2, 0)
        await wait_until(lambda: sup.state == State.FAILED, what="the supervisor to give up (no retries)")
        assert sup.snap.last_error == "server 'raw' connection died during tools/call echo"


async def test_unexpected_failures_are_translated_and_redacted(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "mcp.json", {"raw": raw_entry(lifecycle="lazy", env={"API_KEY": SECRET})}
    )
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("raw")

        async def leaky(client: Any) -> None:
            raise ValueError(f"could not parse reply with key {SECRET}")

        with pytest.raises(ProtocolError) as caught:
            await request(sup, "tools/call echo", leaky)
        assert caught.value.message.startswith(
            "server 'raw': tools/call echo failed: ValueError: could not parse"
        )
        assert SECRET not in caught.value.message

        async def slow(client: Any) -> None:
            raise TimeoutError

        with pytest.raises(TimeoutFailed, match="server 'raw': tools/call echo timed out"):
            await request(sup, "tools/call echo", slow)

        mine = AuthError("already an orbmcp error", server="raw")

        async def orb(client: Any) -> None:
            raise mine

        with pytest.raises(AuthError) as passed_through:
            await request(sup, "tools/call echo", orb)
        assert passed_through.value is mine
        assert sup.state == State.READY  # none of these killed the connection

        async def torn_down(client: Any) -> None:
            await manager.stop("raw")  # the owner task closes the session under the request
            raise RuntimeError("session closed")

        with pytest.raises(ConnectionFailed, match="server 'raw' disconnected during tools/call echo"):
            await request(sup, "tools/call echo", torn_down)
        assert sup.state.value == "stopped"


async def test_cancelling_a_call_leaves_the_server_ready(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry(lifecycle="lazy")})
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("raw")
        with anyio.move_on_after(0.3) as scope:
            await call_tool(sup, "never", None, timeout_s=30)
        assert scope.cancelled_caught
        assert sup.state == State.READY
        with anyio.fail_after(HANG_GUARD_S):
            result = await call_tool(sup, "echo", {"text": "after cancel"})
        assert not result.is_error and result.text() == "after cancel"


async def test_a_stopped_server_is_not_revived_by_a_call(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry(lifecycle="lazy")})
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.ready("raw")
            await manager.stop("raw")
        with pytest.raises(ConnectionFailed) as caught:
            await manager.ready("raw")
        assert caught.value.message == "server 'raw' was stopped in this session"
        assert caught.value.hint == "start it again with orbmcp start raw"  # each front spells the command
        assert caught.value.reason == "server_stopped"
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.start("raw")  # a person's start clears the stop
            assert (await manager.ready("raw")) is sup
        assert sup.state == State.READY


async def test_resources_prompts_and_progress_on_a_full_server(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"e": stdio_entry("everything", lifecycle="lazy")})
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("e")
            assert [r["uri"] for r in await list_resources(sup)] == ["mem://hello"]
            assert [p["name"] for p in await list_prompts(sup)] == ["greet"]
            assert await read_resource(sup, "mem://hello") == [
                {"uri": "mem://hello", "mimeType": "text/plain", "text": "hello world"}
            ]
            prompt = await get_prompt(sup, "greet", {"name": "Ann"})
            assert prompt["messages"][0]["content"]["text"] == "Please greet Ann warmly."

            seen: list[tuple[float, float | None, str | None]] = []
            args = {"steps": 2, "delay": 0.01}
            result = await call_tool(sup, "slow", args, progress=lambda v, t, m: seen.append((v, t, m)))
            assert result.text() == "done 2 steps"
            assert seen == [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")]

            async def async_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append((value, total, "async"))

            await call_tool(sup, "slow", args, progress=async_progress)
            assert seen[2:] == [(1.0, 2.0, "async"), (2.0, 2.0, "async")]
            # No listener: progress notifications are still accepted and dropped.
            assert (await call_tool(sup, "slow", args)).text() == "done 2 steps"


async def test_stdout_noise_is_skipped_and_shown_as_a_warning(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"chatty": raw_entry("--garbage", lifecycle="lazy")})
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("chatty")
        assert sup.snap.warnings[0] == "skipped a non-JSON line from stdout: hello from a chatty server"
        assert (await call_tool(sup, "echo", {"text": "hi"})).text() == "hi"


async def test_an_embedders_auth_factory_replaces_oauth(tmp_path: Path) -> None:
    async with http_server() as server:
        config = write_config(tmp_path / "mcp.json", {"web": {"url": server.url, "lifecycle": "lazy"}})
        async with managed(config) as manager:
            asked: list[str] = []

            def factory(cfg: ServerConfig) -> None:
                asked.append(cfg.name)
                return  # this server needs no credentials

            manager.runtime.auth_factory = factory
            with anyio.fail_after(HANG_GUARD_S):
                sup = await manager.ready("web")
            assert asked == ["web"] and sup.state == State.READY


async def test_a_forgotten_session_is_a_dead_connection_and_reconnects(tmp_path: Path) -> None:
    # A 2025-era HTTP server that restarted answers every request "Session not found" (-32600);
    # the SDK never re-initializes, so orbmcp must treat the session as dead and reconnect.
    from mcp import MCPError

    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry(lifecycle="lazy")})
    async with managed(config, retries=True) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("raw")
            first_pid = sup.process.pid if sup.process else None

            async def forgotten(client: Any) -> None:
                raise MCPError(-32600, "Session not found")

            with pytest.raises(ConnectionFailed, match="no longer knows this session"):
                await request(sup, "tools/call echo", forgotten)
            assert manager.tools.counts("raw") == (2, 0)
            await wait_until(
                lambda: sup.connected and sup.process is not None and sup.process.pid != first_pid,
                timeout=15,
                what="a fresh connection",
            )
            assert manager.tools.counts("raw") == (2, 2)

            async def other_invalid(client: Any) -> None:
                raise MCPError(-32600, "Invalid request: bad params shape")

            with pytest.raises(ProtocolError):  # any other -32600 leaves the connection up
                await request(sup, "tools/call echo", other_invalid)
            assert sup.connected
