"""``orbmcp status|start|stop|reconnect`` as a user runs them, against real servers.

The commands run in-process (``tests.cli.run_cli``); only the runs that check which modules a
command imports are real processes.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.cli import CliResult, run_cli
from tests.core.live import cli_env, heavy_modules, raw_entry, run_probed, stdio_entry, write_config
from tests.servers.launch import http_server_process, server_cmd
from tests.servers.raw import FAKE_SECRET

MISSING_COMMAND = "/nonexistent/orb-missing-command"
HUNG_TIMEOUT_MS = 1200
SECRET_VALUE = FAKE_SECRET.rsplit(" ", 1)[1]


ROW_KEYS = ("name", "lifecycle", "state", "tools", "auth", "source")


def row(
    name: str,
    state: str,
    *,
    lifecycle: str = "eager",
    tools: int = 0,
    active: int | None = None,
    auth: str = "-",
) -> dict[str, Any]:
    return {
        "name": name,
        "lifecycle": lifecycle,
        "state": state,
        "tools": {"discovered": tools, "active": tools if active is None else active},
        "auth": auth,  # "-" for a stdio server: OAuth is for remote ones
        "source": "config",
    }


def base(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows' keys that say what a server is, without why (lastError, hint, warnings)."""
    return [{k: r[k] for k in ROW_KEYS} for r in rows]


def status_cli(config: Path | None, *args: str, cwd: Path) -> CliResult:
    """``orbmcp [--config F] ARGS`` in ``cwd``, as CI runs it (``NO_COLOR``, ``CI``)."""
    argv = ("--config", str(config), *args) if config is not None else args
    return run_cli(*argv, cwd=cwd, env=cli_env())


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    return write_config(
        tmp_path / "mcp.json",
        {
            "ok": raw_entry("--stderr-lines", "3"),
            "later": raw_entry(lifecycle="lazy"),
            "broken": {"command": MISSING_COMMAND},
            "off": raw_entry(enabled=False),
            "hung": stdio_entry("raw", "--hang", timeoutMs=HUNG_TIMEOUT_MS),
        },
    )


def test_status_reports_every_server_and_returns_when_the_hung_one_times_out(
    mixed: Path, tmp_path: Path
) -> None:
    # light.py is the benchmark's server (bench/bench_status.py): it must keep working too.
    python, *light_argv = server_cmd("light", "0")
    light = {"command": python, "args": ["-S", *light_argv]}
    only_ok = write_config(tmp_path / "ok.json", {"ok": raw_entry(), "light": light})
    as_json = status_cli(mixed, "status", "--json", cwd=tmp_path)
    plain = status_cli(mixed, "status", cwd=tmp_path)
    baseline = run_probed(only_ok, "status", "--json", cwd=tmp_path)
    assert as_json.code == 0, as_json.stderr
    rows = as_json.json()
    assert base(rows) == [
        row("ok", "ready", tools=2),
        row("later", "stopped", lifecycle="lazy"),
        row("broken", "failed"),
        row("off", "disabled", lifecycle="lazy (disabled)"),
        row("hung", "failed"),
    ]
    # Why each failed server failed, and the one hint, are in the JSON rows too.
    why = {r["name"]: (r["lastError"], r["hint"]) for r in rows}
    assert why["ok"] == why["later"] == (None, None)
    assert why["off"] == (None, 'disabled in its entry ("enabled": false); starting it connects it anyway')
    assert why["broken"][0] == f"server 'broken': command not found: {MISSING_COMMAND}"
    assert why["broken"][1] == "check the command and PATH"
    assert why["hung"][0].startswith(f"server 'hung' did not become ready within {HUNG_TIMEOUT_MS} ms")
    assert "raise timeoutMs" in why["hung"][1]
    assert as_json.stderr == ""
    assert base(baseline.json()) == [row("ok", "ready", tools=2), row("light", "ready", tools=1)]
    assert "mcp" in heavy_modules(baseline.stderr)  # connecting loads the SDK (see the zero-work test)
    assert baseline.stderr.splitlines()[:-1] == []  # nothing but the module probe's line

    assert plain.code == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0] == "MCP servers (5):"
    assert lines[1].split() == ["server", "state", "lifecycle", "tools", "source"]  # no remote server
    assert any(line.split()[:4] == ["ok", "ready", "eager", "2/2"] for line in lines)
    assert any(line.split()[:3] == ["later", "stopped", "lazy"] for line in lines)
    # Piped, the table is still aligned: every row's state starts in the header's column.
    column = lines[1].index("state")
    assert all(
        line[column - 2 : column] == "  " and line[column] != " " for line in lines[2:7] if line[2] != " "
    )
    assert f"      last error: server 'broken': command not found: {MISSING_COMMAND}" in lines
    # The hung server cost its own timeoutMs, not the 30 s default.
    assert any(
        line.startswith(f"      last error: server 'hung' did not become ready within {HUNG_TIMEOUT_MS} ms")
        for line in lines
    )
    assert lines[-1] == "(one-shot: servers started for this report were stopped again)"


def test_detail_view_shows_the_masked_stderr_tail_and_why_a_server_failed(
    mixed: Path, tmp_path: Path
) -> None:
    ok, ok_json, broken, hung, lazy = (
        status_cli(mixed, *args, cwd=tmp_path)
        for args in (
            ("status", "ok"),
            ("status", "ok", "--json"),
            ("status", "broken"),
            ("status", "hung"),
            ("status", "later"),
        )
    )
    for result in (ok, ok_json, broken, hung, lazy):
        assert result.code == 0, result.stderr
        assert SECRET_VALUE not in result.stdout + result.stderr

    lines = ok.stdout.splitlines()
    for expected in (
        "Server: ok",
        "State:  ready",
        "Retries: 0/5",
        "Transport: stdio",
        "Lifecycle: eager",
        f"Source: config ({mixed})",
        "Tools: 2/2 active",
    ):
        assert expected in lines
    assert not any(line.startswith(("Last error:", "Hint:", "Project config:")) for line in lines)
    recent = lines[lines.index("Recent output:") + 1 :]
    assert recent == [f"  raw stderr line {i}: Authorization: Bearer <redacted>" for i in range(3)]

    detail = ok_json.json()
    assert detail["state"] == "ready"
    assert detail["tools"] == {"discovered": 2, "active": 2}
    assert detail["toolNames"] == ["echo", "never"]
    assert detail["recentOutput"] == [
        f"raw stderr line {i}: Authorization: Bearer <redacted>" for i in range(3)
    ]
    assert detail["lastError"] is None
    assert detail["projectConfig"] is None

    lines = broken.stdout.splitlines()
    assert "State:  failed" in lines
    assert f"Last error: server 'broken': command not found: {MISSING_COMMAND}" in lines
    assert sum(line.startswith("Hint: ") for line in lines) == 1
    assert "(no stderr output from broken)" in lines

    lines = hung.stdout.splitlines()
    assert "State:  failed" in lines
    error = next(line for line in lines if line.startswith("Last error: "))
    assert f"did not become ready within {HUNG_TIMEOUT_MS} ms" in error
    hint = next(line for line in lines if line.startswith("Hint: "))
    assert "timeoutMs" in hint

    # A lazy server is only described, never started, by `status NAME`.
    assert "State:  stopped" in lazy.stdout.splitlines()
    assert "Lifecycle: lazy" in lazy.stdout.splitlines()


def test_no_enabled_server_means_no_mcp_work(tmp_path: Path) -> None:
    empty = write_config(tmp_path / "empty.json", {})
    disabled = write_config(
        tmp_path / "off.json",
        {"off": raw_entry(enabled=False), "gone": {"url": "http://127.0.0.1:9/mcp", "disabled": True}},
    )
    for config, expected in (
        (empty, []),
        (
            disabled,
            [
                row("off", "disabled", lifecycle="lazy (disabled)"),
                row("gone", "disabled", lifecycle="lazy (disabled)", auth="not configured"),
            ],
        ),
    ):
        result = run_probed(config, "status", "--json", cwd=tmp_path)
        assert result.code == 0, result.stderr
        assert base(result.json()) == expected
        assert heavy_modules(result.stderr) == []
    detail = run_probed(disabled, "status", "off", cwd=tmp_path)
    assert detail.code == 0
    assert "State:  disabled" in detail.stdout.splitlines()
    assert "Lifecycle: lazy (disabled)" in detail.stdout.splitlines()
    assert heavy_modules(detail.stderr) == []
    # The probe does see the SDK when a server connects: see the first test of this module.


def test_untrusted_project_config_is_named_and_never_run(tmp_path: Path) -> None:
    agent = Path(os.environ["ORB_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    write_config(agent / "mcp.json", {"global-one": raw_entry(lifecycle="lazy")})
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    spawned = tmp_path / "project-server-ran.jsonl"
    write_config(project / ".orb" / "mcp.json", {"from-project": raw_entry("--record", str(spawned))})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    by_option = status_cli(None, "--project", str(project), "status", "global-one", cwd=elsewhere)
    in_cwd = status_cli(None, "status", "global-one", cwd=project)
    report = status_cli(None, "status", cwd=project)
    notice = f"Project config: not loaded ({project / '.orb'})"
    for result in (by_option, in_cwd):
        assert result.code == 0, result.stderr
        lines = result.stdout.splitlines()
        assert notice in lines
        assert "Source: global" in " ".join(lines)
    assert report.code == 0
    # The project's server is named for what it is (untrusted, and how to fix that), never run.
    rows = [line.split() for line in report.stdout.splitlines()]
    # No server here can use OAuth (all stdio): no auth column.
    assert ["server", "state", "lifecycle", "tools", "source"] in rows
    assert ["from-project", "untrusted", "-", "-", "project"] in rows
    assert "      fix: review and approve the project's servers: `orbmcp trust`" in report.stdout.splitlines()
    assert any(line.startswith(notice) for line in report.stdout.splitlines())
    call = status_cli(None, "call", "from-project", "echo", "text=x", cwd=project)
    assert call.code == 3
    assert "server 'from-project' is not loaded" in call.stderr and "unknown" not in call.stderr
    assert not spawned.exists()


def test_start_stop_reconnect_one_shot(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "small.json",
        {"ok": raw_entry(), "later": raw_entry(lifecycle="lazy"), "broken": {"command": MISSING_COMMAND}},
    )
    start, start_broken, stop, reconnect_all = (
        status_cli(config, *args, cwd=tmp_path)
        for args in (("start", "later"), ("start", "broken"), ("stop", "ok"), ("reconnect", "--json"))
    )
    assert start.code == 0, start.stderr
    lines = start.stdout.splitlines()
    assert "State:  ready" in lines
    assert "Lifecycle: lazy" in lines
    assert "Tools: 2/2 active" in lines
    assert lines[-1].startswith("stopped again: this one-shot command exits now")

    assert start_broken.code == 4
    lines = start_broken.stdout.splitlines()
    assert "State:  failed" in lines
    assert [line for line in lines if MISSING_COMMAND in line] == [
        f"Command: {MISSING_COMMAND}",
        f"Last error: server 'broken': command not found: {MISSING_COMMAND}",
    ]

    assert stop.code == 0, stop.stderr
    assert "stopped 'ok' for this command only" in stop.stdout and "does not persist" in stop.stdout
    assert "ok  stopped" in stop.stdout

    # Every eager server is recreated (the lazy one is left alone); the broken one fails the command.
    assert reconnect_all.code == 4
    details = reconnect_all.json()
    assert base(details) == [row("ok", "ready", tools=2), row("broken", "failed")]
    # --json says why the command failed: each server's detail, its last error included.
    assert details[1]["lastError"] == f"server 'broken': command not found: {MISSING_COMMAND}"
    assert details[1]["errorCode"] == "connection" and details[1]["command"] == MISSING_COMMAND


def test_unknown_server_is_a_usage_error_listing_the_names(mixed: Path, tmp_path: Path) -> None:
    for verb in ("status", "start", "stop", "reconnect"):
        result = status_cli(mixed, verb, "nope-xyz", cwd=tmp_path)
        assert result.code == 2, verb
        assert result.stdout == ""
        assert "unknown server 'nope-xyz'" in result.stderr
        assert "known servers: broken, hung, later, off, ok" in result.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_status_over_streamable_http_and_sse(tmp_path: Path) -> None:
    with http_server_process() as http, http_server_process(["--sse", "0"]) as sse:
        config = write_config(
            tmp_path / "http.json",
            {
                "http": {"url": http.url},
                "sse": {"url": sse.url, "type": "sse"},
                "refused": {"url": f"http://127.0.0.1:{_closed_port()}/mcp"},
            },
        )
        status = status_cli(config, "status", cwd=tmp_path)
    assert status.code == 0, status.stderr
    lines = status.stdout.splitlines()
    rows = {
        line.split()[0]: line.split()
        for line in lines[2:]
        if line.startswith("  ") and not line.startswith("    ")
    }
    assert rows["http"][1] == rows["sse"][1] == "ready"
    assert rows["refused"][1] == "failed"
    counts = {name: int(row_[3].split("/")[0]) for name, row_ in rows.items()}
    assert counts["http"] == counts["sse"] >= 15
    errors = [line.strip() for line in lines if line.startswith("      last error: ")]
    assert len(errors) == 1
    assert errors[0].startswith("last error: cannot connect to server 'refused'")


@pytest.mark.parametrize(
    "argv",
    [("status",), ("status", "slow"), ("start", "slow"), ("tools",), ("tools", "slow")],
)
def test_status_tools_and_start_take_timeout_like_check(tmp_path: Path, argv: tuple[str, ...]) -> None:
    # The server never answers initialize and its own timeoutMs is a minute: --timeout 1s is what
    # bounds the attempt (the timeout is the subject here), as check's --timeout does.
    config = write_config(tmp_path / "mcp.json", {"slow": stdio_entry("raw", "--hang", timeoutMs=60_000)})
    result = run_cli("--config", str(config), *argv, "--timeout", "1s", "--json", env=cli_env(), timeout=50)
    assert "did not become ready within 1000 ms" in result.stdout + result.stderr, (
        result.stdout,
        result.stderr,
    )
    bad = run_cli("--config", str(config), *argv, "--timeout", "soon", env=cli_env())
    assert bad.code == 2 and "--timeout: expected a positive duration" in bad.stderr
