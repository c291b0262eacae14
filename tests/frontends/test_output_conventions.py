"""Output conventions: colour only on a terminal, NO_COLOR/--no-color, escaped server text, pinned JSON keys."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rich.console import Console

from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.status import ServerDetail, StatusReport, StatusRow, ToolCounts
from orbmcp.frontends.shell import run_shell
from orbmcp.render.rich_view import render_rich
from orbmcp.session.slash import render
from orbmcp.session.terminal import TerminalUI
from tests.cli import run_cli
from tests.frontends import (
    OFFLINE_SERVERS,
    PY,
    ROOT,
    Pty,
    env_for,
    everything_entry,
    write_config,
)

HOSTILE = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m [bold red]markup[/bold red] \u202eevil\r\nline2"


def gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module


DOCS = gen_docs().JSON_OUTPUT


@pytest.fixture
def offline(tmp_path: Path) -> Path:
    return write_config(tmp_path, OFFLINE_SERVERS)


# ------------------------------------------------------------------------------------------ colour


def _status_on_a_terminal(config: Path, *args: str, **env: str) -> bytes:
    p = Pty([PY, "-m", "orbmcp", *args, "status"], env_for(config, TERM="xterm-256color", **env))
    try:
        assert p.wait() == 0
        return p.buffer
    finally:
        p.close()


def test_rich_colour_only_on_a_terminal(offline: Path) -> None:
    on_tty = _status_on_a_terminal(offline)
    assert b"\x1b[" in on_tty and b"alpha" in on_tty
    piped = run_cli("status", env=env_for(offline))
    assert piped.code == 0 and "\x1b" not in piped.stdout
    assert piped.stdout.startswith("MCP servers (3):")


def test_no_color_and_the_flag_are_honoured(offline: Path) -> None:
    for out in (_status_on_a_terminal(offline, NO_COLOR="1"), _status_on_a_terminal(offline, "--no-color")):
        assert b"\x1b" not in out
        assert b"MCP servers (3):" in out


def test_the_repl_colours_only_a_terminal_without_no_color(offline: Path) -> None:
    for args, env, coloured in (([], {}, True), (["--no-color"], {}, False), ([], {"NO_COLOR": "1"}, False)):
        p = Pty([PY, "-m", "orbmcp", *args, "shell"], env_for(offline, TERM="xterm-256color", **env))
        try:
            p.read_until(b"orbmcp> ")
            p.send(b"/mcp\r")
            out = p.read_until(b"orbmcp> ")
            p.send(b"/exit\r")
            assert p.wait() == 0
        finally:
            p.close()
        assert (b"\x1b[" in out.replace(b"\x1b[?", b"")) is coloured, (args, env, out)


# ---------------------------------------------------------------------------------------- escaping


def _hostile_detail() -> ServerDetail:
    return ServerDetail(
        name="srv",
        state="failed",
        retries=5,
        max_retries=5,
        transport="stdio",
        lifecycle="eager",
        source="global",
        file=None,
        tools=ToolCounts(0, 0),
        oauth=None,
        last_error=HOSTILE,
        hint=None,
        recent_output=(HOSTILE, "plain line"),
        server_info=HOSTILE,
        protocol_version="2025-06-18",
    )


def _assert_inert(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\r" not in text
    assert "[bold red]markup[/bold red]" in text  # shown literally, never interpreted


def test_server_text_is_escaped_in_plain_output() -> None:
    detail = _hostile_detail()
    _assert_inert(render(detail, json_output=False))
    report = StatusReport(
        (StatusRow("srv", "eager", "failed", ToolCounts(0, 0), "not configured", "global", HOSTILE),)
    )
    _assert_inert(render(report, json_output=False))
    raw = render(detail, json_output=True)  # JSON keeps the data, with control characters \u-escaped
    assert "\x1b" not in raw and json.loads(raw)["lastError"] == HOSTILE


def test_server_text_is_escaped_in_rich_output() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="truecolor", width=200, highlight=False)
    render_rich(_hostile_detail(), console)
    render_rich(
        StatusReport((StatusRow("srv", "eager", "failed", ToolCounts(0, 0), "x", "global", HOSTILE),)),
        console,
    )
    out = buf.getvalue()
    assert "\x1b]" not in out and "\x07" not in out and "\u202e" not in out  # no OSC, no bell, no bidi
    text = re.sub(r"\x1b\[[0-9;]*m", "", out)  # rich's own styling
    assert "\x1b" not in text  # nothing else
    assert text.count("[bold red]markup[/bold red]") == 4 and "line2" in text  # 3 in the detail, 1 row


def test_a_tool_result_cannot_drive_the_terminal(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"ev": everything_entry(lifecycle="lazy")})
    out: list[str] = []
    ctx = CommandContext(ui=TerminalUI(interactive=False), config_file=config)
    code = run_shell(
        ctx, lines=[f"call ev echo {shlex.quote('text=' + HOSTILE)}", "/mcp:stop ev"], write=out.append
    )
    text = "".join(out)
    assert code == 0, text
    _assert_inert(text)
    assert "red [bold red]markup" in text and "line2" in text


# ---------------------------------------------------------------------------------------- JSON keys


def _keys(doc: Any, data: Any) -> None:
    if doc.shape == "array":
        assert isinstance(data, list) and data, data
        items = data
    elif doc.shape == "object":
        assert isinstance(data, dict)
        items = [data]
    elif doc.shape == "array of strings":
        assert isinstance(data, list) and all(isinstance(x, str) for x in data)
        return
    else:
        raise AssertionError(doc.shape)
    for item in items:
        if doc.open:
            assert set(doc.keys) <= set(item), (doc, item)
        elif doc.keys:
            assert list(item) == list(doc.keys), (doc, item)


OFFLINE_JSON = [
    ("status", ["status"]),
    ("status SERVER", ["status", "alpha"]),
    ("config show", ["config", "show"]),
    ("config paths", ["config", "paths"]),
    ("config validate", ["config", "validate"]),
    ("check", ["check"]),
    ("untrust", ["untrust"]),
    ("auth", ["auth", "web", "--status"]),
    ("logout", ["logout", "web"]),
    ("complete", ["complete", "/mcp:st"]),
    ("completion show", ["completion", "show", "fish"]),
    ("slash", ["slash", "/mcp"]),
]


@pytest.mark.parametrize(("doc", "args"), OFFLINE_JSON)
def test_documented_json_keys_offline(offline: Path, tmp_path: Path, doc: str, args: list[str]) -> None:
    r = run_cli(*args, "--json", env=env_for(offline, HOME=str(tmp_path)))
    assert r.code in (0, 1), r.stderr
    data = json.loads(r.stdout)
    _keys(DOCS[doc], data)
    if doc == "slash":
        _keys(DOCS["status"], data["json"])  # the envelope carries the command's own JSON


def test_documented_json_keys_of_connecting_commands(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"ev": everything_entry(lifecycle="lazy")})
    out: list[str] = []
    ctx = CommandContext(ui=TerminalUI(interactive=False), config_file=config)
    lines = {
        "start": "start ev --json",
        "tools": "tools ev --json",
        "call": "call ev add a=1 b=2 --json",
        "reconnect": "reconnect ev --json",
        "check": "check ev --json",
        "stop": "stop ev --json",
    }
    assert run_shell(ctx, lines=list(lines.values()), write=out.append) == 0, out
    printed = "".join(out).splitlines()  # one compact JSON document per line
    assert len(printed) == len(lines), printed
    for command, text in zip(lines, printed, strict=True):
        _keys(DOCS[command], json.loads(text))


def test_errors_are_one_json_line_on_stderr(offline: Path) -> None:
    r = run_cli("status", "nope", "--json", env=env_for(offline))
    assert r.code == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1
    error = json.loads(lines[0])["error"]
    assert set(gen_docs().ERROR_KEYS) <= set(error) <= {*gen_docs().ERROR_KEYS, "hint", "reason"}
