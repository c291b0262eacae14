"""Edge cases of the shared grammar: parsing and binding lines, completing them, completion
scripts, and the REPL's exit model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orbmcp.commands.complete import complete_line, split_partial, usage_line
from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers.completion import script, show
from orbmcp.commands.results import ShellExit
from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.errors import UsageError
from orbmcp.frontends.slash import (
    complete_fast,
    format_error,
    help_document,
    parse_shell,
    parse_slash,
    render,
)
from orbmcp.frontends.terminal import TerminalUI
from orbmcp.render.plain import render_plain
from tests.frontends import OFFLINE_SERVERS, write_config

SERVERS = {**OFFLINE_SERVERS, "gamma": {"command": "true", "lifecycle": "lazy"}}
ALL = sorted(SERVERS)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path, SERVERS)


# -- parsing and binding --------------------------------------------------------------------------


def test_shell_lines_that_name_no_command() -> None:
    for line in ("orbmcp", "", ["orbmcp"]):
        with pytest.raises(UsageError, match="empty command") as info:
            parse_shell(line)
        assert info.value.hint == "try `help`"


def test_option_values_are_converted_as_typer_would() -> None:
    inv = parse_shell("call srv t --max-output 10 --timeout=2.5")
    assert inv.kwargs["max_output"] == 10 and inv.kwargs["timeout"] == 2.5
    with pytest.raises(UsageError, match=r"--max-output: expected an integer, got 'lots'"):
        parse_shell("call srv t --max-output lots")
    with pytest.raises(UsageError, match=r"--timeout: expected a number, got 'soon'"):
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
    assert inv.help
    doc = help_document(inv.spec, slash=False)
    assert render_plain(doc) == f"usage: orbmcp shell\n\n{inv.spec.help}"
    assert doc.to_json() == {"command": "shell", "usage": "orbmcp shell", "help": inv.spec.help}


def test_nothing_to_render_is_empty_and_errors_without_hints_are_one_line() -> None:
    assert render(None, json_output=False) == "" and render(None, json_output=True) == ""
    assert format_error(UsageError("no\nway"), json_output=False) == "error: no ⏎ way"


def test_usage_lines_leave_hidden_parameters_out() -> None:
    spec = CommandSpec(
        ("demo",),
        "A demo.",
        "orbmcp.commands.handlers.demo:demo",
        (
            Param("target", "What.", required=True),
            Param("secret", "Internal.", kind="option", hidden=True),
            Param("extra", "More.", multiple=True),
            Param("count", "How many.", kind="option", type="int", multiple=True),
        ),
    )
    assert usage_line(spec) == "orbmcp demo TARGET [EXTRA...] [--count INTEGER]..."
    assert usage_line(spec, slash=True) == "/mcp demo <target> [<extra>...] [--count INTEGER]..."


# -- completion -------------------------------------------------------------------------------------


def test_quotes_and_escapes_in_partial_lines() -> None:
    assert split_partial("'a b' c") == (["a b"], "c")
    assert split_partial('"say \\"hi\\"" "x\\n') == (['say "hi"'], "x\\n")
    assert split_partial("a   b\t") == (["a", "b"], "")
    assert split_partial("trailing\\") == ([], "trailing\\")


def test_unknown_options_and_double_dash_while_completing(config: Path) -> None:
    def complete(line: str) -> list[str]:
        return complete_line(line, config_file=config)

    assert complete("orbmcp --bogus st") == ["start", "status", "stop"]  # an unknown global flag
    assert complete("orbmcp --no-color st") == ["start", "status", "stop"]
    assert complete("orbmcp status --bogus g") == ["gamma"]
    assert complete("orbmcp status -- g") == ["gamma"]
    assert complete("orbmcp status -- --") == []  # after --, no options are offered
    assert complete("orbmcp status alpha ") == []  # every argument given
    assert complete("orbmcp status alpha extra ") == []
    assert complete("orbmcp call --timeout ") == []  # a number: nothing to offer
    assert complete("orbmcp check alpha --require-tool ") == []
    assert complete("orbmcp check alpha --require-tool x --require-tool=y g") == ["gamma"]
    assert complete("orbmcp slash ab") == []  # a nested line must start with /
    assert complete("/bogus ") == []
    assert complete("orbmcp bogus --h") == ["--help"]


def test_a_project_on_the_line_picks_the_config(tmp_path: Path, _isolated_agent_dir: Path) -> None:
    _isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    (_isolated_agent_dir / "mcp.json").write_text(
        json.dumps({"mcpServers": {"glob": {"command": "true", "lifecycle": "lazy"}}})
    )
    project = tmp_path / "proj"
    project.mkdir()
    assert complete_line(f"orbmcp --project {project} start ") == ["glob"]
    assert complete_line(f"orbmcp -p={project} start g") == ["glob"]
    assert complete_line("orbmcp --project ") == []  # a directory: the shell completes it


def test_complete_fast_survives_a_closed_pipe(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class ClosedPipe:
        def write(self, text: str) -> int:
            raise BrokenPipeError

        def flush(self) -> None:
            raise BrokenPipeError

    monkeypatch.setenv("ORBMCP_CONFIG", str(config))
    monkeypatch.setattr("sys.stdout", ClosedPipe())
    assert complete_fast(["/mcp:st"]) == 0  # `orbmcp complete ... | head -0` is no error


# -- completion scripts and the REPL's exit model ---------------------------------------------------


def test_completion_show_and_unknown_shells() -> None:
    ctx = CommandContext(ui=TerminalUI(interactive=False))
    doc = show(ctx, "fish")
    assert doc.to_json()["shell"] == "fish" and render_plain(doc) == script("fish")
    assert "complete -c orbmcp" in render_plain(doc)
    with pytest.raises(UsageError, match="unknown shell 'tcsh'") as info:
        script("tcsh")
    assert info.value.hint == "choose one of: bash, zsh, fish"


def test_a_scripted_shell_exit_status_has_no_text() -> None:
    result = ShellExit(3)
    assert (result.to_json(), render_plain(result), result.exit_code) == ({"exitCode": 3}, "", 3)
