"""Supervisor and Manager paths the main lifecycle tests do not reach: a token refused mid-session,
health checks on a 2026-07-28 session, idle controls, masked configured secrets, a closed session.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from orbmcp.auth.flow import authorize
from orbmcp.core.session.manager import Manager
from orbmcp.core.session.state import State
from orbmcp.core.tooling.calls import call_tool
from orbmcp.errors import AuthError, ConnectionFailed, UsageError
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ASOptions, make_cfg, running_server
from tests.core.live import load, managed, raw_entry, stdio_entry, wait_until, write_config
from tests.servers.launch import NOT_FORKED
from tests.timeouts import HANG_GUARD_S


async def test_a_token_refused_mid_session_asks_for_authorization(
    tmp_path: Path, _isolated_agent_dir: Path
) -> None:
    # No refresh token: once the access token expires nothing can renew it silently.
    async with running_server(ASOptions(issue_refresh=False)) as srv:
        with anyio.fail_after(HANG_GUARD_S):
            await authorize(
                make_cfg(srv.mcp_url),
                _isolated_agent_dir,
                reset=False,
                ui=HeadlessBrowser(),
                no_browser=False,
            )
        path = write_config(
            tmp_path / "mcp.json",
            {"srv": {"url": srv.mcp_url, "auth": {"type": "oauth"}, "lifecycle": "lazy"}},
        )
        async with managed(path) as manager:
            with anyio.fail_after(HANG_GUARD_S):
                sup = await manager.ready("srv")
                assert (await call_tool(sup, "whoami", None)).text() == "you are authorized"
                srv.expire_all_access_tokens()
                with pytest.raises(AuthError) as caught:
                    await call_tool(sup, "whoami", None)
            # The request was refused, not lost: the caller is told how to re-authorize.
            assert caught.value.message == "server 'srv' needs authorization; run `orbmcp auth srv`"
            assert caught.value.hint == "orbmcp auth srv"
            assert manager.tools.counts("srv") == (1, 0)  # deactivated at once
            await wait_until(lambda: sup.state == State.NEEDS_AUTH, what="needs-auth")
            assert sup.snap.last_error == "server 'srv' needs authorization; run `orbmcp auth srv`"
            assert sup.snap.last_error_code == "auth"
            # Starting it again does not open a browser: it stays in needs-auth.
            with anyio.fail_after(HANG_GUARD_S):
                assert (await manager.start("srv")).state == State.NEEDS_AUTH
        assert srv.count("/authorize") == 1  # only the explicit authorize above


async def test_health_checks_on_a_modern_session_detect_a_frozen_server(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "mcp.json",
        # its own process, not a fork: SIGSTOP must freeze the server itself
        {"e": stdio_entry("everything", lifecycle="lazy", healthCheckIntervalMs=300, env=NOT_FORKED)},
    )
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("e")
        assert sup.snap.protocol_version == "2026-07-28"  # checks list tools: there is no ping
        assert sup.process is not None
        # Frozen, not dead: only a health check can notice (its process has not exited).
        os.kill(sup.process.pid, signal.SIGSTOP)
        await wait_until(lambda: sup.state == State.FAILED, timeout=10, what="the check to fail")
        assert (sup.snap.last_error or "").startswith("health check failed: ")
        assert manager.tools.counts("e")[1] == 0 and sup.process is None  # stopped, group killed


async def test_a_failed_rediscovery_keeps_the_old_tools_and_says_why(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry(lifecycle="lazy", requestTimeoutMs=1000)})
    async with managed(config) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.ready("raw")
        assert sup.process is not None
        os.kill(sup.process.pid, signal.SIGSTOP)
        try:
            sup.request_rediscovery()
            await wait_until(lambda: len(sup.snap.warnings) > 0, timeout=10, what="the refresh to fail")
        finally:
            os.kill(sup.process.pid, signal.SIGCONT)
        assert sup.snap.warnings[-1] == "re-discovery failed: server 'raw' did not answer in time"
        assert sup.connected and manager.tools.counts("raw") == (2, 2)


async def test_idle_controls_and_a_closed_session(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry(lifecycle="lazy")})
    async with managed(config) as manager:
        sup = manager.get("raw")
        assert sup.retry_now() is False  # nothing is waiting for a retry
        with anyio.fail_after(HANG_GUARD_S):
            await sup.stop()  # never started: nothing to wait for
        assert sup.state == State.STOPPED and not sup.running
        with pytest.raises(UsageError, match="unknown server 'rwa'"):
            manager.get("rwa")
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_many(["raw"])
            await manager.start_many(["raw"])  # already running: joins, does not spawn again
        assert sup.connected and sup.snap.started_at is not None
        first_start = sup.snap.started_at
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_many(["raw"])
        assert sup.snap.started_at == first_start
    with pytest.raises(ConnectionFailed, match="the session is closed"):
        await manager.start("raw")


def test_configured_secrets_are_masked_in_what_servers_echo(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "mcp.json",
        {
            "web": {
                "url": "https://h.test/mcp",
                "headers": {"Authorization": "Bearer abcd1234efgh", "X-Short": "abc"},
                "auth": {"type": "oauth", "clientId": "c", "clientSecret": "cs-topsecret-99"},
            },
            "local": {"command": "x", "env": {"API_KEY": "k-55556666"}},
        },
    )
    manager = Manager(load(config))
    secrets = manager.runtime.extra_secrets
    assert set(secrets) == {"Bearer abcd1234efgh", "abcd1234efgh", "cs-topsecret-99", "k-55556666"}
    assert list(secrets) == sorted(secrets, key=len, reverse=True)  # longest first
    text = manager.runtime.redact("server said: cs-topsecret-99 / abcd1234efgh / k-55556666 / abc")
    for secret in ("cs-topsecret-99", "abcd1234efgh", "k-55556666"):
        assert secret not in text
    assert text.endswith("/ abc")  # too short to be a secret
