"""The shell's error boundary (runner), its terminal UI, signals, and the lazy public API."""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import orbmcp
from orbmcp.commands.context import CommandContext
from orbmcp.commands.outcome import ExitCode, exit_code_for
from orbmcp.commands.results.base import Message
from orbmcp.commands.spec import CommandSpec
from orbmcp.errors import (
    AuthError,
    ConfigError,
    Interrupted,
    OrbError,
)
from orbmcp.session.handler_refs import bind_handlers
from orbmcp.session.one_shot import OneShotSessions, run_with_signals
from orbmcp.session.runner import call_handler, report_error, run_in_shell
from orbmcp.session.terminal import TerminalUI
from tests.timeouts import HANG_GUARD_S
from tests.ui import SilentUI


def _spec(handler: str, *, connects: bool = False) -> CommandSpec:
    """The command ``t``, run by this module's function named ``handler``."""
    spec = CommandSpec(("t",), "test", connects=connects)
    bind_handlers({spec.path: lambda: globals()[handler]})
    return spec


def _run(handler: str, *, json_output: bool = False, connects: bool = False, **kwargs: Any) -> int:
    return run_in_shell(
        _spec(handler, connects=connects),
        kwargs,
        project=None,
        config_file=None,
        json_output=json_output,
        no_color=True,
    )


# Handlers the specs above point at.


def _interrupted(ctx: CommandContext) -> None:
    raise KeyboardInterrupt


def _reader_left(ctx: CommandContext) -> None:
    raise BrokenPipeError(32, "Broken pipe")


async def _async_but_offline(ctx: CommandContext, word: str) -> Message:
    await anyio.lowlevel.checkpoint()
    return Message(f"async {word}", {"word": word})


async def _connecting(ctx: CommandContext, word: str) -> Message:
    await anyio.lowlevel.checkpoint()
    return Message(f"connected {word}")


def _auth_failure(ctx: CommandContext) -> None:
    raise AuthError("server 'gh' needs authorization\x1b[2J", server="gh", hint="orbmcp auth gh")


def _bug(ctx: CommandContext) -> None:
    raise RuntimeError("unexpected")


# --- runner ------------------------------------------------------------------------------------------


def test_interrupt_is_exit_130_and_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("_interrupted") == 130
    assert capsys.readouterr().err == "orbmcp: error: interrupted\n"
    assert _run("_interrupted", json_output=True) == 130
    body = json.loads(capsys.readouterr().err)
    assert body == {"error": {"code": "interrupted", "message": "interrupted", "server": None}}


def test_a_reader_that_left_is_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("_reader_left") == 0
    assert capsys.readouterr().err == ""


def test_async_handlers_run_with_or_without_connections(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("_async_but_offline", word="x") == 0
    assert capsys.readouterr().out == "async x\n"
    assert _run("_connecting", connects=True, word="y", json=True) == 0  # `json` is not passed on
    assert capsys.readouterr().out == "connected y\n"


def test_errors_are_one_line_with_a_hint_or_one_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("_auth_failure") == 5
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "orbmcp: error: server 'gh' needs authorization\nhint: orbmcp auth gh\n"
    assert _run("_auth_failure", json_output=True) == 5
    body = json.loads(capsys.readouterr().err)
    assert body["error"] == {
        "code": "auth",
        "message": "server 'gh' needs authorization\x1b[2J",
        "server": "gh",
        "hint": "orbmcp auth gh",
    }
    report_error(ConfigError("bad file", file="/x.json"), json_output=False)
    assert capsys.readouterr().err == "orbmcp: error: bad file\n"  # no hint line without a hint


def test_crash_log_falls_back_and_may_be_impossible(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("ORB_AGENT_DIR", str(blocker / "agent"))  # the global log dir cannot exist
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert _run("_bug") == 70
    err = capsys.readouterr().err
    log = Path(err.split("details: ", 1)[1].rstrip(")\n"))
    assert log.parent == tmp_path / "tmp" and "RuntimeError: unexpected" in log.read_text()

    monkeypatch.setattr(tempfile, "tempdir", str(blocker))  # nowhere left to write
    assert _run("_bug") == 70
    assert capsys.readouterr().err == "orbmcp: internal error: RuntimeError: unexpected\n"


async def test_call_handler_drops_the_json_flag() -> None:
    ctx = CommandContext(ui=TerminalUI(interactive=False))
    result = await call_handler(_spec("_async_but_offline"), ctx, {"word": "z", "json": True})
    assert result == Message("async z", {"word": "z"})


# --- signals -------------------------------------------------------------------------------------------


async def test_a_signal_cancels_the_command_and_closes_the_session() -> None:
    sessions = OneShotSessions()
    ui = TerminalUI(interactive=False)
    ctx = CommandContext(ui=ui, sessions=sessions)
    ran: list[str] = []
    before = signal.getsignal(signal.SIGHUP)

    async def hangs(context: CommandContext) -> None:
        ran.append("started")
        deadline = time.monotonic() + 10
        # Wait for the receiver to be installed before signalling ourselves.
        while signal.getsignal(signal.SIGHUP) is before:
            assert time.monotonic() < deadline
            await anyio.sleep(0.01)
        os.kill(os.getpid(), signal.SIGHUP)
        await anyio.sleep_forever()

    with anyio.fail_after(HANG_GUARD_S), pytest.raises(Interrupted) as caught:
        await run_with_signals(hangs, ctx)
    assert caught.value.message == "interrupted by SIGHUP; every server was stopped"
    assert ran == ["started"] and sessions._manager is None


async def test_errors_leave_run_with_signals_unwrapped() -> None:
    ctx = CommandContext(ui=TerminalUI(interactive=False), sessions=None)

    async def fails(context: CommandContext) -> None:
        raise AuthError("nope", server="s")

    with anyio.fail_after(HANG_GUARD_S), pytest.raises(AuthError, match="nope"):
        await run_with_signals(fails, ctx)

    async def works(context: CommandContext, value: int) -> int:
        return value * 2

    # Any UI works; only the terminal one has a progress line to clear.
    other = CommandContext(ui=HostLikeUI(), sessions=None)
    with anyio.fail_after(HANG_GUARD_S):
        assert await run_with_signals(works, ctx, 21) == 42
        assert await run_with_signals(works, other, 2) == 4


class HostLikeUI(SilentUI):
    def confirm(self, question: str, *, default: bool = False) -> bool:
        return default


# --- terminal UI ---------------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_confirm_and_choose_read_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ui = TerminalUI(interactive=True)
    monkeypatch.setattr(sys, "stdin", io.StringIO("yes\n\nn\n2\n9\n"))
    assert ui.confirm("Trust?") is True
    assert ui.confirm("Trust?", default=True) is True  # empty answer: the default
    assert ui.confirm("Trust?", default=True) is False
    assert ui.choose("Which?", ["a", "b"]) == "b"
    assert ui.choose("Which?", ["a", "b"]) is None  # out of range
    err = capsys.readouterr().err
    assert err.startswith("Trust? [y/N] Trust? [Y/n] ")
    assert "Which?\n  1) a\n  2) b\n> " in err

    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stdin", closed)
    assert ui.confirm("Trust?", default=True) is False
    assert ui.prompt_paste("Paste:") is None

    quiet = TerminalUI(interactive=False)
    assert quiet.confirm("Trust?", default=True) is False and quiet.choose("Which?", ["a"]) is None
    assert capsys.readouterr().err == "Trust? [Y/n] Paste:\n> "  # nothing asked when nobody answers


def test_paste_notify_and_show_url(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ui = TerminalUI(interactive=True, json_output=True)
    monkeypatch.setattr(sys, "stdin", io.StringIO("http://127.0.0.1:5/callback?code=x\n\n"))
    assert ui.prompt_paste("Paste:") == "http://127.0.0.1:5/callback?code=x"
    assert ui.prompt_paste("Paste:") is None  # an empty line is no paste
    ui.notify("progress info")  # --json keeps stderr for errors
    ui.notify("careful\nnow", level="warning")
    ui.show_url("https://as.example/authorize?x=1")
    err = capsys.readouterr().err
    assert "progress info" not in err
    assert "orbmcp: warning: careful ⏎ now\n" in err
    assert err.endswith("Open this URL to authorize:\n  https://as.example/authorize?x=1\n")
    with pytest.raises(AuthError, match="refusing to open"):
        ui.open_url("javascript:alert(1)")  # validated before any browser is asked


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    ui = TerminalUI(interactive=True)
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    ui.progress("s", "t", 1, 2, "half")
    ui.end_progress()
    assert pipe.getvalue() == ""

    tty = _Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    ui.progress("s", "t", 1, 4, "quarter \x1b[31mdone")
    assert tty.getvalue() == "\r\x1b[2K[######------------------]  25.0% quarter done"
    ui.progress("s", "t", 4, 4, "all")  # the last step shows even right after a redraw
    assert tty.getvalue().endswith("\r\x1b[2K[########################] 100.0% all")
    ui.end_progress()
    ui.end_progress()  # once is enough
    assert tty.getvalue().endswith("100.0% all\r\x1b[2K")


async def test_a_held_back_step_is_shown_above_the_question(monkeypatch: pytest.MonkeyPatch) -> None:
    from orbmcp.core.capabilities.elicitation import ElicitationRequest, parse_form
    from orbmcp.session import terminal

    # A task's "input required" arrives right after another step: the redraw limit holds it
    # back (here: every step after the first), yet the person must see it with the question.
    monkeypatch.setattr(terminal, "PROGRESS_REDRAW_S", 3600.0)
    tty = _Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    ui = TerminalUI(interactive=True)
    ui.progress("s", "t", 1, None, "working: Gathering sources...")
    ui.progress("s", "t", 2, None, "input required: needs a clarification")
    assert "input required" not in tty.getvalue()
    schema = {"type": "object", "properties": {"topic": {"type": "string"}}}
    await ui.elicit(ElicitationRequest("s", "form", "Which topic?", parse_form(schema)))
    shown = tty.getvalue()
    before, _, after = shown.partition("\nServer 's' asks for input:")
    assert before.endswith("\r\x1b[2K[2] input required: needs a clarification") and "Which topic?" in after
    ui.end_progress()  # the line above the question is not the progress line any more
    assert tty.getvalue() == shown


# --- public API and exit codes -------------------------------------------------------------------------


def test_lazy_public_api() -> None:
    assert orbmcp.OrbError is OrbError
    from orbmcp.config.registry import register_server

    assert orbmcp.register_server is register_server
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = orbmcp.no_such_name
    assert set(orbmcp.__all__) == {"OrbError", "__version__", "register_server"}


def test_exit_codes_and_error_json() -> None:
    assert exit_code_for(AuthError("x")) == ExitCode.AUTH
    assert exit_code_for(KeyboardInterrupt()) == ExitCode.INTERRUPTED
    assert exit_code_for(ValueError("bug")) == ExitCode.INTERNAL
    assert (int(ExitCode.AUTH), int(ExitCode.INTERRUPTED), int(ExitCode.INTERNAL)) == (5, 130, 70)
    assert OrbError("m").to_json() == {"error": {"code": "internal", "message": "m", "server": None}}
    err = ConfigError("bad", file="/f.json", server="s", hint="fix it")
    assert (err.file, str(err)) == ("/f.json", "bad")
    assert err.to_json() == {"error": {"code": "config", "message": "bad", "server": "s", "hint": "fix it"}}
