"""OAuth from the shell, end to end: needs-auth, headless `auth --no-browser`, status, logout.

The authorization server and protected MCP resource run in this process (uvicorn on loopback, on
an event loop of its own in a thread); orbmcp runs whole command lines in-process, as a user would
type them.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, TextIO

import httpx2

from tests.auth.oauth_server import ASOptions, OAuthTestServer, server_thread
from tests.cli import run_cli


def _config(tmp_path: Path, url: str, **extra: Any) -> Path:
    entry: dict[str, Any] = {"url": url, "auth": {"type": "oauth"}, "timeoutMs": 8000, **extra}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"srv": entry}}))
    return path


def _orbmcp(cfg: Path, *args: str, stdin: str | TextIO = "") -> tuple[int, str, str]:
    env = {**os.environ, "ORBMCP_CONFIG": str(cfg)}
    env.pop("CI", None)
    result = run_cli(*args, env=env, stdin=stdin)
    return result.code, result.stdout, result.stderr


def _status(cfg: Path) -> dict[str, Any]:
    code, out, err = _orbmcp(cfg, "status", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["name"] for r in rows] == ["srv"]
    row: dict[str, Any] = rows[0]
    return row


class BrowserAtTheKeyboard(io.TextIOBase):
    """stdin of `orbmcp auth srv --no-browser`: asked for the redirect URL, it opens the
    authorization URL orbmcp printed (the server approves at once) and pastes where it redirected."""

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:
        printed = sys.stderr.buffer.getvalue().decode()  # the command's own stderr, so far
        assert printed.endswith("> "), printed
        match = re.search(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)", printed)
        assert match, printed
        answer = httpx2.get(match.group(1), follow_redirects=False)
        assert answer.status_code == 302
        return answer.headers["location"] + "\n"


def _headless_auth(cfg: Path, srv: OAuthTestServer, *extra: str) -> tuple[int, str, str]:
    """Run `orbmcp auth srv --no-browser`, play the browser, paste the redirect URL on stdin."""
    return _orbmcp(cfg, "auth", "srv", "--no-browser", *extra, stdin=BrowserAtTheKeyboard())


def test_status_then_headless_authorize_then_logout(tmp_path: Path) -> None:
    with server_thread(ASOptions()) as srv:
        cfg = _config(tmp_path, srv.mcp_url)

        row = _status(cfg)
        assert row["state"] == "needs-auth"
        assert row["auth"] == "authorization may be required"
        # Silent start-up registers no client and opens nothing.
        assert srv.count("/register") == 0

        code, out, err = _orbmcp(cfg, "status", "srv")
        assert code == 0, err
        assert "State:  needs-auth" in out and "Hint: orbmcp auth srv" in out
        assert "OAuth: authorization may be required" in out

        code, out, err = _headless_auth(cfg, srv)
        assert code == 0, err
        assert "authorized 'srv'" in out
        assert srv.count("/register") == 1 and len(srv.token_requests("authorization_code")) == 1

        row = _status(cfg)
        assert row["state"] == "ready" and row["auth"] == "credentials stored"
        assert row["tools"]["discovered"] >= 1

        code, out, _ = _orbmcp(cfg, "auth", "srv", "--status", "--json")
        assert code == 0 and json.loads(out)["auth"] == "credentials stored"

        # Nothing secret reached the terminal.
        for secret in srv.minted:
            assert secret not in out and secret not in err

        code, out, err = _orbmcp(cfg, "logout", "srv", "--json")
        assert code == 0, err
        assert json.loads(out)["removed"] is True
        row = _status(cfg)
        assert row["state"] == "needs-auth"


def test_non_interactive_auth_fails_fast_with_exit_5(tmp_path: Path) -> None:
    with server_thread(ASOptions()) as srv:
        cfg = _config(tmp_path, srv.mcp_url)
        code, out, err = _orbmcp(cfg, "auth", "srv", "--json")
        assert code == 5
        assert out == ""
        body = json.loads(err.strip().splitlines()[-1])
        assert body["error"]["code"] == "auth" and body["error"]["server"] == "srv"
        assert "orbmcp auth srv" in body["error"]["hint"]
        assert srv.count("/authorize") == 0 and srv.count("/register") == 0


def test_start_of_unauthorized_server_exits_5_with_hint(tmp_path: Path) -> None:
    with server_thread(ASOptions()) as srv:
        cfg = _config(tmp_path, srv.mcp_url, lifecycle="lazy")
        code, out, err = _orbmcp(cfg, "start", "srv")
        assert code == 5, (out, err)
        assert "needs-auth" in out and "orbmcp auth srv" in out


def test_auth_on_a_server_without_oauth_is_a_usage_error(tmp_path: Path) -> None:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"plain": {"command": "true", "lifecycle": "lazy"}}}))
    code, _, err = _orbmcp(cfg, "auth", "plain")
    assert code == 2 and "not configured for OAuth" in err
    code, _, err = _orbmcp(cfg, "auth", "nosuch")
    assert code == 2 and "unknown server 'nosuch'" in err


def test_auth_status_says_backed_up_only_when_a_backup_exists(tmp_path: Path) -> None:
    from orbmcp.auth.record import record_path

    url = "https://mcp.example.test/mcp"
    cfg = _config(tmp_path, url)
    path = record_path(Path(os.environ["ORB_AGENT_DIR"]), url)
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_text("{ torn")
    path.chmod(0o600)
    code, out, err = _orbmcp(cfg, "auth", "srv", "--status")
    assert code == 0, err
    assert "unusable credential file" in out and "backed up" not in out
    assert not list(path.parent.glob("*.corrupt-*"))
    path.with_name(path.name + ".corrupt-1").write_text("{}")  # as a connection's quarantine leaves it
    path.unlink()
    code, out, err = _orbmcp(cfg, "auth", "srv", "--status")
    assert code == 0 and "corrupt state file backed up" in out, (out, err)
