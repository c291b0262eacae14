"""Plain and rich rendering of every result model, and the one place results reach stdout.

Server-supplied text (names, errors, stderr lines) may carry escape sequences and newlines: they
must never reach the terminal raw, nor turn into rich markup.
"""

from __future__ import annotations

import importlib
import io
import json
import subprocess
import sys
import types
import typing
from typing import Any

import pytest
from rich.console import Console

from orbmcp.commands.results.base import Lines, Message, Result
from orbmcp.commands.results.completion import CompletionScript
from orbmcp.commands.results.status import ServerAction, ServerDetail, StatusReport, StatusRow, ToolCounts
from orbmcp.render import exit_code_of, render_to_terminal, to_json_text
from orbmcp.render.plain import render_plain, renderer_for
from orbmcp.render.rich_view import render_rich
from orbmcp.text import safe_text

HOSTILE = "boom \x1b[31mred\x1b[0m\x07\nsecond line"
STATES = ("ready", "starting", "stopped", "failed", "needs-auth")


def _row(state: str, *, name: str | None = None, error: str | None = HOSTILE) -> StatusRow:
    return StatusRow(
        name=name or f"s-{state}",
        lifecycle="eager",
        state=state,
        tools=ToolCounts(3, 2 if state == "ready" else 0),
        auth="not configured",
        source="config",
        error=error,
    )


def _detail(**changes: Any) -> ServerDetail:
    base: dict[str, Any] = {
        "name": "gh",
        "state": "failed",
        "retries": 5,
        "max_retries": 5,
        "transport": "streamable-http",
        "lifecycle": "eager",
        "source": "global",
        "file": "/home/u/.orb/agent/mcp.json",
        "tools": ToolCounts(0, 0),
        "oauth": "credentials stored",
        "last_error": HOSTILE,
        "hint": "orbmcp auth gh",
        "recent_output": ("line \x1b]0;title\x07one",),
        "project_not_loaded": "/work/p/.orb",
        "protocol_version": "2025-11-25",
        "server_info": "GitHub \x1b[1mMCP\x1b[0m 1.0",
        "message": "stopped again",
        "error_code": "connection",
    }
    base.update(changes)
    return ServerDetail(**base)


def _rich(result: Any, *, color: bool = False) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=color, color_system="standard" if color else None)
    render_rich(result, console)
    return buf.getvalue()


def test_plain_status_of_every_state_shows_errors_of_failed_ones_escaped() -> None:
    report = StatusReport(
        rows=tuple(_row(s) for s in STATES),
        notices=("Project config: not loaded (/p/.orb)\x1b[2J",),
        stopped_after=True,
    )
    text = render_plain(report)
    lines = text.splitlines()
    assert lines[0] == "MCP servers (5):"
    assert lines[1] == "  server        state       lifecycle  tools  auth            source"
    assert lines[2] == "  s-ready       ready       eager      2/3    not configured  config"
    # Errors show for failed and needs-auth only, on one line, with the controls made harmless.
    assert text.count("last error:") == 2
    assert "      last error: boom red␇ ⏎ second line" in lines
    assert "\x1b" not in text and "\x07" not in text
    assert "Project config: not loaded (/p/.orb)" in lines
    assert lines[-1] == "(one-shot: servers started for this report were stopped again)"


def test_plain_status_without_servers_or_ready_ones() -> None:
    assert render_plain(StatusReport(rows=())) == "No MCP servers configured."
    first = StatusReport(rows=(), config_file="/h/.orb/agent/mcp.json", paths_command="orbmcp config paths")
    assert render_plain(first).splitlines() == [
        "No MCP servers configured.",
        "Add one to /h/.orb/agent/mcp.json, for example:",
        '  {"mcpServers": {"NAME": {"command": "PROGRAM", "args": ["ARG"]}}}',
        "(`orbmcp config paths` lists every file orbmcp reads)",
    ]
    text = render_plain(StatusReport(rows=(_row("failed", error=None),), stopped_after=True))
    assert "last error" not in text and "one-shot" not in text  # nothing was left to stop


def test_plain_detail_shows_why_and_escapes_server_text() -> None:
    text = render_plain(_detail())
    lines = text.splitlines()
    assert lines[:7] == [
        "Server: gh",
        "State:  failed",
        "Retries: 5/5",
        "Transport: streamable-http",
        "Lifecycle: eager",
        "Source: global (/home/u/.orb/agent/mcp.json)",
        "Tools: 0/0 active",
    ]
    assert "Protocol: 2025-11-25 (GitHub MCP 1.0)" in lines
    assert "OAuth: credentials stored" in lines
    assert "Last error: boom red␇ ⏎ second line" in lines
    assert "Hint: orbmcp auth gh" in lines
    assert "Project config: not loaded (/work/p/.orb)" in lines
    assert lines[-4:] == ["Recent output:", "  line one", "", "stopped again"]
    assert "\x1b" not in text


def test_plain_detail_of_a_bare_stopped_server() -> None:
    bare = _detail(
        state="stopped",
        file=None,
        oauth=None,
        last_error=None,
        hint=None,
        recent_output=(),
        project_not_loaded=None,
        protocol_version=None,
        message=None,
    )
    text = render_plain(bare)
    assert "Source: global\n" in text
    for absent in ("Protocol:", "OAuth:", "Last error:", "Hint:", "Project config:"):
        assert absent not in text
    assert text.endswith("Recent output:\n(no stderr output from gh)")
    bare_info = render_plain(_detail(server_info=None))
    assert "Protocol: 2025-11-25\n" in bare_info


def test_plain_actions_messages_lines_documents() -> None:
    one = ServerAction("start", (_detail(state="ready", last_error=None),))
    assert render_plain(one).startswith("Server: gh\nState:  ready")
    assert one.exit_code == 0
    many = ServerAction(
        "reconnect",
        (_detail(state="ready", last_error=None), _detail(name="b", state="needs-auth")),
        message="stopped again\x1b[0m",
    )
    text = render_plain(many)
    assert text.splitlines()[1].split()[:2] == ["gh", "ready"]
    assert text.splitlines()[2].split()[:2] == ["b", "needs-auth"] and text.endswith("stopped again")
    assert many.exit_code == 5
    assert ServerAction("start", (_detail(error_code="timeout"),)).exit_code == 6
    assert ServerAction("stop", (_detail(),)).exit_code == 0

    assert render_plain(Message("two\nlines \x1b[31mred")) == "two\nlines red"
    assert render_plain(Lines(("a\nb", "c"))) == "a ⏎ b\nc"
    assert render_plain(CompletionScript("sh", "key  value\n\x1b[2Jnext")) == "key  value\nnext"


def test_a_value_that_is_no_result_is_a_bug_in_every_renderer() -> None:
    class WithTextMethod:
        exit_code = 0

        def text(self) -> str:
            return "from text()"

        def to_json(self) -> dict[str, int]:
            return {"n": 1}

    for value in (WithTextMethod(), {"raw": [1, 2]}):
        with pytest.raises(TypeError):
            render_plain(value)
        with pytest.raises(TypeError):
            to_json_text(value, pretty=False)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            exit_code_of(value)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            _rich(value)


def test_rich_status_table_escapes_markup_and_controls() -> None:
    rows = (*(_row(s) for s in STATES), _row("failed", name="[bold]evil[/bold]", error="[red]x[/red]"))
    text = _rich(StatusReport(rows=rows, notices=("turned [i]off[/i]",)))
    header = text.splitlines()[0].split()
    assert header == ["server", "state", "lifecycle", "tools", "auth", "source"]
    for state in STATES:
        assert state in text
    assert "[bold]evil[/bold]" in text  # shown literally, never interpreted as markup
    assert "[bold]evil[/bold]: last error: [red]x[/red]" in text
    assert "s-failed: last error: boom red␇ ⏎ second line" in text
    assert "s-ready:" not in text and "s-stopped:" not in text
    assert "turned [i]off[/i]" in text
    assert "\x07" not in text and "\x1b[31m" not in text


def test_rich_uses_colour_on_a_terminal_but_not_for_server_text() -> None:
    text = _rich(StatusReport(rows=(_row("ready", error=None), _row("failed"))), color=True)
    assert "\x1b[32mready" in text and "\x1b[31mfailed" in text
    assert "\x1b[31mred" not in text  # the server's own escape sequence was stripped


def test_rich_other_results_go_through_plain_text() -> None:
    many = ServerAction("reconnect", (_detail(state="ready"), _detail(name="b", state="stopped")))
    assert _rich(many).splitlines()[0].split() == ["server", "state", "lifecycle", "tools", "auth", "source"]
    detail = _rich(_detail())
    assert "Server: gh" in detail and "Last error: boom red␇ ⏎ second line" in detail
    assert _rich(StatusReport(rows=())).strip() == "No MCP servers configured."
    # Plain text containing brackets is printed as is (markup off).
    assert _rich(Message("[b]literal[/b]")).strip() == "[b]literal[/b]"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_render_to_terminal_picks_json_plain_or_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    assert render_to_terminal(None, json_output=True, no_color=True) == 0

    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    failed = ServerAction("start", (_detail(error_code="config"),))
    assert render_to_terminal(failed, json_output=True, no_color=True) == 3
    assert pipe.getvalue() == to_json_text(failed, pretty=False) + "\n"
    assert json.loads(pipe.getvalue())[0]["state"] == "failed"

    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    assert render_to_terminal(Message("done"), json_output=False, no_color=False) == 0
    assert pipe.getvalue() == "done\n"  # not a terminal: plain text, one trailing newline
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    assert render_to_terminal(Message("it failed", ok=False), json_output=True, no_color=False) == 1
    assert json.loads(pipe.getvalue()) == {"ok": False, "message": "it failed"}
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    assert render_to_terminal(Lines(()), json_output=False, no_color=False) == 0
    assert pipe.getvalue() == ""

    tty = _Terminal()
    monkeypatch.setattr(sys, "stdout", tty)
    assert render_to_terminal(Message("ok"), json_output=True, no_color=False) == 0
    assert tty.getvalue() == json.dumps({"ok": True, "message": "ok"}, indent=2) + "\n"

    tty = _Terminal()
    monkeypatch.setattr(sys, "stdout", tty)
    assert (
        render_to_terminal(StatusReport(rows=(_row("ready", error=None),)), json_output=False, no_color=False)
        == 0
    )
    assert "s-ready" in tty.getvalue() and "server" in tty.getvalue()  # the rich table

    tty = _Terminal()
    monkeypatch.setattr(sys, "stdout", tty)
    assert render_to_terminal(Message("plain please"), json_output=False, no_color=True) == 0
    assert tty.getvalue() == "plain please\n"


def test_exit_code_of_results() -> None:
    assert exit_code_of(None) == 0
    assert exit_code_of(Message("x")) == 0
    assert exit_code_of(ServerAction("start", (_detail(state="failed", error_code=None),))) == 4


def test_action_without_a_message_and_odd_text() -> None:
    stop = ServerAction("stop", (_detail(state="stopped"), _detail(name="b", state="stopped")))
    assert render_plain(stop).splitlines() == [
        "  server  state    lifecycle  tools  auth                source",
        "  gh      stopped  eager      0/0    credentials stored  global",
        "  b       stopped  eager      0/0    credentials stored  global",
    ]
    assert safe_text(42) == "42"  # type: ignore[arg-type]
    assert safe_text("lone \ud800 surrogate") == "lone \ufffd surrogate"


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def test_every_handler_returns_a_result_and_every_result_has_a_plain_rendering() -> None:
    import inspect

    from orbmcp import front_handlers
    from orbmcp.commands.table import COMMANDS
    from orbmcp.session.handler_refs import handler_of

    front_handlers.bind()
    for spec in COMMANDS:
        returned = typing.get_type_hints(handler_of(spec))["return"]
        kinds = typing.get_args(returned) if isinstance(returned, types.UnionType) else (returned,)
        assert all(k is type(None) or issubclass(k, Result) for k in kinds), spec.name

    import pkgutil

    import orbmcp.commands.results as results

    for module in pkgutil.iter_modules(results.__path__):  # every result type defined
        importlib.import_module(f"{results.__name__}.{module.name}")
    assert renderer_for(object) is None
    concrete = [
        c for c in _subclasses(Result) if not inspect.isabstract(c) and c.__module__.startswith("orbmcp.")
    ]
    assert len(concrete) > 20
    for kind in concrete:
        assert renderer_for(kind) is not None, kind.__name__


def test_the_plain_renderer_loads_neither_rich_nor_the_sdk() -> None:
    probe = (
        "import sys, orbmcp.render, orbmcp.render.json, orbmcp.render.plain; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
        ).stdout.split()
    )
    assert loaded & {"rich", "mcp", "mcp_types", "anyio", "pydantic", "httpx2"} == set()


def test_resource_listing_is_in_columns_in_plain_and_rich() -> None:
    from orbmcp.commands.results.tools import ResourceListing

    listing = ResourceListing(
        resources=(
            {"server": "fs", "uri": "file:///a", "name": "a", "mimeType": "text/plain", "description": "A."},
            {"server": "fs", "uri": "file:///longer/path.txt", "name": "path", "mimeType": "image/png"},
            {"server": "fs", "uri": "mem://x", "name": "mem://x"},
        ),
        templates=({"server": "fs", "uriTemplate": "file:///{p}", "name": "any", "parameters": ["p"]},),
        servers=("fs",),
    )
    expected = [
        "fs (3 resources, 1 template)",
        "  file:///a                a     (text/plain)  - A.",
        "  file:///longer/path.txt  path  (image/png)",
        "  mem://x",
        "  file:///{p}              any                 (template: p)",
    ]
    assert render_plain(listing).splitlines() == expected
    out = io.StringIO()
    render_rich(listing, Console(file=out, force_terminal=True, width=200, color_system=None))
    assert out.getvalue().splitlines() == expected
    one = ResourceListing(
        ({"server": "s", "uri": "u://" + "x" * 80, "mimeType": "text/plain"},), servers=("s",)
    )
    assert render_plain(one).splitlines() == ["s (1 resource)", "  u://" + "x" * 80 + "  (text/plain)"]
