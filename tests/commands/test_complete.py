"""Completion: slash and shell lines, from the table, the config and the discovery cache, offline;
and the completion scripts."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from orbmcp.commands.complete import complete_line, slash_spellings, split_partial
from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers.completion import script, show
from orbmcp.commands.table import COMMANDS
from orbmcp.config.loader import load_config
from orbmcp.core.tooling import toolcache
from orbmcp.errors import UsageError
from orbmcp.render.plain import render_plain
from orbmcp.session.slash import (
    complete_fast,
)
from orbmcp.session.terminal import TerminalUI
from tests.cli import run_cli
from tests.frontends import OFFLINE_SERVERS, PY, ROOT, env_for, write_config

SERVERS = {
    **OFFLINE_SERVERS,
    "gamma": {"command": "true", "lifecycle": "lazy"},
    "start": {"command": "true", "lifecycle": "lazy"},  # named like a command
}
ALL = sorted(SERVERS)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path, SERVERS)


def complete(line: str, config: Path, **kw: object) -> list[str]:
    return complete_line(line, config_file=config, **kw)  # type: ignore[arg-type]


def test_slash_command_names_complete_from_the_table(config: Path) -> None:
    assert complete("/mcp:st", config) == ["/mcp:start", "/mcp:stop"]
    assert complete("/mcp:a", config) == ["/mcp:auth"]
    assert complete("/m", config) == slash_spellings()
    # every spelling the table declares is offered (space forms as their colon twin)
    for spec in COMMANDS:
        for spelling in spec.slash:
            assert spelling.replace(" ", ":") in slash_spellings()


def test_start_offers_servers_not_running_and_stop_the_running_ones(config: Path) -> None:
    assert complete("/mcp:start ", config) == ALL  # no session knows: everything
    assert complete("/mcp:start ", config, running={"gamma"}) == [n for n in ALL if n != "gamma"]
    assert complete("/mcp:stop ", config, running={"gamma"}) == ["gamma"]
    assert complete("/mcp:stop ", config) == ALL
    assert complete("/mcp start g", config, running=set()) == ["gamma"]
    assert complete("orbmcp stop ", config, running={"alpha", "gamma"}) == ["alpha", "gamma"]


def test_auth_offers_only_oauth_servers(config: Path) -> None:
    assert complete("/mcp:auth ", config) == ["web"]
    assert complete("/mcp auth ", config) == ["web"]
    assert complete("orbmcp auth ", config) == ["web"]
    assert complete("orbmcp logout w", config) == ["web"]


def test_bare_mcp_offers_subcommands_and_every_server(config: Path) -> None:
    got = complete("/mcp ", config)
    assert set(ALL) <= set(got)
    assert {"start", "stop", "auth", "reconnect", "tools", "call", "config"} <= set(got)
    assert not {"shell", "slash", "complete", "completion", "trust"} & set(got)
    assert complete("/mcp reconnect ", config) == ALL
    assert complete("/mcp:reconnect ", config) == ALL
    assert complete("/mcp config ", config) == ["paths", "show", "validate"]
    assert complete("/mcp gamma --", config) == ["--help", "--json", "--timeout"]
    assert complete("/mcp:auth web --r", config) == ["--reset"]
    assert complete("/mcp:frob ", config) == []


def test_shell_lines_complete_commands_options_and_values(config: Path) -> None:
    assert complete("orbmcp st", config) == ["start", "status", "stop"]
    assert complete("st", config) == ["start", "status", "stop"]  # the REPL's shell-style lines
    assert complete("orbmcp co", config) == ["complete", "completion", "config"]
    assert complete("orbmcp config ", config) == ["import", "paths", "show", "validate"]
    assert complete("orbmcp completion show ", config) == ["bash", "fish", "zsh"]
    assert complete("orbmcp status --", config) == [
        "--env", "--header", "--help", "--http", "--json", "--name", "--sse", "--stdio", "--timeout",
    ]  # fmt: skip
    assert complete("orbmcp --", config) == [
        "--config",
        "--help",
        "--json",
        "--no-color",
        "--no-daemon",
        "--no-input",
        "--project",
        "--version",
    ]
    assert complete("orbmcp call --timeout 3 ", config) == ALL  # option values are skipped
    assert complete("orbmcp auth web --reset --", config) == ["--help", "--json", "--no-browser", "--status"]
    assert complete("orbmcp check alpha ", config) == [n for n in ALL if n != "alpha"]
    assert complete("orbmcp bogus ", config) == []
    assert complete("orbmcp --config ", config) == []  # a path: the shell completes files


def test_config_on_the_line_wins(tmp_path: Path, config: Path) -> None:
    other = write_config(tmp_path, {"zeta": {"command": "true", "enabled": False}}, name="other.json")
    assert complete(f"orbmcp --config {other} start ", config) == ["zeta"]
    assert complete(f"orbmcp -c={other} start ", config) == ["zeta"]


def test_tool_names_come_from_the_cache_or_a_live_session(config: Path, _isolated_agent_dir: Path) -> None:
    cache = _isolated_agent_dir / "cache" / "tools.json"
    assert complete("orbmcp call gamma ", config) == []
    assert toolcache.save(cache, "gamma", ["echo", "add", "evil\x1b]0;x\x07", "two words", "add"])
    assert complete("orbmcp call gamma ", config) == ["add", "echo"]  # unsafe names never offered
    assert complete("/mcp call gamma e", config) == ["echo"]
    assert complete("orbmcp call gamma ", config, tool_names={"gamma": ["live"]}) == ["live"]
    assert complete("orbmcp call gamma echo ", config) == []  # arguments: no completer
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600


def test_nested_slash_line_and_quotes(config: Path) -> None:
    assert complete('orbmcp slash "/mcp:start ga', config) == ["/mcp:start gamma"]
    assert complete("orbmcp slash /mcp:st", config) == ["/mcp:start", "/mcp:stop"]
    assert complete("orbmcp status 'gam", config) == ["gamma"]
    assert split_partial('a "b c" d\\ e \'f') == (["a", "b c", "d e"], "f")
    assert split_partial("a b ") == (["a", "b"], "")


def test_a_broken_config_still_completes_commands(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": ')
    assert complete_line("orbmcp st", config_file=bad) == ["start", "status", "stop"]
    assert complete_line("/mcp:start ", config_file=bad) == []
    assert complete_line("/mcp:start ", config_file=tmp_path / "missing.json") == []


def test_config_loader_is_called_only_when_needed(config: Path) -> None:
    calls: list[object] = []

    def loader(**kw: object) -> object:
        calls.append(kw)
        return load_config(**kw)  # type: ignore[arg-type]

    assert complete_line("orbmcp st", config_loader=loader) == ["start", "status", "stop"]  # type: ignore[arg-type]
    assert calls == []
    assert complete_line("/mcp:auth ", config_loader=loader, config_file=config) == ["web"]  # type: ignore[arg-type]
    assert calls == [{"project": None, "config_file": config}]


def test_toolcache_is_tolerant(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "tools.json"
    assert toolcache.load(path) == {}
    path.parent.mkdir()
    path.write_text("not json")
    assert toolcache.load(path) == {}
    assert toolcache.save(path, "a", ["x"])
    assert toolcache.save(path, "b", ["y", "z"])
    assert toolcache.load(path) == {"a": ["x"], "b": ["y", "z"]}
    toolcache.forget(path, "a")
    assert toolcache.load(path) == {"b": ["y", "z"]}
    path.write_text(json.dumps({"servers": {"a": {"tools": ["ok", 3, "bad\nname"]}, "b": "junk"}}))
    assert toolcache.load(path) == {"a": ["ok"]}


# ------------------------------------------------------------------------------ as a real process

HEAVY = ("mcp", "mcp_types", "httpx2", "httpx", "pydantic", "pydantic_settings", "rich")
PROBE = """
import json, sys
watched = set(json.loads(sys.argv[2]))
sys.argv = ["orbmcp", *json.loads(sys.argv[1])]
from orbmcp.fastpath.entry import main
try:
    main()
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & watched)
sys.stderr.write("HEAVY " + json.dumps(heavy) + "\\n")
"""


@pytest.mark.parametrize(
    "args",
    [
        ["complete", "/mcp:start "],
        ["--no-color", "complete", "/mcp:start "],
        ["complete", "--json", "orbmcp call gamma "],
    ],
)
def test_complete_process_imports_nothing_heavy(args: list[str], config: Path) -> None:
    import subprocess

    r = subprocess.run(
        [PY, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)],
        cwd=ROOT,
        env=env_for(config),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    heavy = json.loads(r.stderr.rsplit("HEAVY ", 1)[1])
    assert heavy == []
    if args[-1] == "/mcp:start ":
        assert r.stdout.splitlines() == ALL


def test_orbmcp_complete_prints_one_candidate_per_line(config: Path) -> None:
    r = run_cli("complete", "/mcp:st", env=env_for(config))
    assert (r.code, r.stdout) == (0, "/mcp:start\n/mcp:stop\n")
    r = run_cli("complete", "/mcp:auth ", "--json", env=env_for(config))
    web = {"value": "web", "description": "", "kind": "server", "replace_from": 10}
    assert (r.code, json.loads(r.stdout)) == (0, {"items": [web]})
    # through Typer (a global option first) the answer is the same
    r = run_cli(
        "--config",
        str(config),
        "complete",
        "orbmcp st",
        env={**env_for(), "ORB_AGENT_DIR": os.environ["ORB_AGENT_DIR"]},
    )
    assert (r.code, r.stdout.split()) == (0, ["start", "status", "stop"])


def test_the_fast_path_prints_what_typer_would(
    config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from orbmcp.session.slash import complete_fast

    monkeypatch.setenv("ORBMCP_CONFIG", str(config))
    assert complete_fast(["/mcp:st"]) == 0
    assert capsys.readouterr().out == "/mcp:start\n/mcp:stop\n"
    assert complete_fast(["--json", "--", "/mcp:auth "]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "items": [{"value": "web", "description": "", "kind": "server", "replace_from": 10}]
    }
    assert complete_fast(["orbmcp zzz"]) == 0
    assert capsys.readouterr().out == ""
    for args in (["--help"], [], ["a", "b"], ["--json", "--json", "x"]):
        assert complete_fast(args) is None  # left to Typer


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


def test_completion_show_and_unknown_shells() -> None:
    ctx = CommandContext(ui=TerminalUI(interactive=False))
    doc = show(ctx, "fish")
    assert doc.to_json()["shell"] == "fish" and render_plain(doc) == script("fish")
    assert "complete -c orbmcp" in render_plain(doc)
    with pytest.raises(UsageError, match="unknown shell 'tcsh'") as info:
        script("tcsh")
    assert info.value.hint == "choose one of: bash, zsh, fish"
