"""``orbmcp shell``: scripted sessions in-process, and a real terminal session on a pty."""

from __future__ import annotations

import json
import signal
import stat
import uuid
from pathlib import Path

import psutil
import pytest

from orbmcp.commands.complete import shell_commands
from orbmcp.commands.context import CommandContext
from orbmcp.frontends.shell import NOT_IN_SHELL, help_text, run_shell
from orbmcp.session.terminal import TerminalUI
from tests.daemon import wait_for
from tests.frontends import OFFLINE_SERVERS, PY, Pty, env_for, everything_entry, write_config


def session(config: Path, lines: list[str], **kw: object) -> tuple[int, str]:
    out: list[str] = []
    ctx = CommandContext(ui=TerminalUI(interactive=False), config_file=config)
    code = run_shell(ctx, lines=lines, write=out.append, **kw)  # type: ignore[arg-type]
    return code, "".join(out)


def marked_processes(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("ORB_TEST_SHELL_MARK") == marker:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


@pytest.fixture
def offline(tmp_path: Path) -> Path:
    return write_config(tmp_path, OFFLINE_SERVERS)


def test_scripted_session_runs_slash_and_shell_lines(offline: Path) -> None:
    code, out = session(
        offline,
        [
            "/mcp",
            "  # a comment, then a blank line",
            "",
            "status alpha --json",
            "/mcp bogus",
            "config paths --json",
            "shell",
            "/exit",
            "/mcp web",  # never runs: the session ended
        ],
    )
    assert code == 2  # the status of the last command ("shell": a usage error)
    lines = out.split("\n")
    assert lines[0] == "MCP servers (3):" and lines[2].split()[:2] == ["alpha", "disabled"]
    detail = json.loads(lines[5])
    assert detail["name"] == "alpha" and detail["lifecycle"] == "lazy (disabled)"
    assert "error: unknown command or server 'bogus'" in out and "servers: alpha, beta, web" in out
    assert '"globalDir"' in out
    assert "error: you are in the shell already" in out
    assert "Server: web" not in out


def test_help_lists_both_forms_from_the_table(offline: Path) -> None:
    code, out = session(offline, ["help"])
    assert code == 0
    assert out == help_text() + "\n"
    # The summaries of the shell-style commands form one column, however long a usage is.
    section = out.split("Shell-style commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    for path, spec in shell_commands().items():
        if path not in NOT_IN_SHELL:
            assert any(line.endswith(spec.summary) and line.index(spec.summary) == 43 for line in section)
    for needle in (
        "/mcp:start <server>",
        "/mcp:auth <server> [--reset]",
        "/mcp reconnect [<server>]",
        "call SERVER [TOOL]",
        "config paths",
    ):
        assert needle in out


def test_errors_are_json_when_the_line_asks(offline: Path) -> None:
    code, out = session(offline, ["/mcp nope --json"])
    assert code == 2
    assert json.loads(out)["error"]["code"] == "usage"


def test_a_persistent_session_keeps_servers_between_commands(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    config = write_config(
        tmp_path,
        {
            "ev": everything_entry(lifecycle="lazy", env={"ORB_TEST_SHELL_MARK": marker}),
            "alpha": OFFLINE_SERVERS["alpha"],
        },
    )
    code, out = session(
        config,
        [
            "/mcp:start ev",
            "call ev echo text=hello-from-repl",
            "/mcp --json",
            "call ev stderr 'text=\x1b]0;pwned\x07 [red]x[/red]'",
            "/mcp ev --json",
            "/mcp ev",
            "/mcp:stop ev",
            "/mcp --json",
        ],
    )
    assert code == 0, out
    assert "State:  ready" in out
    assert "hello-from-repl" in out
    reports = [json.loads(line) for line in out.splitlines() if line.startswith("[{")]
    assert [r["state"] for rows in reports for r in rows if r["name"] == "ev"] == ["ready", "stopped"]
    detail = next(json.loads(line) for line in out.splitlines() if line.startswith('{"name": "ev"'))
    assert any("[red]x[/red]" in line for line in detail["recentOutput"])
    assert "\x1b" not in out and "\x07" not in out  # the server's escape sequence never reaches the terminal
    assert "  [red]x[/red]" in out  # markup stays literal text
    assert marked_processes(marker) == []  # leaving the session left no server behind


def test_leaving_the_session_stops_running_servers(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    config = write_config(tmp_path, {"ev": everything_entry(env={"ORB_TEST_SHELL_MARK": marker})})  # eager
    seen: list[int] = []

    def lines() -> object:
        yield "/mcp --json"
        seen.append(len(marked_processes(marker)))
        yield "/exit"

    code, out = session(config, lines(), wait_eager=True)  # type: ignore[arg-type]
    assert code == 0
    assert json.loads(out)[0]["state"] == "ready"  # the eager server started with the session
    assert seen == [1]
    assert marked_processes(marker) == []


# ------------------------------------------------------------------------------------- a real pty


def test_terminal_session_with_completion_history_and_ctrl_keys(
    offline: Path, _isolated_agent_dir: Path
) -> None:
    p = Pty([PY, "-m", "orbmcp", "shell"], env_for(offline, TERM="xterm", NO_COLOR="1"))
    try:
        assert b"3 servers configured" in p.read_until(b"orbmcp> ")
        p.wait_idle()
        p.send(b"\x03")  # Ctrl-C at the prompt: a fresh prompt, same session
        p.read_until(b"orbmcp> ")
        p.send(b"confi\t")
        p.read_until(b"config ")
        p.send(b"pa\t")
        p.read_until(b"paths ")
        p.send(b"\r")
        assert b"globalDir" in p.read_until(b"orbmcp> ")
        p.send(b"/mcp:au\t")
        p.read_until(b"/mcp:auth ")
        p.send(b"\t")  # the only OAuth server
        p.read_until(b"web ")
        p.send(b"--status --json\r")
        p.read_until(b"orbmcp> ")
        p.send(b"/mcp nope\r")
        assert b"unknown command or server 'nope'" in p.read_until(b"orbmcp> ")
        p.wait_idle()
        p.send(b"\x04")  # Ctrl-D leaves
        assert p.wait() == 0
    finally:
        p.close()
    history = _isolated_agent_dir / "shell_history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert "config paths" in history.read_text()


def test_ctrl_c_interrupts_the_command_not_the_session(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    markers = tmp_path / "markers"
    markers.mkdir()
    server_env = {"ORB_TEST_SHELL_MARK": marker, "ORB_TEST_MARKER_DIR": str(markers)}
    config = write_config(tmp_path, {"ev": everything_entry(lifecycle="lazy", env=server_env)})
    p = Pty([PY, "-m", "orbmcp", "shell"], env_for(config, TERM="xterm", NO_COLOR="1"))
    try:
        p.read_until(b"orbmcp> ")
        p.send(b"/mcp:start ev\r")
        assert b"State:  ready" in p.read_until(b"orbmcp> ")
        p.send(b"call ev sleep seconds=60\r")
        # The server has the call: the shell is running the line, not still reading it. (A wait of
        # its main thread on a futex did not prove that: taking the GIL back after readline returns
        # is one too, and a Ctrl-C there drops the line at the prompt instead.)
        wait_for((markers / "sleep-started").exists, what="the server to start the call")
        p.send(b"\x03")
        assert b"interrupted" in p.read_until(b"orbmcp> ", timeout=15)
        p.send(b"/mcp bogus\r")  # a failed command does not change how a terminal session ends
        p.read_until(b"orbmcp> ")
        p.send(b"/mcp\r")
        listing = p.read_until(b"orbmcp> ").split(b"\n")
        assert any(row.split()[:2] == [b"ev", b"ready"] for row in listing)  # the server stayed connected
        assert len(marked_processes(marker)) == 1
        p.wait_idle()
        p.proc.send_signal(signal.SIGTERM)  # ends the session cleanly, servers included
        assert p.wait() == 130
    finally:
        p.close()
    assert marked_processes(marker) == []


def test_completion_in_a_session_knows_what_runs_and_the_live_tools(tmp_path: Path) -> None:
    from anyio.from_thread import start_blocking_portal

    from orbmcp.frontends.shell import Shell
    from orbmcp.session.persistent import PersistentSessions

    config_path = write_config(
        tmp_path, {"ev": everything_entry(lifecycle="lazy"), "alpha": OFFLINE_SERVERS["alpha"]}
    )
    ctx = CommandContext(ui=TerminalUI(interactive=False), config_file=config_path)
    sessions = PersistentSessions(ctx.config(), ui=ctx.ui)
    ctx.sessions = sessions
    out: list[str] = []
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(sessions):
        shell = Shell(ctx, sessions, portal, out.append)
        assert shell.complete("/mcp:stop ") == []  # nothing runs yet
        assert sessions.running_names() == set() and not sessions.started
        assert shell.execute("/mcp:start ev") == 0
        assert shell.complete("/mcp:stop ") == ["ev"]
        assert shell.complete("/mcp:start ") == ["alpha"]
        assert shell.complete("call ev ec") == ["echo"]  # live tools, no cache needed
        assert "sleep" in sessions.tool_names()["ev"]
        assert shell.execute("/mcp:stop ev") == 0
        assert shell.complete("/mcp:stop ") == []
