"""Parity: the Typer front and the slash front run the same handlers and print the same JSON."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.frontends import shell_command as cli
from orbmcp.session.one_shot import OneShotSessions
from orbmcp.session.runner import call_handler
from orbmcp.session.slash import dispatch, parse_slash
from orbmcp.session.terminal import TerminalUI
from tests.cli import run_cli
from tests.frontends import OFFLINE_SERVERS, everything_entry, write_config

OFFLINE = [
    ("status", "/mcp"),
    ("status alpha", "/mcp alpha"),
    ("status web", "/mcp status web"),
    ("config paths", "/mcp config paths"),
    ("config validate", "/mcp config validate"),
    ("check", "/mcp check"),
    ("start nope", "/mcp:start nope"),
    ("stop nope", "/mcp stop nope"),
    ("reconnect nope", "/mcp reconnect nope"),
    ("auth alpha --status", "/mcp:auth alpha --status"),
]

LIVE = [
    ("start ev", "/mcp:start ev"),
    ("stop ev", "/mcp stop ev"),
    ("status ev", "/mcp ev"),
    ("tools ev", "/mcp tools ev"),
    ("call ev add a=2 b=40", "/mcp call ev add a=2 b=40"),
    ("check ev --require-tool ev/echo", "/mcp check ev --require-tool ev/echo"),
]


@pytest.fixture
def offline(tmp_path: Path) -> Path:
    return write_config(tmp_path, OFFLINE_SERVERS)


@pytest.fixture
def live(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"ev": everything_entry(lifecycle="lazy"), **OFFLINE_SERVERS})


def _both(config: Path, shell: str, slash: str) -> tuple[Any, Any]:
    a = run_cli("--config", str(config), *shlex.split(shell), "--json")
    b = run_cli("--config", str(config), "slash", slash, "--json")
    assert a.code == b.code, (a.stderr, b.stderr)
    envelope = json.loads(b.stdout)  # slash --json: the agent protocol's result envelope
    assert envelope["exit"] == b.code
    if a.code not in (0, 1):
        assert a.stdout == "" and envelope["json"] is None
        shell_error, slash_error = json.loads(a.stderr)["error"], envelope["error"]
        pick = ("code", "reason", "server")
        return {k: shell_error.get(k, shell_error["code"]) for k in pick}, {k: slash_error[k] for k in pick}
    return json.loads(a.stdout), envelope["json"]


@pytest.mark.parametrize(("shell", "slash"), OFFLINE)
def test_offline_scenarios_print_equal_json(offline: Path, shell: str, slash: str) -> None:
    typer_json, slash_json = _both(offline, shell, slash)
    assert typer_json == slash_json


@pytest.mark.slow
@pytest.mark.parametrize(("shell", "slash"), LIVE)
def test_live_scenarios_print_equal_json(live: Path, shell: str, slash: str) -> None:
    typer_json, slash_json = _both(live, shell, slash)
    assert typer_json == slash_json
    if shell.startswith("start"):
        assert typer_json[0]["state"] == "ready"
    if shell.startswith("call"):
        assert typer_json["isError"] is False and "42" in json.dumps(typer_json["content"])


def _typer_kwargs(shell: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, dict[str, Any]]:
    """What the shell front hands run_command for these words."""
    seen: dict[str, Any] = {}

    def capture(spec: Any, kwargs: dict[str, Any], opts: Any = None) -> int:
        seen.update(spec=spec, kwargs=dict(kwargs))
        return 0

    monkeypatch.setattr(cli, "run_command", capture)
    assert cli.run_program([*shlex.split(shell), "--json"]) == 0
    return seen["spec"], seen["kwargs"]


@pytest.mark.parametrize(
    ("shell", "slash"),
    [
        *OFFLINE,
        *LIVE,
        ("reconnect", "/mcp reconnect"),
        ("reconnect ev", "/mcp:reconnect ev"),
        (
            "call ev echo 'text=a b' --timeout 2 --max-output 9",
            "/mcp call ev echo 'text=a b' --timeout 2 --max-output=9",
        ),
        ("call ev echo --args '{}' --save-images out", "/mcp call ev echo --args '{}' --save-images out"),
    ],
)
def test_both_fronts_bind_the_same_arguments(shell: str, slash: str, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, typer_kwargs = _typer_kwargs(shell, monkeypatch)
    inv = parse_slash(slash + " --json")
    assert inv.spec is spec
    assert inv.kwargs == typer_kwargs


@pytest.mark.parametrize(("shell", "slash"), OFFLINE[:6])
async def test_equal_result_models_in_process(
    offline: Path, shell: str, slash: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, kwargs = _typer_kwargs(shell, monkeypatch)

    def ctx() -> CommandContext:
        return CommandContext(
            ui=TerminalUI(interactive=False), sessions=OneShotSessions(), config_file=offline
        )

    direct = await call_handler(spec, ctx(), kwargs)
    via_slash, code = await dispatch(slash, ctx())
    assert via_slash == direct
    assert code == getattr(direct, "exit_code", 0)
