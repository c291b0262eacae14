"""After a scripted session (logins, step-up, refresh, failures, corruption, debug log on),
no token, code, verifier, state or client secret is anywhere but the live credential files."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from orbmcp import log
from orbmcp.auth.flow import authorize, logout
from orbmcp.auth.provider import build_auth
from orbmcp.auth.storage import AuthStore
from orbmcp.errors import AuthError
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ASOptions, OAuthTestServer, leaked, make_cfg, running_server
from tests.timeouts import HANG_GUARD_S

CONFIGURED_SECRET = "cs-configured-" + "R2d2C3po" * 5
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}


async def login(srv: OAuthTestServer, home: Path, name: str, **auth: Any) -> None:
    with anyio.fail_after(HANG_GUARD_S):
        await authorize(
            make_cfg(srv.mcp_url, name=name, **auth),
            home,
            reset=False,
            ui=HeadlessBrowser(),
            no_browser=False,
            timeout_s=10,
        )


async def call(srv: OAuthTestServer, home: Path, name: str) -> int:
    provider = build_auth(make_cfg(srv.mcp_url, name=name), home, interactive=False, ui=None)
    with anyio.fail_after(HANG_GUARD_S):
        async with httpx2.AsyncClient(auth=provider, timeout=10) as hc:
            response = await hc.post(srv.mcp_url, json=INIT, headers={"Accept": "application/json"})
    return response.status_code


def expire(home: Path, srv: OAuthTestServer, name: str) -> None:
    store = AuthStore(home, make_cfg(srv.mcp_url, name=name))
    record = store.load()
    assert record is not None and record.tokens is not None
    record.tokens["expires_at"] = 1.0
    store._save(record)


async def test_no_secret_outside_the_credential_store(
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "global"
    monkeypatch.setattr(log, "_state", log._State())
    log.configure(home, enabled=True)
    caplog.set_level(logging.DEBUG)
    errors: list[str] = []
    servers: list[OAuthTestServer] = []

    a_opts = ASOptions(
        token_auth_methods=["client_secret_basic"],
        challenge_scope="files:read",
        required_scopes=["files:read", "files:write"],
        discovery="var1",
    )
    async with (
        running_server(a_opts) as a,
        running_server(ASOptions(iss="wrong")) as b,
        running_server(
            ASOptions(
                preregistered={"pre": (CONFIGURED_SECRET, "client_secret_post", None)},
                token_auth_methods=["client_secret_post"],
            )
        ) as c,
    ):
        servers += [a, b, c]
        await login(a, home, "a")  # DCR with a client secret, then a step-up
        expire(home, a, "a")
        assert await call(a, home, "a") == 200  # refresh after a "restart"
        a.opts.refresh_error = "invalid_grant"
        expire(home, a, "a")
        try:
            await call(a, home, "a")
        except AuthError as err:
            errors.append(err.message)
        a.opts.refresh_error = None
        await login(a, home, "a")
        try:
            await login(b, home, "b")
        except AuthError as err:
            errors.append(err.message)
        await login(c, home, "c", client_id="pre", client_secret=CONFIGURED_SECRET)
        # A half-written record is quarantined (and redacted) on the next read.
        store_c = AuthStore(home, make_cfg(c.mcp_url, name="c"))
        raw = store_c.path.read_bytes()
        store_c.path.write_bytes(raw[: len(raw) // 2])
        assert await store_c.get_tokens() is None and store_c.corrupt_backup is not None
        await login(c, home, "c", client_id="pre", client_secret=CONFIGURED_SECRET)
        await logout(make_cfg(b.mcp_url, name="b"), home)

    assert len(errors) == 2
    needles = {CONFIGURED_SECRET}
    for srv in servers:
        needles |= srv.minted
        needles |= {r.query["state"] for r in srv.authorize_requests()}
    assert len(needles) > 15
    live = {AuthStore(home, make_cfg(s.mcp_url, name=n)).path for s, n in zip(servers, "abc", strict=True)}
    assert any(p.exists() for p in live) and (home / "logs" / "orbmcp.log").exists()
    assert leaked(home, needles, allow=live) == []
    out, err = capfd.readouterr()
    text = "\n".join([out, err, caplog.text, *errors])
    assert [n[:10] for n in needles if n in text] == []
