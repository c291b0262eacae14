"""`auth` / `logout` handlers in-process, and the OAuth status line in each of its states.

The authorization server and the protected MCP resource are the real loopback server of
``tests/auth/oauth_server.py``; the browser is ``HeadlessBrowser`` (it follows the redirect itself).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from orbmcp.auth.flow import authorize, logout
from orbmcp.auth.record import record_path
from orbmcp.auth.status import (
    CORRUPT,
    CREDENTIALS_STORED,
    MAY_BE_REQUIRED,
    NOT_CONFIGURED,
    UNUSABLE,
    auth_status,
)
from orbmcp.auth.storage import AuthStore
from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers import auth as handlers
from orbmcp.config.loader import load_config
from orbmcp.config.model import AuthConfig, ServerConfig
from orbmcp.errors import AuthError, ConnectionFailed, TimeoutFailed, UsageError
from orbmcp.session.persistent import PersistentSessions
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ASOptions, make_cfg, running_server
from tests.servers.launch import http_server
from tests.timeouts import HANG_GUARD_S


class BrowserUI:
    """A person at a terminal whose browser approves whatever it is shown."""

    interactive = True

    def __init__(self) -> None:
        self.browser = HeadlessBrowser()
        self.notices: list[str] = []

    def confirm(self, question: str, *, default: bool = False) -> bool:
        return True

    def choose(self, question: str, options: list[str]) -> str | None:
        return options[0] if options else None

    def notify(self, message: str, *, level: str = "info") -> None:
        self.notices.append(message)

    def open_url(self, url: str) -> bool:
        return self.browser.open_url(url)

    def show_url(self, url: str) -> None:
        self.browser.show_url(url)

    def prompt_paste(self, message: str) -> str | None:
        return self.browser.prompt_paste()

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        pass


class NobodyUI(BrowserUI):
    interactive = False


def _config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def _oauth_entry(url: str, **extra: Any) -> dict[str, Any]:
    return {"url": url, "auth": {"type": "oauth"}, "timeoutMs": 8000, **extra}


def _ctx(config: Path, ui: Any = None, sessions: Any = None) -> CommandContext:
    return CommandContext(ui=ui or NobodyUI(), sessions=sessions, config_file=config)


# --- auth --status / logout without a session -------------------------------------------------------


async def test_auth_status_and_logout_with_nothing_stored(tmp_path: Path) -> None:
    config = _config(tmp_path, {"srv": _oauth_entry("http://127.0.0.1:9/mcp")})
    ctx = _ctx(config)
    status = await handlers.auth(ctx, "srv", status=True)
    assert status.message == "srv: authorization may be required"
    assert status.fields() == {"server": "srv", "auth": MAY_BE_REQUIRED}
    with anyio.fail_after(HANG_GUARD_S):
        out = await handlers.logout(ctx, "srv")
    assert out.message == "no credentials were stored for 'srv'"
    assert out.fields() == {"server": "srv", "removed": False, "revocation": "none"}


async def test_auth_refuses_unknown_and_non_oauth_servers(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        {
            "plain": {"command": "true", "lifecycle": "lazy"},
            "web": {"url": "https://example.invalid/mcp", "lifecycle": "lazy"},
            "gh": _oauth_entry("https://example.invalid/gh", lifecycle="lazy"),
        },
    )
    ctx = _ctx(config)
    for name in ("plain", "web"):
        with pytest.raises(UsageError) as caught:
            await handlers.auth(ctx, name)
        assert caught.value.message == f"server '{name}' is not configured for OAuth"
        assert caught.value.hint == 'add "auth": {"type": "oauth"} to its entry (HTTP servers only)'
    with pytest.raises(UsageError) as unknown:
        await handlers.logout(ctx, "gh2")
    assert "unknown server 'gh2'" in unknown.value.message
    assert "gh" in (unknown.value.hint or "") and "plain" not in (unknown.value.hint or "")


async def test_non_interactive_auth_fails_fast_without_touching_the_network(tmp_path: Path) -> None:
    async with running_server() as srv:
        config = _config(tmp_path, {"srv": _oauth_entry(srv.mcp_url)})
        with pytest.raises(AuthError) as caught:
            await handlers.auth(_ctx(config), "srv")
        assert caught.value.message == "server 'srv' needs an interactive authorization"
        assert "--no-browser" in (caught.value.hint or "")
        assert srv.requests == [] and srv.mcp_hits == 0


async def test_auth_reports_a_corrupt_state_file_and_replaces_it(
    tmp_path: Path, _isolated_agent_dir: Path
) -> None:
    async with running_server() as srv:
        config = _config(tmp_path, {"srv": _oauth_entry(srv.mcp_url)})
        record = record_path(_isolated_agent_dir, srv.mcp_url)
        record.parent.mkdir(parents=True, mode=0o700)
        record.write_text('{"version": 1, "server_url": ')  # a write cut short
        ctx = _ctx(config, BrowserUI())
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await handlers.auth(ctx, "srv")
        data = outcome.fields()
        backup = data["corruptBackup"]
        assert backup is not None and Path(backup).name.startswith(record.name + ".corrupt-")
        assert outcome.message == f"authorized 'srv' (a corrupt state file was backed up to {backup})"
        assert data["status"] == "authorized" and "state" not in data
        assert isinstance(data["expiresAt"], float) and data["expiresAt"] > time.time()
        status = await handlers.auth(ctx, "srv", status=True)
        assert status.fields()["auth"] == CREDENTIALS_STORED

        with anyio.fail_after(HANG_GUARD_S):
            again = await handlers.auth(ctx, "srv")
        assert again.fields()["status"] == "already-authorized" and again.fields()["corruptBackup"] is None
        assert again.message == "'srv' is already authorized"

        with anyio.fail_after(HANG_GUARD_S):
            out = await handlers.logout(ctx, "srv")
        assert out.fields()["removed"] is True and out.fields()["revocation"] == "unsupported"
        assert out.message.startswith("forgot the stored credentials of 'srv'; its authorization server")
        assert not record.exists()


async def test_auth_in_a_persistent_session_restarts_the_server(tmp_path: Path) -> None:
    async with running_server() as srv:
        config_path = _config(tmp_path, {"srv": _oauth_entry(srv.mcp_url)})
        config = load_config(config_file=config_path)
        ui = BrowserUI()
        async with PersistentSessions(config, ui=ui, retries=False) as sessions:
            ctx = _ctx(config_path, ui, sessions)
            ctx.set_config(config)
            manager = await sessions.manager()
            with anyio.fail_after(HANG_GUARD_S):
                while manager.get("srv").state not in ("needs-auth", "failed"):
                    await anyio.sleep(0.02)  # the eager connect settles on needs-auth
            assert manager.get("srv").state == "needs-auth"
            with anyio.fail_after(HANG_GUARD_S):
                outcome = await handlers.auth(ctx, "srv")
            assert outcome.fields()["state"] == "ready"
            assert outcome.message == "authorized 'srv'; srv is ready"
            assert manager.tools.counts("srv") == (1, 1)
        assert len(ui.browser.opened) == 1 and srv.count("/register") == 1


# --- the status line -----------------------------------------------------------------------------


def _store(home: Path, url: str, **tokens: Any) -> AuthStore:
    store = AuthStore(home, make_cfg(url))
    record = store._current()
    record.tokens = {"access_token": "at-1234567890abcdef", "token_type": "Bearer", **tokens}
    store._save(record)
    return store


def test_status_line_for_each_stored_state(tmp_path: Path) -> None:
    url = "https://mcp.example.test/mcp"
    cfg = make_cfg(url)
    assert (
        auth_status(ServerConfig(name="srv", transport="streamable-http", url=url), tmp_path)
        == NOT_CONFIGURED
    )
    assert auth_status(cfg, tmp_path) == MAY_BE_REQUIRED

    store = _store(tmp_path, url, expires_at=time.time() + 3600)
    assert auth_status(cfg, tmp_path) == CREDENTIALS_STORED
    _store(tmp_path, url, expires_at=time.time() - 10)
    assert auth_status(cfg, tmp_path) == MAY_BE_REQUIRED  # expired, nothing to refresh with
    _store(tmp_path, url, expires_at=time.time() - 10, refresh_token="rt-abcdef1234567890")
    assert auth_status(cfg, tmp_path) == CREDENTIALS_STORED  # a refresh will renew it

    store.path.write_text("{ torn")
    assert auth_status(cfg, tmp_path) == UNUSABLE  # not backed up yet: no backup exists
    assert not list(store.path.parent.glob("*.corrupt-*"))
    assert store.load() is None and store.corrupt_backup is not None  # quarantined
    assert auth_status(cfg, tmp_path) == CORRUPT  # until authorized again
    _store(tmp_path, url)
    # The line follows the record stored now, whatever the clocks say about the old backup.
    os.utime(store.corrupt_backup, (4e9, 4e9))
    assert auth_status(cfg, tmp_path) == CREDENTIALS_STORED


def test_status_line_of_an_unusable_file(tmp_path: Path) -> None:
    url = "https://mcp.example.test/mcp"
    cfg = make_cfg(url)
    path = record_path(tmp_path, url)
    path.parent.mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere.json", path)
    assert auth_status(cfg, tmp_path) == UNUSABLE  # a symlink is no usable credential, and no backup
    path.unlink()
    other = AuthStore(tmp_path, make_cfg("https://other.example.test/mcp"))
    record = other._current()
    record.tokens = {"access_token": "at-x"}
    path.write_text(json.dumps(record.to_json()))  # another server's record under this name
    assert auth_status(cfg, tmp_path) == MAY_BE_REQUIRED


# --- flow outcomes ---------------------------------------------------------------------------------


async def test_a_server_that_needs_no_authorization_says_so(tmp_path: Path) -> None:
    async with http_server() as server:
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await authorize(
                make_cfg(server.url), tmp_path, reset=False, ui=HeadlessBrowser(), no_browser=False
            )
    assert outcome.status == "not-required" and outcome.scope is None and outcome.expires_at is None
    assert outcome.message == "'srv' accepted the request without authorization"


async def test_a_server_that_still_refuses_after_login_is_an_auth_error(tmp_path: Path) -> None:
    async with running_server(ASOptions(always_insufficient=True)) as srv:
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(AuthError) as caught:
            await authorize(
                make_cfg(srv.mcp_url), tmp_path, reset=False, ui=HeadlessBrowser(), no_browser=False
            )
        # Bounded: a person is not sent through the browser forever.
        assert len(srv.authorize_requests()) <= 3
    assert (
        caught.value.message
        == "server 'srv' still refuses after 3 authorization attempts (needs scope admin)"
    )
    assert caught.value.hint == "check that your account may use scope admin"


async def test_an_unreachable_server_is_a_connection_error_and_logout_is_idempotent(tmp_path: Path) -> None:
    cfg = make_cfg("http://127.0.0.1:9/mcp")
    with anyio.fail_after(HANG_GUARD_S), pytest.raises(ConnectionFailed) as caught:
        await authorize(cfg, tmp_path, reset=True, ui=HeadlessBrowser(), no_browser=False)
    assert caught.value.message.startswith("cannot reach server 'srv':")
    assert not await logout(cfg, tmp_path)


async def test_a_server_that_never_answers_is_a_timeout(tmp_path: Path) -> None:
    accepted: list[object] = []
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)

        async def hold(stream: anyio.abc.SocketStream) -> None:
            accepted.append(stream)  # read nothing, answer nothing
            await anyio.sleep_forever()

        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, hold)
            cfg = ServerConfig(
                name="slow",
                transport="streamable-http",
                url=f"http://127.0.0.1:{port}/mcp",
                auth=AuthConfig(),
                timeout_ms=300,
                request_timeout_ms=300,
            )
            with anyio.fail_after(HANG_GUARD_S), pytest.raises(TimeoutFailed) as caught:
                await authorize(cfg, tmp_path, reset=False, ui=HeadlessBrowser(), no_browser=False)
            tg.cancel_scope.cancel()
    assert caught.value.message == "server 'slow' did not answer in time"
    assert accepted  # it did connect: the request itself went unanswered
