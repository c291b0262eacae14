"""``orbmcp shell`` in-process: interrupts, SIGTERM mid-command, internal errors, the terminal
path (banner, history, startup authorization), pipes, colour choices and completion edge cases.

The session loop is driven with scripted readers and writers; a "terminal" is a StringIO that says
it is a tty, which is all the shell asks of stdin (``input()`` falls back to ``readline()``)."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
from anyio.from_thread import start_blocking_portal

from orbmcp.commands.complete import complete_line
from orbmcp.commands.context import CommandContext
from orbmcp.config.model import AuthConfig, ProjectInfo, ResolvedConfig, ServerConfig
from orbmcp.config.settings import Settings
from orbmcp.core.session.auth_prompt import AUTHORIZE_NOW, NOT_NOW
from orbmcp.frontends.shell import HISTORY_FILE, PROMPT, Shell, _setup_readline, run_shell
from orbmcp.session.persistent import PersistentSessions
from orbmcp.session.terminal import TerminalUI
from tests.auth.oauth_server import ASOptions, running_server
from tests.core.live import raw_entry, recorded_methods
from tests.frontends import OFFLINE_SERVERS, write_config

MARK_ENV = "ORB_TEST_SHELL_MARK"


class TtyInput(io.StringIO):
    def isatty(self) -> bool:
        return True


class TtyOutput(io.StringIO):
    def isatty(self) -> bool:
        return True


class Typed:
    """Scripted input where ``KeyboardInterrupt`` stands for Ctrl-C at the prompt."""

    def __init__(self, *items: object) -> None:
        self.items = list(items)

    def __iter__(self) -> Typed:
        return self

    def __next__(self) -> str:
        if not self.items:
            raise StopIteration
        item = self.items.pop(0)
        if item is KeyboardInterrupt:
            raise KeyboardInterrupt
        assert isinstance(item, str)
        return item


@dataclass
class ScriptedUI:
    """A person at the terminal: answers from a script, a headless browser for OAuth."""

    answers: list[str] = field(default_factory=list)
    interactive: bool = True
    notes: list[str] = field(default_factory=list)
    confirm_error: Exception | None = None
    browser: Any = None

    def confirm(self, question: str, *, default: bool = False) -> bool:
        if self.confirm_error is not None:
            raise self.confirm_error
        return default

    def choose(self, question: str, options: list[str]) -> str | None:
        return self.answers.pop(0) if self.answers else None

    def notify(self, message: str, *, level: str = "info") -> None:
        self.notes.append(message)

    def show(self, text: str) -> None:
        self.notes.append(text)

    def open_url(self, url: str) -> bool:
        return bool(self.browser.open_url(url)) if self.browser is not None else False

    def show_url(self, url: str) -> None:
        pass

    def prompt_paste(self, message: str) -> str | None:
        return None

    def progress(self, server: str, tool: str, p: float, total: float | None, message: str | None) -> None:
        pass


@pytest.fixture
def offline(tmp_path: Path) -> Path:
    return write_config(tmp_path, OFFLINE_SERVERS)


def context(config: Path, ui: Any = None, **kw: Any) -> CommandContext:
    return CommandContext(ui=ui or TerminalUI(interactive=False), config_file=config, **kw)


def session(config: Path, lines: Any, ui: Any = None, **kw: Any) -> tuple[int, str]:
    out: list[str] = []
    code = run_shell(context(config, ui), lines=lines, write=out.append, **kw)
    return code, "".join(out)


def marked_processes(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(MARK_ENV) == marker:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


# -- interrupts and failures --------------------------------------------------------------------


def test_ctrl_c_at_the_prompt_drops_the_line_and_keeps_the_session(offline: Path) -> None:
    code, out = session(offline, Typed("/mcp bogus", KeyboardInterrupt, "status alpha --json"))
    assert code == 0
    before, after = out.split("\n\n", 1)
    assert "unknown command or server 'bogus'" in before
    assert json.loads(after)["name"] == "alpha"


def test_ctrl_c_while_a_result_prints_reports_interrupted(offline: Path) -> None:
    out: list[str] = []
    hits: list[str] = []

    def write(text: str) -> None:
        if "MCP servers" in text and not hits:
            hits.append(text)
            raise KeyboardInterrupt
        out.append(text)

    code = run_shell(context(offline), lines=["/mcp"], write=write)
    assert code == 130 and hits and out == ["interrupted\n"]
    code = run_shell(context(offline), lines=["/mcp", "status alpha --json"], write=write)
    assert code == 0 and json.loads(out[-1])["name"] == "alpha"


def test_ctrl_c_that_arrives_before_the_command_starts_cancels_it(tmp_path: Path) -> None:
    ctx = context(write_config(tmp_path, {"r": raw_entry(lifecycle="lazy")}))
    sessions = PersistentSessions(ctx.config(), ui=ctx.ui)
    ctx.sessions = sessions
    out: list[str] = []
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(sessions):
        shell = Shell(ctx, sessions, portal, out.append)
        portal.call(shell.cancel_running)  # nothing runs: nothing to cancel
        portal.call(shell._interrupt, shell._token + 1)  # SIGINT raced ahead of the line's task
        assert shell.execute("/mcp:start r") == 130 and out == ["interrupted\n"]
        assert shell.execute("/mcp --json") == 0
        assert json.loads(out[-1])[0]["state"] == "stopped"  # the start never happened
        assert shell.execute("/mcp:start r") == 0 and "State:  ready" in out[-1]


def test_a_bug_in_one_command_does_not_end_the_session(tmp_path: Path, offline: Path) -> None:
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    (project / ".orb" / "mcp.json").write_text(json.dumps({"mcpServers": {"p": {"command": "true"}}}))
    ui = ScriptedUI(confirm_error=RuntimeError("ui broke: Authorization: Bearer sk-test-SECRET123"))
    out: list[str] = []
    ctx = CommandContext(ui=ui, project=project)
    code = run_shell(ctx, lines=["trust", "config paths --json"], write=out.append)
    assert code == 0
    assert out[0].startswith("internal error: RuntimeError: ui broke: Authorization: Bearer <redacted>")
    assert "SECRET123" not in "".join(out)
    assert "globalDir" in out[1]
    code = run_shell(ctx, lines=["trust"], write=out.append)
    assert code == 70


def test_sigterm_during_a_command_ends_the_session_and_stops_its_servers(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    record = tmp_path / "record.jsonl"
    entry = raw_entry("--record", str(record), env={MARK_ENV: marker}, requestTimeoutMs=60000)
    config = write_config(tmp_path, {"r": entry})
    sent: list[bool] = []
    over = threading.Event()  # never signal pytest itself once the shell's handler is gone

    def terminate_once_the_call_is_in_flight() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not over.is_set():
            if "tools/call" in recorded_methods(record):
                sent.append(True)
                os.kill(os.getpid(), signal.SIGTERM)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=terminate_once_the_call_is_in_flight, daemon=True)
    killer.start()
    previous = signal.getsignal(signal.SIGTERM)
    try:
        code, out = session(config, ["call r never"])
    finally:
        over.set()
    killer.join(timeout=5)
    assert sent == [True] and code == 130 and out == ""
    assert signal.getsignal(signal.SIGTERM) == previous  # the shell put the handler back
    assert marked_processes(marker) == []


def test_a_session_run_from_a_worker_thread_leaves_signals_alone(offline: Path) -> None:
    results: list[tuple[int, str]] = []
    before = signal.getsignal(signal.SIGINT)
    worker = threading.Thread(target=lambda: results.append(session(offline, ["/mcp bogus"])))
    worker.start()
    worker.join(timeout=30)
    assert results and results[0][0] == 2 and "unknown command or server" in results[0][1]
    assert signal.getsignal(signal.SIGINT) == before


# -- stdin and stdout as the shell finds them -----------------------------------------------------


def test_a_piped_script_runs_line_by_line_with_its_last_status(
    offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("status alpha --json\ncomplete 'orbmcp zzz'\n/mcp nope\n"))
    out: list[str] = []
    code = run_shell(context(offline), write=out.append)
    assert code == 2
    assert json.loads(out[0])["name"] == "alpha"  # `complete` found nothing and printed nothing
    assert out[1].startswith("error: unknown command or server 'nope'") and len(out) == 2


def test_a_closed_stdin_is_an_empty_script(offline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", None)  # `orbmcp shell <&-`
    out: list[str] = []
    assert run_shell(context(offline), write=out.append) == 0 and out == []


def test_output_to_a_terminal_that_went_away_is_dropped(
    offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = io.StringIO()
    gone.close()
    monkeypatch.setattr("sys.stdout", gone)
    monkeypatch.setattr("sys.stderr", gone)
    assert run_shell(context(offline), lines=["/mcp", "/mcp bogus"]) == 2


def test_colour_goes_through_rich_and_json_stays_plain(
    offline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out: list[str] = []
    code = run_shell(context(offline), lines=["/mcp", "/mcp --json"], write=out.append, color=True)
    assert code == 0
    shown = capsys.readouterr().out
    assert "alpha" in shown and "web" in shown  # the rich table went to the terminal
    assert [row["name"] for row in json.loads("".join(out))] == ["alpha", "beta", "web"]


def test_no_color_on_a_terminal_prints_the_plain_text(offline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = TtyOutput()
    monkeypatch.setattr("sys.stdout", terminal)
    monkeypatch.setenv("NO_COLOR", "1")
    assert run_shell(context(offline), lines=["status alpha"]) == 0
    plain = terminal.getvalue()
    assert plain.startswith("Server: alpha") and "\x1b" not in plain
    monkeypatch.delenv("NO_COLOR")
    assert run_shell(context(offline, no_color=True), lines=["status alpha"]) == 0  # --no-color
    assert terminal.getvalue() == plain * 2


# -- the terminal path --------------------------------------------------------------------------


def oauth_config(global_dir: Path, url: str) -> ResolvedConfig:
    server = ServerConfig(name="gh", transport="streamable-http", url=url, auth=AuthConfig(), timeout_ms=8000)
    return ResolvedConfig(
        servers={"gh": server},
        settings=Settings(),
        warnings=(),
        project=ProjectInfo(global_dir, (), trusted=False, loaded=False),
        global_dir=global_dir,
    )


@pytest.fixture
def oauth_url() -> Iterator[str]:
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(running_server(ASOptions())) as srv,
    ):
        yield srv.mcp_url


@pytest.mark.parametrize("answer", [AUTHORIZE_NOW, NOT_NOW])
def test_terminal_session_offers_authorization_then_runs_lines(
    answer: str,
    oauth_url: str,
    _isolated_agent_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import readline

    from tests.auth.browser import HeadlessBrowser

    monkeypatch.setattr("sys.stdin", TtyInput("/mcp --json\n/mcp bogus\n"))
    ui = ScriptedUI(answers=[answer], browser=HeadlessBrowser())
    ctx = CommandContext(ui=ui)
    ctx.set_config(oauth_config(_isolated_agent_dir, oauth_url))
    try:
        assert run_shell(ctx) == 0  # a person left on purpose: failed lines do not change that
    finally:
        readline.set_completer(None)  # the session installed its own in this (pytest's) process
    shown = capsys.readouterr()
    lines = shown.out.split(PROMPT)
    assert lines[0].startswith("orbmcp shell: 1 server configured, 1 eager connecting.")
    state = json.loads(lines[1])[0]["state"]
    assert "unknown command or server 'bogus'" in shown.err  # errors go to stderr
    assert shown.out.endswith(PROMPT + "\n")  # Ctrl-D: a newline, then the session ends
    if answer == AUTHORIZE_NOW:
        assert state == "ready" and ui.notes[-1] == "gh: ready" and ui.browser.errors == []
    else:
        assert state == "needs-auth" and ui.notes == [
            "'gh' stays stopped; run /mcp:auth gh when you are ready"
        ]
    history = _isolated_agent_dir / HISTORY_FILE
    assert stat.S_IMODE(history.stat().st_mode) == 0o600


def test_history_is_read_back_and_a_broken_location_is_ignored(offline: Path, tmp_path: Path) -> None:
    import readline

    ctx = context(offline)
    sessions = PersistentSessions(ctx.config(), ui=ctx.ui)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(sessions):
        shell = Shell(ctx, sessions, portal, lambda text: None)
        history = tmp_path / "agent" / HISTORY_FILE
        try:
            save = _setup_readline(shell, history)
            assert save is not None
            readline.clear_history()
            readline.add_history("status --json")
            save()
            assert stat.S_IMODE(history.stat().st_mode) == 0o600 and "status --json" in history.read_text()
            readline.clear_history()
            _setup_readline(shell, history)
            assert readline.get_history_item(1) == "status --json"
            blocked = tmp_path / "a-file"
            blocked.write_text("")
            broken = _setup_readline(shell, blocked / HISTORY_FILE)
            assert broken is not None
            broken()  # cannot create the directory: silently skipped
            assert blocked.read_text() == ""
        finally:
            readline.clear_history()
            readline.set_completer(None)


# -- completion inside a session ------------------------------------------------------------------


def test_readline_completion_and_other_configs_on_the_line(offline: Path, tmp_path: Path) -> None:
    other = write_config(tmp_path, {"zeta": {"command": "true", "enabled": False}}, name="other.json")
    ctx = context(offline)
    sessions = PersistentSessions(ctx.config(), ui=ctx.ui)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(sessions):
        shell = Shell(ctx, sessions, portal, lambda text: None)
        assert shell.complete(f"orbmcp --config {other} start ") == ["zeta"]
        assert shell.complete("/mcp:auth ") == ["web"]
        # Outside a real prompt the line buffer is empty: every command, each with its space.
        offered: list[str] = []
        while (match := shell.readline_completer("", len(offered))) is not None:
            offered.append(match)
        assert offered == [c + " " for c in complete_line("")] and "status " in offered
    # The session is gone: completion offers nothing rather than breaking the prompt.
    assert shell.readline_completer("", 0) is None
