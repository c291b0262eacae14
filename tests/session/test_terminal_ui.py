"""The shell's UI (prompts on stderr, answers on stdin) and the hint/error a failed server gives."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from orbmcp.commands.spelling import spell_for
from orbmcp.config.model import AuthConfig, ServerConfig
from orbmcp.config.settings import Settings
from orbmcp.core.session.hints import failure_error, hint_for
from orbmcp.core.session.runtime import Runtime
from orbmcp.core.session.state import State
from orbmcp.core.session.supervisor import Supervisor
from orbmcp.core.tooling.registry import ToolRegistry
from orbmcp.errors import AuthError, ConnectionFailed, ProtocolError, TimeoutFailed
from orbmcp.session.terminal import TerminalUI


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def _ui(
    monkeypatch: pytest.MonkeyPatch, answers: str, *, interactive: bool = True
) -> tuple[TerminalUI, _TTY]:
    err = _TTY()
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    monkeypatch.setattr("sys.stderr", err)
    return TerminalUI(interactive=interactive), err


def test_confirm_reads_yes_no_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    ui, err = _ui(monkeypatch, "y\n\nno\n")
    assert ui.confirm("Trust?") is True
    assert ui.confirm("Trust?", default=True) is True  # empty answer takes the default
    assert ui.confirm("Trust?", default=True) is False
    assert "Trust? [y/N] " in err.getvalue() and "[Y/n]" in err.getvalue()


def test_non_interactive_ui_never_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    ui, err = _ui(monkeypatch, "y\n1\n", interactive=False)
    assert ui.confirm("Trust?") is False
    assert ui.choose("x needs authorization", ["Authorize now", "Not now"]) is None
    assert err.getvalue() == ""


def test_choose_numbers_options(monkeypatch: pytest.MonkeyPatch) -> None:
    ui, err = _ui(monkeypatch, "2\nbanana\n")
    assert ui.choose("srv needs authorization", ["Authorize now", "Not now"]) == "Not now"
    assert ui.choose("srv needs authorization", ["Authorize now", "Not now"]) is None
    assert "  1) Authorize now\n  2) Not now\n" in err.getvalue()


def test_prompt_paste_reads_a_line_even_from_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    ui, _ = _ui(monkeypatch, "http://127.0.0.1:5/callback?code=c&state=s\n", interactive=False)
    assert ui.prompt_paste("Paste") == "http://127.0.0.1:5/callback?code=c&state=s"
    assert ui.prompt_paste("Paste") is None  # EOF: no paste


def test_notify_escapes_server_text_and_progress_draws_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    ui, err = _ui(monkeypatch, "")
    ui.notify("server says \x1b]0;pwned\x07 hi\nsecond", level="warning")
    text = err.getvalue()
    assert "\x1b]0;" not in text and "\x07" not in text and text.count("\n") == 1
    assert text.startswith("orbmcp: warning: ")
    ui.progress("s", "t", 1, 4, "step \x1b[31mred")
    ui.progress("s", "t", 2, 4, None)  # right after the last redraw: skipped
    ui.progress("s", "t", 4, 4, None)  # the last step always shows
    ui.end_progress()
    drawn = err.getvalue()[len(text) :]
    assert " 25.0%" in drawn and " 50.0%" not in drawn and "100.0%" in drawn and "\x1b[31m" not in drawn
    ui.show_url("https://as.example/authorize?x=1")
    assert "https://as.example/authorize?x=1" in err.getvalue()
    fresh, fresh_err = _ui(monkeypatch, "")
    fresh.progress("s", "t", 7, None, None)
    assert "[7]" in fresh_err.getvalue()


def _sup(tmp_path: Path, *, auth: bool = False) -> Supervisor:
    cfg = ServerConfig(
        name="srv",
        transport="streamable-http" if auth else "stdio",
        command=None if auth else "x",
        url="https://x.test/mcp" if auth else None,
        auth=AuthConfig() if auth else None,
    )
    return Supervisor(cfg, Settings(), Runtime(global_dir=tmp_path, tools=ToolRegistry()))


def test_hints_and_errors_follow_the_failure(tmp_path: Path) -> None:
    sup = _sup(tmp_path, auth=True)
    sup.snap.state, sup.snap.last_error, sup.snap.last_error_code = State.NEEDS_AUTH, "token expired", "auth"
    sup.snap.last_error_reason = "invalid_grant"
    assert spell_for(hint_for(sup) or "", "cli") == "orbmcp auth srv --reset"
    assert spell_for(hint_for(sup) or "", "slash") == "/mcp:auth srv --reset"
    assert isinstance(failure_error(sup), AuthError)

    sup = _sup(tmp_path)
    sup.snap.state, sup.snap.last_error, sup.snap.last_error_code = State.FAILED, "slow", "timeout"
    assert "timeoutMs" in (hint_for(sup) or "")
    err = failure_error(sup)
    assert isinstance(err, TimeoutFailed) and err.message == "server 'srv': slow"

    sup.snap.last_error_code = "protocol"
    assert isinstance(failure_error(sup), ProtocolError)
    sup.snap.last_error_code = "connection"
    assert isinstance(failure_error(sup), ConnectionFailed)
    assert "ORBMCP_DEBUG=1" in (hint_for(sup) or "")

    sup.snap.state = State.READY
    assert hint_for(sup) is None
