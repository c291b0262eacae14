"""status / start / reconnect / check handlers in-process, and the views they build.

Handlers run with a real CommandContext and a one-shot or persistent session over raw.py servers;
the status views are checked as data (ServerDetail, StatusReport) and as rendered plain text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers import check as check_handler
from orbmcp.commands.handlers import status as handlers
from orbmcp.commands.results.status import ServerDetail, StatusReport
from orbmcp.commands.spelling import spell_for
from orbmcp.commands.views import auth_line, project_notice, status_report
from orbmcp.config.loader import load_config
from orbmcp.config.model import AuthConfig, ServerConfig
from orbmcp.config.settings import Settings
from orbmcp.core.session.hints import failure_error, hint_for
from orbmcp.core.session.runtime import Runtime
from orbmcp.core.session.state import State
from orbmcp.core.session.supervisor import Supervisor
from orbmcp.core.tooling.registry import ToolRegistry
from orbmcp.errors import ConnectionFailed, ProtocolError, UsageError, cmd, spell
from orbmcp.render.plain import render_plain
from orbmcp.session.one_shot import OneShotSessions
from orbmcp.session.persistent import PersistentSessions
from tests.core.live import FAST_GRACE_S, raw_entry, write_config
from tests.timeouts import HANG_GUARD_S
from tests.ui import SilentUI


class QuietUI(SilentUI):
    """A UI nobody answers (what a CI run or an agent without prompts has)."""

    def __init__(self) -> None:
        self.notices: list[str] = []

    def notify(self, message: str, *, level: str = "info") -> None:
        self.notices.append(message)

    def show_url(self, url: str) -> None:
        self.notices.append(url)


async def _one_shot(config: Path, fn: Any, *args: Any, **kwargs: Any) -> Any:
    sessions = OneShotSessions()
    ctx = CommandContext(ui=QuietUI(), sessions=sessions, config_file=config, front="cli")
    # One scope around both: the manager's task group must be left in the scope it was entered in.
    with anyio.fail_after(HANG_GUARD_S):
        try:
            return await fn(ctx, *args, **kwargs)
        finally:
            await sessions.__aexit__(None, None, None)


async def test_detail_of_an_eager_server_connects_it_for_the_one_shot_view(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"up": raw_entry("--stderr-lines", "2")})
    detail = await _one_shot(config, handlers.status, "up")
    assert isinstance(detail, ServerDetail)
    assert (detail.state, detail.tools.discovered, detail.tools.active) == ("ready", 2, 2)
    assert detail.protocol_version == "2025-11-25" and detail.server_info == "raw 1.0.0"
    assert detail.oauth is None and detail.hint is None and detail.last_error is None
    assert len(detail.tool_names) == 2
    # The server's stderr is kept, redacted (raw.py prints a fake bearer token).
    assert any("raw stderr line 0" in line for line in detail.recent_output)
    assert not any("SECRET123" in line for line in detail.recent_output)
    text = render_plain(detail)
    assert "State:  ready" in text and "Protocol: 2025-11-25 (raw 1.0.0)" in text
    assert "Recent output:" in text and "OAuth:" not in text


async def test_status_of_everything_one_shot_reports_and_says_it_stopped_again(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "mcp.json",
        {
            "up": raw_entry(),
            "idle": raw_entry(lifecycle="lazy"),
            "gone": {"command": str(tmp_path / "missing-binary")},
            "off": raw_entry(enabled=False),
        },
    )
    report = await _one_shot(config, handlers.status)
    assert isinstance(report, StatusReport) and report.stopped_after
    states = {r.name: r.state for r in report.rows}
    assert states == {"up": "ready", "idle": "stopped", "gone": "failed", "off": "disabled"}
    gone = next(r for r in report.rows if r.name == "gone")
    assert gone.error is not None and "command not found" in gone.error
    text = render_plain(report)
    assert text.startswith("MCP servers (4):")
    assert "    last error: server 'gone': command not found" in text
    assert text.endswith("(one-shot: servers started for this report were stopped again)")
    with pytest.raises(UsageError, match="unknown server 'upp'"):
        await _one_shot(config, handlers.status, "upp")


async def test_detail_of_a_disabled_server_needs_no_session(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"off": raw_entry(enabled=False)})
    ctx = CommandContext(ui=QuietUI(), sessions=None, config_file=config)
    detail = await handlers.status(ctx, "off")
    assert isinstance(detail, ServerDetail)
    assert (detail.state, detail.lifecycle, detail.retries) == ("disabled", "lazy (disabled)", 0)
    assert "(no stderr output from off)" in render_plain(detail)


async def test_check_names_missing_tools_and_servers_not_ready(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "mcp.json", {"raw": raw_entry(), "gone": {"command": str(tmp_path / "missing-binary")}}
    )
    report = await _one_shot(
        config, check_handler.check, require_tool=["raw/echo", "echo", "raw/missing", "other/echo"]
    )
    assert not report.ok and report.exit_code == 1
    body = report.to_json()
    assert body["missingTools"] == ["raw/missing", "other/echo"]
    assert report.problems[0].startswith("gone: failed (server 'gone': command not found")
    assert report.problems[1:] == ("required tool missing: raw/missing", "required tool missing: other/echo")
    assert [s["name"] for s in body["servers"]] == ["raw", "gone"] and body["ok"] is False

    good = await _one_shot(config, check_handler.check, servers=["raw"], require_tool=["raw/echo"])
    assert good.ok and good.exit_code == 0 and good.to_json()["missingTools"] == []

    # A disabled server is reported, as skipped: the check passes without connecting it.
    empty = write_config(tmp_path / "empty.json", {"off": raw_entry(enabled=False)})
    nothing = await _one_shot(empty, check_handler.check)
    assert nothing.ok and [(s.name, s.verdict) for s in nothing.servers] == [("off", "disabled")]
    none_at_all = await _one_shot(write_config(tmp_path / "none.json", {}), check_handler.check)
    assert none_at_all.problems == ("no server to check",) and none_at_all.exit_code == 1


async def test_persistent_session_start_stop_reconnect_everything(tmp_path: Path) -> None:
    config_path = write_config(tmp_path / "mcp.json", {"a": raw_entry(), "b": raw_entry(lifecycle="lazy")})
    config = load_config(config_file=config_path)
    async with PersistentSessions(config, start_eager=False, retries=False) as sessions:
        manager = await sessions.manager()
        manager.runtime.stdin_grace_s = manager.runtime.term_grace_s = FAST_GRACE_S
        ctx = CommandContext(ui=QuietUI(), sessions=sessions, config_file=config_path, front="slash")
        ctx.set_config(config)
        with anyio.fail_after(HANG_GUARD_S):
            started = await handlers.start(ctx, "b")
            assert started.message is None and started.exit_code == 0  # nothing is stopped again
            report = await handlers.status(ctx)
            assert isinstance(report, StatusReport) and not report.stopped_after
            # A persistent status does not connect eager servers behind the user's back.
            assert {r.name: r.state for r in report.rows} == {"a": "stopped", "b": "ready"}
            again = await handlers.reconnect(ctx)  # no name: every running or eager server
            assert sorted(d.name for d in again.details) == ["a", "b"]
            assert {d.state for d in again.details} == {"ready"} and again.message is None
            stopped = await handlers.stop(ctx, "a")
        assert stopped.exit_code == 0 and stopped.details[0].state == "stopped"
        assert render_plain(stopped).split()[:2] == ["a", "stopped"]
        assert "stopped 'a'; its tools are inactive" in render_plain(stopped)


def test_views_name_an_untrusted_project_and_a_disabled_extension(
    tmp_path: Path, _isolated_agent_dir: Path
) -> None:
    _isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    (_isolated_agent_dir / "settings.json").write_text(
        json.dumps(
            {
                "goExtensions": {"mcp": False},
                "mcpServers": {
                    "web": {
                        "url": "https://example.invalid/mcp",
                        "auth": {"type": "oauth"},
                        "enabled": False,
                    },
                    "bad": {"command": 42},
                },
            }
        )
    )
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    (project / ".orb" / "mcp.json").write_text(json.dumps({"mcpServers": {"p": {"command": "evil"}}}))
    config = load_config(project=project, cwd=project)
    assert project_notice(config) == str(project / ".orb")
    report = status_report(config, None)
    # The invalid entry and the untrusted project's server are rows that say what they are.
    assert [(r.name, r.state) for r in report.rows] == [
        ("web", "disabled"),
        ("bad", "invalid"),
        ("p", "untrusted"),
    ]
    assert report.rows[1].error == '"command" must be a string, not a number'
    assert report.rows[2].hint == "review and approve the project's servers: `orbmcp trust`"
    assert report.rows[0].auth == auth_line(config.servers["web"], config) == "authorization may be required"
    assert report.notices[0] == (
        f"Project config: not loaded ({project / '.orb'}) — run `orbmcp trust` to review and approve it"
    )
    assert report.notices[1:] == ("MCP is turned off (goExtensions.mcp: false)",)
    text = render_plain(report)
    assert "Project config: not loaded" in text and "MCP is turned off" in text


# --- hints -----------------------------------------------------------------------------------------


def _sup(tmp_path: Path, **cfg: Any) -> Supervisor:
    runtime = Runtime(global_dir=tmp_path, tools=ToolRegistry(prefix="mcp"))
    entry: dict[str, Any] = {"name": "x", "transport": "streamable-http", "url": "https://h.test/mcp", **cfg}
    return Supervisor(ServerConfig(**entry), Settings(), runtime)


def _at(
    sup: Supervisor, state: State, error: str | None, code: str | None, reason: str | None = None
) -> Supervisor:
    # What the owner task records after an attempt; hints read nothing else.
    sup.snap.state, sup.snap.last_error, sup.snap.last_error_code = state, error, code
    sup.snap.last_error_reason = reason
    return sup


def test_one_hint_per_state_and_front(tmp_path: Path) -> None:
    oauth = {"auth": AuthConfig()}
    ready = _at(_sup(tmp_path), State.READY, None, None)
    assert hint_for(ready) is None
    locked = _at(_sup(tmp_path, **oauth), State.NEEDS_AUTH, "lock held", "auth", "lock_timeout")
    assert (
        hint_for(locked)
        == f"another orbmcp process is authorizing 'x'; wait for it, then {cmd('start', 'x')}"
    )
    assert spell_for(hint_for(locked) or "", "cli") == (
        "another orbmcp process is authorizing 'x'; wait for it, then orbmcp start x"
    )
    assert (spell_for(hint_for(locked) or "", "slash") or "").endswith("then /mcp:start x")
    expired = _at(_sup(tmp_path, **oauth), State.NEEDS_AUTH, "refresh failed", "auth", "invalid_grant")
    assert hint_for(expired) == cmd("auth", "x", "--reset")  # the front spells it
    assert spell(hint_for(expired) or "") == "orbmcp auth x --reset"
    assert spell_for(hint_for(expired) or "", "host") == "/mcp:auth x --reset"
    # The reason decides, not the words of the message.
    worded = _at(_sup(tmp_path, **oauth), State.NEEDS_AUTH, "token expired (invalid_client); lock", "auth")
    assert hint_for(worded) == cmd("auth", "x")
    header = _at(_sup(tmp_path, headers={"Authorization": "Bearer t"}), State.FAILED, "HTTP 401", "auth")
    assert (
        hint_for(header)
        == "the server refused the Authorization header configured for 'x'; check its headers"
    )
    bare = _at(_sup(tmp_path), State.FAILED, "HTTP 401", "auth")
    assert hint_for(bare) == (
        'the server requires authorization: add "auth": {"type": "oauth"} to the entry of \'x\', '
        "or an Authorization header"
    )
    config = _at(_sup(tmp_path), State.FAILED, "bad entry", "config")
    assert spell_for(hint_for(config) or "", "cli") == "fix the entry shown by `orbmcp config validate`"
    assert spell_for(hint_for(config) or "", "slash") == "fix the entry shown by `/mcp config validate`"


def test_failure_errors_carry_the_class_of_the_last_error(tmp_path: Path) -> None:
    protocol = failure_error(_at(_sup(tmp_path), State.FAILED, "sent garbage", "protocol"))
    assert isinstance(protocol, ProtocolError) and protocol.message == "server 'x': sent garbage"
    stopped = failure_error(_at(_sup(tmp_path), State.STOPPED, None, None))
    assert isinstance(stopped, ConnectionFailed) and stopped.message == "server 'x' is stopped"
    assert stopped.hint is None
    named = failure_error(_at(_sup(tmp_path), State.FAILED, "x exited (code 1)", "connection"))
    assert named.message == "x exited (code 1)"  # already names the server: not prefixed twice
    exited = failure_error(_at(_sup(tmp_path), State.FAILED, "x exited", "connection", "server_exited"))
    assert exited.reason == "server_exited"  # the reason of the last error travels with it
    mismatched = failure_error(
        _at(_sup(tmp_path), State.NEEDS_AUTH, "closed", "connection", "connection_closed")
    )
    assert mismatched.code == "auth" and mismatched.reason == "auth"  # never another kind's reason


# --- one-shot sessions -----------------------------------------------------------------------------


async def test_one_shot_sessions_reuse_one_manager_and_close_it(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"off": raw_entry(enabled=False)})
    ctx = CommandContext(ui=QuietUI(), config_file=config)
    with anyio.fail_after(HANG_GUARD_S):
        async with OneShotSessions() as sessions:
            first = await sessions.manager(ctx)
            assert await sessions.manager(ctx) is first
            assert first.runtime.retries_enabled is False  # one-shot: report the first attempt
    assert sessions._manager is None and first._tg is None


def test_a_ready_server_with_warnings_says_so_in_the_overview() -> None:
    import io

    from rich.console import Console

    from orbmcp.commands.results.status import StatusReport, StatusRow, ToolCounts
    from orbmcp.render.rich_view import render_rich

    row = StatusRow(
        "p",
        "eager",
        "ready",
        ToolCounts(2, 2),
        "not configured",
        "config",
        warnings=("first", "second", "server 'p': tool 'bad\x1b[31m' is not available"),
    )
    quiet = StatusRow("q", "eager", "ready", ToolCounts(1, 1), "not configured", "config")
    text = render_plain(StatusReport((row, quiet)))
    assert text.splitlines()[1:5] == [
        "  server  state  lifecycle  tools  auth            source",
        "  p       ready  eager      2/2    not configured  config",
        "      warning: server 'p': tool 'bad' is not available (+2 more in its detail view)",
        "  q       ready  eager      1/1    not configured  config",
    ]
    out = io.StringIO()
    render_rich(StatusReport((row, quiet)), Console(file=out, width=200, color_system=None))
    assert (
        "p: warning: server 'p': tool 'bad' is not available (+2 more in its detail view)" in out.getvalue()
    )
