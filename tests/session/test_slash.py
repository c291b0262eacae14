"""The slash dispatcher: grammar from the table, the one parser of every front, same handlers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.base import ShellExit
from orbmcp.commands.results.status import ServerDetail, StatusReport
from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.commands.spelling import speller_for
from orbmcp.commands.table import COMMANDS, find
from orbmcp.commands.usage import usage_line
from orbmcp.errors import UsageError
from orbmcp.render.plain import render_plain
from orbmcp.session.slash import (
    dispatch,
    format_error,
    parse_shell,
    parse_slash,
    render,
    run_slash,
)
from orbmcp.session.terminal import TerminalUI
from tests.cli import run_cli
from tests.frontends import OFFLINE_SERVERS, env_for, write_config
from tests.timeouts import LONG_GUARD_S

SERVERS = ["alpha", "beta", "web"]


def _bound(kwargs: dict[str, object]) -> dict[str, object]:
    """The keywords bound, without the ad-hoc server's options left unset (commands/adhoc.py)."""
    from orbmcp.commands.adhoc import KEYS

    return {k: v for k, v in kwargs.items() if not (k in KEYS and v is None)}


def servers() -> list[str]:
    return SERVERS


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path, OFFLINE_SERVERS)


@pytest.fixture
def ctx(config: Path) -> CommandContext:
    return CommandContext(ui=TerminalUI(interactive=False), config_file=config, front="slash")


def test_every_table_spelling_and_its_twin_reach_the_command() -> None:
    for spec in COMMANDS:
        for spelling in spec.slash:
            twin = spelling.replace(":", " ") if ":" in spelling else spelling.replace(" ", ":", 1)
            for line in {spelling, twin}:
                args = " alpha" if any(p.required for p in spec.params) else ""
                inv = parse_slash(line + args, servers=servers)
                assert inv.spec is spec, line
                assert inv.front == "slash"


def test_slash_forms() -> None:
    status = find(("status",))
    assert parse_slash("/mcp").spec is status
    assert _bound(parse_slash("/mcp").kwargs) == {"server": None, "timeout": None, "json": False}
    inv = parse_slash("/mcp alpha --json", servers=servers)
    assert (inv.spec, _bound(inv.kwargs), inv.json) == (
        status,
        {"server": "alpha", "timeout": None, "json": True},
        True,
    )
    assert (
        parse_slash("/mcp:start alpha").kwargs
        == parse_slash("/mcp start alpha").kwargs
        == {"server": "alpha", "log_level": None, "timeout": None, "json": False}
    )
    auth = parse_slash("/mcp:auth web --reset")
    assert auth.spec is find(("auth",)) and auth.kwargs["reset"] is True and auth.kwargs["status"] is False
    assert _bound(parse_slash("/mcp reconnect").kwargs) == {"server": None, "json": False}
    assert parse_slash("/mcp reconnect beta").kwargs["server"] == "beta"
    call = parse_slash("/mcp call alpha echo a=1 'b=two words' --timeout 2.5 --max-output=10")
    assert call.spec is find(("call",))
    assert call.kwargs["arguments"] == ["a=1", "b=two words"]
    assert (call.kwargs["timeout"], call.kwargs["max_output"], call.kwargs["args"]) == (2.5, 10, None)
    assert parse_slash("/mcp config show").spec is find(("config", "show"))
    assert parse_slash("/mcp:status alpha").kwargs["server"] == "alpha"


def test_commands_win_over_servers_named_like_them() -> None:
    named = lambda: ["start", "alpha"]  # noqa: E731
    with pytest.raises(UsageError, match=r"Missing argument 'SERVER'"):
        parse_slash("/mcp start", servers=named)
    inv = parse_slash("/mcp status start", servers=named)
    assert (inv.spec, inv.kwargs["server"]) == (find(("status",)), "start")


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        (
            "/mcp bogus",
            r"unknown command or server 'bogus' \(commands: .*start.*; servers: alpha, beta, web\)",
        ),
        ("/mcp:frob x", r"unknown slash command '/mcp:frob' \(commands: /mcp, /mcp:auth"),
        ("/mcpx", r"unknown slash command '/mcpx'"),
        ("/mcp:start", r"Missing argument 'SERVER'"),
        ("/mcp:start alpha --bogus", r"No such option: --bogus"),
        ("/mcp:start alpha --tim 1", r"No such option: --tim \(Possible options: --timeout\)"),
        ("/mcp:start alpha beta", r"unexpected extra argument\(s\) \(beta\)"),
        ("/mcp call a t --timeout soon", r"Invalid value for '--timeout': 'soon' is not a valid float"),
        ("/mcp call a t --timeout", r"Option '--timeout' requires an argument"),
        ("/mcp:auth web --reset=yes", r"Option '--reset' does not take a value"),
        ("/mcp config", r"'/mcp config' needs a command: paths, show, validate"),
        ("/mcp shell", r"unknown command or server 'shell'"),
        ("/mcp trust", r"unknown command or server 'trust'"),
        ('/mcp "open', r"cannot parse the line"),
        ("", r"empty slash command"),
    ],
)
def test_usage_errors_say_what_exists(line: str, pattern: str) -> None:
    with pytest.raises(UsageError, match=pattern) as info:
        parse_slash(line, servers=servers)
    assert info.value.code == "usage"


def test_every_command_binds_every_parameter_with_its_default() -> None:
    """Absent values are the table's: None, flags False; the handler cannot tell the front."""
    from orbmcp.session.command_line import parse_command

    for spec in COMMANDS:
        required = [f"x{i}" for i, p in enumerate(spec.params) if p.required]
        for front in ("cli", "shell", "slash"):
            kwargs = parse_command(spec, required, front=front).kwargs
            assert set(kwargs) == {p.name for p in spec.params}, spec.name
            for p in spec.params:
                if not p.required:
                    assert kwargs[p.name] == (False if p.kind == "flag" else None), (spec.name, p.name)


def test_a_usage_error_hints_the_usage_in_the_front_s_spelling() -> None:
    with pytest.raises(UsageError) as info:
        parse_slash("/mcp:start")
    assert info.value.hint_in(speller_for("slash")) == "usage: /mcp:start [OPTIONS] SERVER"
    assert info.value.hint == "usage: orbmcp start [OPTIONS] SERVER"


def test_shell_style_lines_for_the_repl() -> None:
    assert _bound(parse_shell("status alpha --json").kwargs) == {
        "server": "alpha",
        "timeout": None,
        "json": True,
    }
    assert parse_shell("orbmcp tools alpha --schema").kwargs["schema"] is True
    assert parse_shell("config paths").spec is find(("config", "paths"))
    assert parse_shell("status").front == "shell"
    with pytest.raises(UsageError, match="'config' needs a command"):
        parse_shell("config")
    with pytest.raises(UsageError, match="unknown command 'statu'") as info:
        parse_shell("statu")
    assert info.value.hint == "did you mean 'status'?"
    with pytest.raises(UsageError, match="option of the orbmcp program"):
        parse_shell("--json status")


def test_help_shows_the_slash_usage() -> None:
    inv = parse_slash("/mcp:auth web --help")
    assert inv.help
    inv = parse_slash("/mcp:start --help")  # help needs no server
    assert inv.help


async def test_dispatch_runs_the_same_handlers(ctx: CommandContext) -> None:
    result, code = await dispatch("/mcp", ctx)
    assert isinstance(result, StatusReport) and code == 0
    assert [r.name for r in result.rows] == SERVERS
    detail, code = await dispatch("/mcp alpha", ctx)
    assert isinstance(detail, ServerDetail) and code == 0
    assert detail.lifecycle == "lazy (disabled)"
    text = render(detail, json_output=False)
    assert text.startswith("Server: alpha\nState:  disabled")
    assert json.loads(render(detail, json_output=True))["name"] == "alpha"
    doc, _ = await dispatch("/mcp:start --help", ctx)
    assert render(doc, json_output=False).startswith("usage: /mcp:start [OPTIONS] SERVER\n")


async def test_run_slash_never_raises_and_renders_errors(ctx: CommandContext) -> None:
    reply = await run_slash("/mcp bogus", ctx)
    assert reply.exit_code == 2 and reply.result is None and reply.error is not None
    assert reply.text.startswith("error: unknown command or server 'bogus'")
    reply = await run_slash("/mcp bogus --json", ctx)
    assert json.loads(reply.text)["error"]["code"] == "usage"
    reply = await run_slash("/mcp --json", ctx)
    assert [row["name"] for row in json.loads(reply.text)] == SERVERS
    reply = await run_slash("/mcp", ctx, json_output=False)
    assert reply.text.startswith("MCP servers (3):")


def test_orbmcp_slash_process(config: Path) -> None:
    r = run_cli("slash", "/mcp", env=env_for(config))
    assert r.code == 0 and r.stdout.startswith("MCP servers (3):"), r.stderr
    r = run_cli("slash", "/mcp bogus", env=env_for(config))
    assert r.code == 2 and r.stdout == ""
    assert "servers: alpha, beta, web" in r.stderr
    # --json: the agent protocol's result envelope on stdout, its exit status the process's
    r = run_cli("slash", "/mcp:start nope", "--json", env=env_for(config))
    envelope = json.loads(r.stdout)
    assert r.code == 2 == envelope["exit"] and envelope["json"] is None and envelope["content"] == []
    err = envelope["error"]
    assert (err["code"], err["reason"], err["server"]) == ("usage", "unknown_server", None)
    assert "nope" in err["message"] and err["hint"] == "known servers: alpha, beta, web"
    assert envelope["text"].startswith("error: unknown server 'nope'")
    # --json inside the line gives JSON even without the outer flag
    r = run_cli("slash", "/mcp alpha --json", env=env_for(config))
    assert r.code == 0 and json.loads(r.stdout)["name"] == "alpha"


async def test_an_agent_host_keeps_servers_between_slash_lines(tmp_path: Path) -> None:
    import anyio

    from orbmcp.session.persistent import PersistentSessions
    from tests.frontends import everything_entry

    config_path = write_config(tmp_path, {"ev": everything_entry(lifecycle="lazy"), **OFFLINE_SERVERS})
    ctx = CommandContext(ui=TerminalUI(interactive=False), config_file=config_path, front="host")
    with anyio.fail_after(LONG_GUARD_S):
        async with PersistentSessions(ctx.config(), ui=ctx.ui) as sessions:
            ctx.sessions = sessions
            reply = await run_slash("/mcp:start ev", ctx)
            assert reply.exit_code == 0 and "State:  ready" in reply.text
            assert "one-shot" not in reply.text  # a persistent session says nothing of stopping again
            rows = json.loads((await run_slash("/mcp --json", ctx)).text)
            assert {r["name"]: r["state"] for r in rows}["ev"] == "ready"
            reply = await run_slash("/mcp tools ev", ctx)
            assert reply.exit_code == 0 and "echo(" in reply.text
            assert sessions.running_names() == {"ev"}
            manager = await sessions.manager()
        assert not manager.supervisors["ev"].running  # leaving the session stopped it


def test_shell_lines_that_name_no_command() -> None:
    for line in ("orbmcp", "", ["orbmcp"]):
        with pytest.raises(UsageError, match="empty command") as info:
            parse_shell(line)
        assert info.value.hint == "try `help`"


def test_option_values_are_converted_as_typer_would() -> None:
    inv = parse_shell("call srv t --max-output 10 --timeout=2.5")
    assert inv.kwargs["max_output"] == 10 and inv.kwargs["timeout"] == 2.5
    with pytest.raises(UsageError, match=r"'--max-output': 'lots' is not a valid int"):
        parse_shell("call srv t --max-output lots")
    with pytest.raises(UsageError, match=r"'--timeout': 'soon' is not a valid float"):
        parse_slash("/mcp call srv t --timeout soon")


def test_repeatable_options_collect_every_value() -> None:
    inv = parse_shell("check a b --require-tool x --require-tool=y")
    assert inv.kwargs["servers"] == ["a", "b"] and inv.kwargs["require_tool"] == ["x", "y"]
    assert parse_shell("check").kwargs["require_tool"] is None


def test_double_dash_ends_the_options() -> None:
    inv = parse_shell("call srv t -- --json -x=1")
    assert inv.kwargs["arguments"] == ["--json", "-x=1"] and inv.json is False
    slash = parse_slash("/mcp call srv t -- --timeout")
    assert slash.kwargs["arguments"] == ["--timeout"] and slash.kwargs["timeout"] is None


def test_help_of_a_command_without_parameters_is_usage_and_help() -> None:
    inv = parse_shell("shell --help")
    doc = inv.help
    assert doc is not None
    assert render_plain(doc).startswith(f"usage: shell [OPTIONS]\n\n  {inv.spec.help}\n")
    assert doc.to_json()["usage"] == "shell [OPTIONS]"
    assert inv.help_text.startswith(f"Usage: shell [OPTIONS]\n\n  {inv.spec.help}\n")


def test_nothing_to_render_is_empty_and_errors_without_hints_are_one_line() -> None:
    assert render(None, json_output=False) == "" and render(None, json_output=True) == ""
    assert format_error(UsageError("no\nway"), json_output=False) == "error: no ⏎ way"


def test_usage_lines_leave_hidden_parameters_out() -> None:
    spec = CommandSpec(
        ("demo",),
        "A demo.",
        (
            Param("target", "What.", required=True),
            Param("secret", "Internal.", kind="option", hidden=True),
            Param("extra", "More.", multiple=True),
            Param("count", "How many.", kind="option", type="int", multiple=True),
        ),
    )
    assert usage_line(spec) == "orbmcp demo TARGET [EXTRA...] [--count INTEGER]..."
    assert usage_line(spec, slash=True) == "/mcp demo <target> [<extra>...] [--count INTEGER]..."


def test_a_scripted_shell_exit_status_has_no_text() -> None:
    result = ShellExit(3)
    assert (result.to_json(), render_plain(result), result.exit_code) == ({"exitCode": 3}, "", 3)
