"""What a newcomer meets first: bare `orbmcp`, help, an empty status, config files of other tools,
the trust review, `/mcp help`, the debug switch pi users know, the man page `pip install` ships."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import anyio
import pytest

from orbmcp import environment
from orbmcp.auth.callback import CallbackListener, CallbackResult
from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers import config as config_handlers
from orbmcp.commands.table import COMMANDS
from orbmcp.config.loader import load_config
from orbmcp.errors import AuthError
from orbmcp.render import present
from orbmcp.session.terminal import TerminalUI
from tests.cli import run_cli
from tests.core.live import raw_entry
from tests.timeouts import HANG_GUARD_S

ROOT = Path(__file__).resolve().parents[2]


def test_bare_orbmcp_prints_the_help_and_where_to_start() -> None:
    result = run_cli()
    assert result.code == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: orbmcp [OPTIONS] COMMAND [ARGS]...")
    started = result.stdout.split("  Get started:\n", 1)[1].splitlines()
    assert [line.split("  ")[2].strip() for line in started[:3]] == [
        "orbmcp add NAME -- COMMAND [ARGS...]",
        "orbmcp config import CLIENT...",
        "orbmcp config paths",
    ]
    assert max(len(line) for line in started) <= 80
    assert run_cli("--help").stdout == result.stdout


def test_help_summaries_are_whole_first_lines() -> None:
    listing = run_cli("--help").stdout
    flat = " ".join(listing.split())
    for spec in COMMANDS:
        if len(spec.path) == 1 and not spec.hidden:
            assert " ".join(spec.summary.split()) in flat, spec.name
    assert 'Run one slash command line, for example orbmcp slash "/mcp:start everything".' in flat


def test_an_empty_status_names_the_file_to_create(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    result = run_cli("status", env={"ORB_AGENT_DIR": str(agent), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert result.code == 0
    assert result.stdout.splitlines() == [
        "No MCP servers configured.",
        "Add one with `orbmcp add NAME -- PROGRAM ARG...` or `orbmcp add NAME URL`,",
        f"or write it in {agent / 'mcp.json'}, for example:",
        '  {"mcpServers": {"NAME": {"command": "PROGRAM", "args": ["ARG"]}}}',
        "Servers you set up in Claude, Cursor, VS Code, ...: `orbmcp config import CLIENT`",
        "(`orbmcp config paths` lists every file orbmcp reads)",
    ]
    assert not agent.exists()  # orbmcp never writes your config
    # A file named with --config: add and import do not edit it, so only the file is named.
    named = tmp_path / "ci.json"
    named.write_text('{"settings": {}}')
    only = run_cli("--config", str(named), "status", env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert only.stdout.splitlines()[:2] == ["No MCP servers configured.", f"Add one to {named}, for example:"]


def test_a_vs_code_servers_key_is_read_like_mcp_servers(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"vs": {"type": "stdio", **raw_entry()}}}))
    config = load_config(config_file=path)
    assert list(config.servers) == ["vs"] and config.warnings == ()
    both = tmp_path / "both.json"
    both.write_text(json.dumps({"mcpServers": {"a": raw_entry()}, "servers": {"b": raw_entry()}}))
    config = load_config(config_file=both)
    assert list(config.servers) == ["a"]
    assert [w.reason for w in config.warnings] == ["servers_key_ignored"]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"mcpservers": {"a": {"command": "x"}}},
            "no servers read from this file: 'mcpservers' — did you mean 'mcpServers'?",
        ),
        (
            {"a": {"command": "x"}},
            "no servers read from this file: 'a' must go inside an \"mcpServers\" object",
        ),
        ({}, 'no "mcpServers" object: orbmcp read no servers and no settings from this file'),
    ],
)
def test_config_validate_fails_on_a_file_without_servers(
    tmp_path: Path, document: dict[str, object], message: str
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(document))
    result = run_cli("--config", str(path), "config", "validate", "--json")
    assert result.code == 3
    assert result.json()["warnings"] == [{"message": message, "file": str(path), "server": None}]
    assert run_cli("--config", str(path), "status").stdout.splitlines()[-1] == f"{path}: {message}"


def test_settings_only_files_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"settings": {"toolPrefix": "x"}}))
    assert run_cli("--config", str(path), "config", "validate").code == 0


def test_slash_help_lists_the_commands(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {}}))
    for line in ("/mcp help", "/mcp ?"):
        result = run_cli("--config", str(path), "slash", line)
        assert result.code == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0] == "Commands (in an agent, after /mcp):"
        assert any(row.split()[:2] == ["/mcp:start", "<server>"] for row in lines)
    as_json = run_cli("--config", str(path), "slash", "/mcp help --json").json()
    assert {
        "usage": "/mcp:stop <server>",
        "summary": "Stop a server: tools deactivated, process tree gone.",
    } in as_json
    # A server named "help" is shown, not the index.
    path.write_text(json.dumps({"mcpServers": {"help": {"command": "x", "enabled": False}}}))
    assert "Server: help" in run_cli("--config", str(path), "slash", "/mcp help").stdout


def test_pi_users_debug_switch_is_an_alias() -> None:
    assert environment.debug({"PI_MCP_DEBUG": "1"}) is True
    assert environment.debug({"PI_MCP_DEBUG": "1", "ORBMCP_DEBUG": "0"}) is False  # orbmcp's own wins
    assert environment.debug({"ORBMCP_DEBUG": "yes"}) is True and environment.debug({}) is False


def test_the_trust_review_on_a_terminal_is_a_block_of_lines(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    _isolated_agent_dir: Path,
) -> None:
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    (project / ".orb" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"p": {"command": "srv", "args": ["--a b"], "env": {"KEY": "v"}}}})
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    ctx = CommandContext(ui=TerminalUI(interactive=True), project=project, present=present)
    outcome = config_handlers.trust(ctx)
    assert outcome.decision == "declined"
    err = capsys.readouterr().err.splitlines()
    start = err.index("These servers would run or be contacted:")
    assert err[start + 1].startswith("- p (new or changed)  [server; ")
    assert err[start + 2 : start + 5] == [
        "    transport: stdio",
        "    command: srv '--a b'",
        "    argv: ['srv', '--a b']",
    ]
    assert err[-1].startswith("Trust this project? [y/N]")


def test_the_terminal_shows_a_rendered_block_as_its_lines(capsys: pytest.CaptureFixture[str]) -> None:
    TerminalUI(interactive=True).show("one\n  two")
    assert capsys.readouterr().err == "one\n  two\n"


async def test_the_headless_paste_prompt_offers_open_again_and_cancel() -> None:
    state = "s-123"
    reopened: list[bool] = []
    notes: list[str] = []
    answers = iter(["o", f"http://127.0.0.1:1/callback?code=c0de&state={state}"])
    async with CallbackListener(server="srv") as listener:
        listener.expect_state(state)
        with anyio.fail_after(HANG_GUARD_S):
            result = await listener.wait(
                5,
                paste=lambda: next(answers),
                notify=notes.append,
                reopen=lambda: reopened.append(True) or True,
            )
    assert result == CallbackResult("c0de", state)
    assert reopened == [True] and notes == [
        "opened the browser again; finish there, or paste the final redirect URL"
    ]

    async with CallbackListener(server="srv") as listener:
        listener.expect_state(state)
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(AuthError) as caught:
            await listener.wait(5, paste=lambda: "c", notify=notes.append, reopen=lambda: False)
    assert caught.value.reason == "cancelled" and caught.value.message == "authorization cancelled"

    failing = iter(["open", "cancel"])
    async with CallbackListener(server="srv") as listener:
        listener.expect_state(state)
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(AuthError):
            await listener.wait(5, paste=lambda: next(failing), notify=notes.append, reopen=lambda: False)
    assert notes[-1] == "could not open a browser; open the URL above, or paste the final redirect URL"


@pytest.mark.slow
def test_pip_install_ships_the_man_page(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here (no package index?): {built.stderr.strip()[-300:]}")
    (wheel,) = tmp_path.glob("orbmcp-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        pages = [n for n in archive.namelist() if n.endswith("/data/share/man/man1/orbmcp.1")]
        assert len(pages) == 1
        assert archive.read(pages[0]) == (ROOT / "man" / "orbmcp.1").read_bytes()


def test_check_formats_complete(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {}}))
    assert run_cli("--config", str(path), "complete", "orbmcp check --format ").stdout.split() == [
        "github",
        "text",
    ]
