"""OAuth from the shell, end to end: needs-auth, headless `auth --no-browser`, status, logout.

The authorization server and protected MCP resource run in this process (uvicorn on loopback);
orbmcp runs as a real subprocess, as a user would run it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.auth.oauth_server import ASOptions, OAuthTestServer, running_server

pytestmark = pytest.mark.anyio


def _config(tmp_path: Path, url: str, **extra: Any) -> Path:
    entry: dict[str, Any] = {"url": url, "auth": {"type": "oauth"}, "timeoutMs": 8000, **extra}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"srv": entry}}))
    return path


async def _orbmcp(
    cfg: Path, *args: str, stdin: bytes | None = None, timeout: float = 30
) -> tuple[int, str, str]:
    env = {**os.environ, "ORBMCP_CONFIG": str(cfg)}
    env.pop("CI", None)
    with anyio.fail_after(timeout):
        result = await anyio.run_process(
            [sys.executable, "-m", "orbmcp", *args], input=stdin or b"", env=env, check=False
        )
    return result.returncode, result.stdout.decode(), result.stderr.decode()


async def _status(cfg: Path) -> dict[str, Any]:
    code, out, err = await _orbmcp(cfg, "status", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["name"] for r in rows] == ["srv"]
    row: dict[str, Any] = rows[0]
    return row


async def _headless_auth(cfg: Path, srv: OAuthTestServer, *extra: str) -> tuple[int, str, str]:
    """Run `orbmcp auth srv --no-browser`, play the browser, paste the redirect URL on stdin."""
    env = {**os.environ, "ORBMCP_CONFIG": str(cfg)}
    async with await anyio.open_process(
        [sys.executable, "-m", "orbmcp", "auth", "srv", "--no-browser", *extra], env=env
    ) as proc:
        assert proc.stdin and proc.stdout and proc.stderr
        err = b""
        with anyio.fail_after(30):
            while b"/authorize?" not in err or not err.endswith(b"> "):
                chunk = await proc.stderr.receive()
                err += chunk
            match = re.search(rb"(http://127\.0\.0\.1:\d+/authorize\?\S+)", err)
            assert match, err
            async with httpx2.AsyncClient(follow_redirects=False) as http:
                answer = await http.get(match.group(1).decode())
            assert answer.status_code == 302
            await proc.stdin.send(answer.headers["location"].encode() + b"\n")
            await proc.stdin.aclose()
            out = b""
            async for chunk in proc.stdout:
                out += chunk
            async for chunk in proc.stderr:
                err += chunk
            code = await proc.wait()
    return code, out.decode(), err.decode()


async def test_status_then_headless_authorize_then_logout(tmp_path: Path) -> None:
    async with running_server(ASOptions()) as srv:
        cfg = _config(tmp_path, srv.mcp_url)

        row = await _status(cfg)
        assert row["state"] == "needs-auth"
        assert row["auth"] == "authorization may be required"
        # Silent start-up registers no client and opens nothing.
        assert srv.count("/register") == 0

        code, out, err = await _orbmcp(cfg, "status", "srv")
        assert code == 0, err
        assert "State:  needs-auth" in out and "Hint: orbmcp auth srv" in out
        assert "OAuth: authorization may be required" in out

        code, out, err = await _headless_auth(cfg, srv)
        assert code == 0, err
        assert "authorized 'srv'" in out
        assert srv.count("/register") == 1 and len(srv.token_requests("authorization_code")) == 1

        row = await _status(cfg)
        assert row["state"] == "ready" and row["auth"] == "credentials stored"
        assert row["tools"]["discovered"] >= 1

        code, out, _ = await _orbmcp(cfg, "auth", "srv", "--status", "--json")
        assert code == 0 and json.loads(out)["auth"] == "credentials stored"

        # Nothing secret reached the terminal.
        for secret in srv.minted:
            assert secret not in out and secret not in err

        code, out, err = await _orbmcp(cfg, "logout", "srv", "--json")
        assert code == 0, err
        assert json.loads(out)["removed"] is True
        row = await _status(cfg)
        assert row["state"] == "needs-auth"


async def test_non_interactive_auth_fails_fast_with_exit_5(tmp_path: Path) -> None:
    async with running_server(ASOptions()) as srv:
        cfg = _config(tmp_path, srv.mcp_url)
        code, out, err = await _orbmcp(cfg, "auth", "srv", "--json")
        assert code == 5
        assert out == ""
        body = json.loads(err.strip().splitlines()[-1])
        assert body["error"]["code"] == "auth" and body["error"]["server"] == "srv"
        assert "orbmcp auth srv" in body["error"]["hint"]
        assert srv.count("/authorize") == 0 and srv.count("/register") == 0


async def test_start_of_unauthorized_server_exits_5_with_hint(tmp_path: Path) -> None:
    async with running_server(ASOptions()) as srv:
        cfg = _config(tmp_path, srv.mcp_url, lifecycle="lazy")
        code, out, err = await _orbmcp(cfg, "start", "srv")
        assert code == 5, (out, err)
        assert "needs-auth" in out and "orbmcp auth srv" in out


async def test_auth_on_a_server_without_oauth_is_a_usage_error(tmp_path: Path) -> None:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"plain": {"command": "true", "lifecycle": "lazy"}}}))
    code, _, err = await _orbmcp(cfg, "auth", "plain")
    assert code == 2 and "not configured for OAuth" in err
    code, _, err = await _orbmcp(cfg, "auth", "nosuch")
    assert code == 2 and "unknown server 'nosuch'" in err
