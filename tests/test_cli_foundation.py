"""The foundation from the shell: fast paths import nothing heavy, config errors exit 3,
trust binds to definitions, a bug is one line + exit 70 + a crash log."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orbmcp._version import __version__
from orbmcp.commands.spec import CommandSpec
from orbmcp.session.handler_refs import bind_handlers
from orbmcp.session.runner import run_in_shell
from tests.cli import run_cli

HEAVY = ("mcp", "mcp_types", "httpx2", "pydantic_settings")
# What a path with nothing to connect has no use for: the event loop, TLS, the SDK's models.
NOT_ON_FAST_PATHS = (*HEAVY, "asyncio", "anyio", "ssl", "pydantic", "httpx")


def _imported(*args: str, cwd: Path | None = None) -> set[str]:
    """Top-level modules imported by one real CLI run (from -X importtime)."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "orbmcp", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        check=False,
    )
    names = set()
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert names, r.stderr[-500:]
    return names


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text("""{
      // JSONC: comments and trailing commas
      "mcpServers": {
        "local": {"command": "my-server", "args": ["--stdio"], "env": {"API_TOKEN": "tok-1234567890"}},
        "remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer sekrit-abcdef"}},
      },
    }""")
    return path


@pytest.mark.parametrize(
    "args",
    [["--version"], ["--help"], ["complete", "/mcp:start "], ["complete", "--json", "orbmcp st"]],
)
def test_fast_commands_never_import_the_sdk(args: list[str], tmp_path: Path) -> None:
    (tmp_path / ".orb").mkdir()
    (tmp_path / ".orb" / "mcp.json").write_text('{"mcpServers": {"p": {"command": "x", "enabled": false}}}')
    heavy = _imported(*args, cwd=tmp_path) & set(NOT_ON_FAST_PATHS)
    assert heavy == set()


@pytest.mark.parametrize(
    "args",
    [
        ["config", "show"],
        ["config", "paths"],
        ["config", "validate"],
        ["status", "--json"],
        ["status"],
        ["--no-color", "status", "--json"],
        ["trust", "--json"],
    ],
)
def test_config_only_commands_load_the_config_models_but_nothing_that_connects(
    args: list[str], tmp_path: Path
) -> None:
    (tmp_path / ".orb").mkdir()
    (tmp_path / ".orb" / "mcp.json").write_text('{"mcpServers": {"p": {"command": "x", "enabled": false}}}')
    heavy = _imported(*args, cwd=tmp_path) & set(NOT_ON_FAST_PATHS)
    # pydantic-settings imports asyncio (and through it ssl) for its own CLI source.
    assert heavy <= {"pydantic", "pydantic_settings", "asyncio", "ssl"}
    assert not heavy & {"mcp", "mcp_types", "httpx2", "httpx", "anyio"}


@pytest.mark.parametrize(
    ("args", "typer"),
    [(["--version"], False), (["complete", "/mcp:st"], False), (["status"], False), (["--help"], True)],
)
def test_the_fastest_paths_build_no_typer_app_unless_they_print_its_help(
    args: list[str], typer: bool, tmp_path: Path
) -> None:
    assert ("typer" in _imported(*args, cwd=tmp_path)) is typer


def test_version_and_help() -> None:
    r = run_cli("--version")
    assert r.code == 0 and r.stdout.strip() == f"orbmcp {__version__}"
    r = run_cli("--help")
    assert r.code == 0
    for word in ("status", "start", "stop", "call", "config", "trust", "Exit codes"):
        assert word in r.stdout
    assert "conformance-client" not in r.stdout  # hidden


def test_config_show_masks_secrets_and_reports_provenance(cfg: Path) -> None:
    r = run_cli("--config", str(cfg), "config", "show", "--json")
    assert r.code == 0, r.stderr
    body = json.loads(r.stdout)
    assert set(body) >= {"servers", "warnings", "project"}
    local, remote = body["servers"]
    assert local["transport"] == "stdio" and local["source"] == "config" and local["file"] == str(cfg)
    assert local["env"] == {"API_TOKEN": "<redacted>"}
    assert (
        remote["transport"] == "streamable-http" and remote["headers"]["Authorization"] == "Bearer <redacted>"
    )
    assert "tok-1234567890" not in r.stdout and "sekrit-abcdef" not in r.stdout
    for key in ("name", "lifecycle", "enabled", "timeoutMs", "requestTimeoutMs", "maxRetries"):
        assert key in local


def test_validate_exits_3_on_an_invalid_entry_and_still_loads_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ok": {"command": "x"},
                    "bad": {"url": "https://x.test/mcp", "auth": {"provider": "pi"}},
                }
            }
        )
    )
    r = run_cli("--config", str(path), "config", "validate")
    assert r.code == 3
    assert "bad" in r.stdout and str(path) in r.stdout and "auth.provider" in r.stdout
    r = run_cli("--config", str(path), "config", "show", "--json")
    assert r.code == 0
    assert [s["name"] for s in json.loads(r.stdout)["servers"]] == ["ok"]
    warning = json.loads(r.stdout)["warnings"][0]
    assert warning["server"] == "bad" and warning["file"] == str(path)


def test_malformed_file_is_exit_3_naming_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{\n  "mcpServers": {\n    "a": {"command": "x",,}\n  }\n}\n')
    r = run_cli("--config", str(path), "config", "show")
    assert r.code == 3
    assert r.stderr.count("\n") <= 2 and f"{path}:3:" in r.stderr
    r = run_cli("--config", str(path), "status", "--json")
    assert r.code == 3 and r.stdout == ""
    assert json.loads(r.stderr)["error"]["code"] == "config"


def test_malformed_mcpservers_value_fails_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": ["not", "an", "object"]}')
    r = run_cli("--config", str(path), "config", "validate")
    assert r.code == 3 and "mcpServers" in r.stderr


def test_status_with_no_enabled_server_prints_empty_array(tmp_path: Path) -> None:
    r = run_cli("status", "--json", cwd=tmp_path)
    assert r.code == 0 and json.loads(r.stdout) == []


def test_trust_untrust_and_changed_definitions(tmp_path: Path, _isolated_agent_dir: Path) -> None:
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    mcp_json = project / ".orb" / "mcp.json"
    mcp_json.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "p": {
                        "command": "srv",
                        "args": ["--a b", "c"],
                        "env": {"KEY": "secret-value-1"},
                        "lifecycle": "lazy",
                    }
                }
            }
        )
    )

    r = run_cli("status", "--project", str(project))
    assert r.code == 0 and f"Project config: not loaded ({project / '.orb'})" in r.stdout
    # Listed as untrusted, never as ready or stopped.
    assert r.stdout.split("not loaded")[0].splitlines()[2].split()[:2] == ["p", "untrusted"]

    # Non-interactive without --yes: refuses, never auto-approves, and names a review that works.
    r = run_cli("trust", "--project", str(project))
    assert r.code == 2 and "`orbmcp trust --json`" in r.stderr
    review = run_cli("trust", "--project", str(project), "--json")
    assert review.code == 0, review.stderr
    body = review.json()
    assert body["trusted"] is False and body["review"]["servers"][0]["argv"] == ["srv", "--a b", "c"]
    assert body["review"]["servers"][0]["envNames"] == ["KEY"] and "secret-value-1" not in review.stdout
    assert (
        json.loads(run_cli("status", "--json", "--project", str(project)).stdout)[0]["state"] == "untrusted"
    )

    r = run_cli("trust", "--project", str(project), "--yes")
    assert r.code == 0, r.stderr
    assert "srv '--a b' c" in r.stdout and "env names: KEY" in r.stdout
    assert "secret-value-1" not in r.stdout
    store = _isolated_agent_dir / "trusted-projects.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600

    def states() -> list[tuple[str, str, str]]:
        rows = json.loads(run_cli("status", "--json", "--project", str(project)).stdout)
        return [(r["name"], r["source"], r["state"]) for r in rows]

    assert states() == [("p", "project", "stopped")]

    # A changed definition is not loaded again until approved again.
    mcp_json.write_text(
        json.dumps({"mcpServers": {"p": {"command": "srv", "args": ["--other"], "lifecycle": "lazy"}}})
    )
    assert states() == [("p", "project", "untrusted")]

    r = run_cli("trust", "--project", str(project), "--yes")
    assert r.code == 0 and "(new or changed)" in r.stdout
    assert states() == [("p", "project", "stopped")]

    r = run_cli("untrust", "--project", str(project), "--json")
    assert r.code == 0 and json.loads(r.stdout)["revoked"] is True
    assert states() == [("p", "project", "untrusted")]


def test_a_bug_is_one_line_exit_70_and_a_private_crash_log(
    _isolated_agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = CommandSpec(("boom",), "raises")
    bind_handlers({spec.path: lambda: _buggy_handler})
    code = run_in_shell(spec, {}, project=None, config_file=None, json_output=False, no_color=True)
    assert code == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: RuntimeError" in err and "Traceback" not in err
    assert "hunter2-secret-token" not in err
    log = Path(err.split("details: ", 1)[1].rstrip(")\n"))
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    text = log.read_text()
    assert "Traceback" in text and "_buggy_handler" in text and "hunter2-secret-token" not in text

    code = run_in_shell(spec, {}, project=None, config_file=None, json_output=True, no_color=True)
    assert code == 70
    captured = capsys.readouterr()
    assert captured.out == "" and json.loads(captured.err)["error"]["code"] == "internal"


def _buggy_handler(ctx: Any) -> None:
    raise RuntimeError("unexpected state; password=hunter2-secret-token")


def test_global_options_may_stand_after_the_command() -> None:
    from orbmcp.fastpath.argv import hoist_global_options

    assert hoist_global_options(["status", "x", "--project", "d", "--no-color", "--config=f"]) == [
        "--project",
        "d",
        "--no-color",
        "--config=f",
        "status",
        "x",
    ]
    assert hoist_global_options(["call", "s", "t", "--", "-p", "v"]) == ["call", "s", "t", "--", "-p", "v"]
    assert hoist_global_options(["status", "-p"]) == ["status", "-p"]  # a dangling option stays for Typer
