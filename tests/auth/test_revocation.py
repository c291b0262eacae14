"""`logout` revokes the tokens at the authorization server (RFC 7009) when it advertises a
revocation endpoint, and says so when it does not or when revoking failed; the tokens are
forgotten locally either way."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.auth.flow import authorize, logout
from orbmcp.auth.storage import AuthStore
from orbmcp.commands.results.auth import LoggedOut
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ASOptions, OAuthTestServer, make_cfg, running_server, server_thread
from tests.cli import run_cli
from tests.timeouts import HANG_GUARD_S


async def login(srv: OAuthTestServer, home: Path, **auth: Any) -> dict[str, Any]:
    cfg = make_cfg(srv.mcp_url, **auth)
    with anyio.fail_after(HANG_GUARD_S):
        await authorize(cfg, home, reset=False, ui=HeadlessBrowser(), no_browser=False, timeout_s=10)
    record = AuthStore(home, cfg).load()
    assert record is not None and record.tokens is not None
    return record.tokens


def revocations(srv: OAuthTestServer) -> list[Any]:
    return [r for r in srv.requests if r.path.endswith("/revoke")]


async def test_logout_revokes_refresh_then_access_token(tmp_path: Path) -> None:
    async with running_server(ASOptions(revocation=True)) as srv:
        tokens = await login(srv, tmp_path)
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await logout(make_cfg(srv.mcp_url), tmp_path)
        assert outcome.removed and outcome.revocation.status == "revoked"
        sent = revocations(srv)
        assert [(r.form["token"], r.form["token_type_hint"]) for r in sent] == [
            (tokens["refresh_token"], "refresh_token"),
            (tokens["access_token"], "access_token"),
        ]
        assert all(r.form["client_id"] for r in sent)  # a public client names itself
        assert tokens["refresh_token"] in srv.revoked_refresh and tokens["access_token"] not in srv.access
    assert AuthStore(tmp_path, make_cfg(srv.mcp_url)).load() is None


async def test_a_confidential_client_authenticates_as_at_the_token_endpoint(tmp_path: Path) -> None:
    opts = ASOptions(revocation=True, preregistered={"cid": ("cs-secret-1", "client_secret_basic", None)})
    async with running_server(opts) as srv:
        await login(srv, tmp_path, client_id="cid", client_secret="cs-secret-1")
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await logout(
                make_cfg(srv.mcp_url, client_id="cid", client_secret="cs-secret-1"), tmp_path
            )
        assert outcome.revocation.status == "revoked"
        assert all((r.authorization or "").startswith("Basic ") for r in revocations(srv))


async def test_no_revocation_endpoint_is_said_and_the_tokens_are_forgotten(tmp_path: Path) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await logout(make_cfg(srv.mcp_url), tmp_path)
        assert outcome.removed and outcome.revocation.status == "unsupported"
        assert revocations(srv) == []
    message = LoggedOut("srv", True, "unsupported").message
    assert "offers no token revocation (RFC 7009)" in message and "valid until they expire" in message


async def test_a_failed_revocation_is_said_and_the_tokens_are_still_forgotten(tmp_path: Path) -> None:
    async with running_server(ASOptions(revocation=True, revocation_status=503)) as srv:
        tokens = await login(srv, tmp_path)
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await logout(make_cfg(srv.mcp_url), tmp_path)
    assert outcome.removed and outcome.revocation.status == "failed"
    assert outcome.revocation.detail == "HTTP 503 (temporarily_unavailable)"
    assert tokens["access_token"] not in str(outcome.revocation.detail)
    assert AuthStore(tmp_path, make_cfg(srv.mcp_url)).load() is None


# (A javascript: endpoint makes the whole metadata invalid: no login in the first place.)
@pytest.mark.parametrize("endpoint", ["http://169.254.169.254/revoke", "http://10.0.0.1/revoke"])
async def test_an_unsafe_revocation_endpoint_is_not_contacted(tmp_path: Path, endpoint: str) -> None:
    async with running_server(ASOptions(metadata_extra={"revocation_endpoint": endpoint})) as srv:
        await login(srv, tmp_path)
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await logout(make_cfg(srv.mcp_url), tmp_path)
    assert outcome.revocation.status == "failed" and "refusing to contact" in (
        outcome.revocation.detail or ""
    )


def test_logout_from_the_shell_says_what_happened(tmp_path: Path) -> None:
    with server_thread(ASOptions(revocation=True)) as srv:
        cfg = tmp_path / "mcp.json"
        cfg.write_text(json.dumps({"mcpServers": {"srv": {"url": srv.mcp_url, "auth": {"type": "oauth"}}}}))
        anyio.run(login, srv, tmp_path / "agent")
        env = {**os.environ, "ORBMCP_CONFIG": str(cfg), "ORB_AGENT_DIR": str(tmp_path / "agent")}
        text = run_cli("logout", "srv", env=env)
        assert text.code == 0, text.stderr
        assert (
            text.stdout.strip() == "revoked the tokens of 'srv' at its authorization server and forgot them"
        )
        again = run_cli("logout", "srv", "--json", env=env)
        body = json.loads(again.stdout)
        assert (body["removed"], body["revocation"]) == (False, "none")
