"""``orbmcp status|start|stop|reconnect`` as a user runs them: a subprocess against real servers.

Each CLI run pays an interpreter start and (when something connects) the SDK import, so several
independent runs share one test and run side by side.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.core.live import CliResult, heavy_modules, raw_entry, run_cli, stdio_entry, write_config
from tests.servers.launch import http_server, server_cmd
from tests.servers.raw import FAKE_SECRET

MISSING_COMMAND = "/nonexistent/orb-missing-command"
HUNG_TIMEOUT_MS = 1200
SECRET_VALUE = FAKE_SECRET.rsplit(" ", 1)[1]


def row(
    name: str, state: str, *, lifecycle: str = "eager", tools: int = 0, active: int | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "lifecycle": lifecycle,
        "state": state,
        "tools": {"discovered": tools, "active": tools if active is None else active},
        "auth": "not configured",
        "source": "config",
    }


Run = tuple[Path | None, tuple[str, ...], Path] | tuple[Path | None, tuple[str, ...], Path, bool]


async def run_all(*runs: Run) -> list[CliResult]:
    """Run several CLI invocations at once (config, args, cwd[, probe_modules]); results in order."""
    results: list[CliResult | None] = [None] * len(runs)

    async def one(i: int, run: Run) -> None:
        config, args, cwd = run[0], run[1], run[2]
        probe = bool(run[3]) if len(run) > 3 else False
        results[i] = await run_cli(config, *args, cwd=cwd, probe_modules=probe)

    async with anyio.create_task_group() as tg:
        for i, run in enumerate(runs):
            tg.start_soon(one, i, run)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


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


async def test_status_reports_every_server_and_returns_when_the_hung_one_times_out(
    mixed: Path, tmp_path: Path
) -> None:
    # light.py is the benchmark's server (bench/bench_status.py): it must keep working too.
    python, *light_argv = server_cmd("light", "0")
    light = {"command": python, "args": ["-S", *light_argv]}
    only_ok = write_config(tmp_path / "ok.json", {"ok": raw_entry(), "light": light})
    as_json, plain, baseline = await run_all(
        (mixed, ("status", "--json"), tmp_path, True),
        (mixed, ("status",), tmp_path, False),
        (only_ok, ("status", "--json"), tmp_path, False),
    )
    assert as_json.code == 0, as_json.stderr
    assert "mcp" in heavy_modules(as_json.stderr)  # connecting loads the SDK (see the zero-work test)
    assert as_json.json() == [
        row("ok", "ready", tools=2),
        row("later", "stopped", lifecycle="lazy"),
        row("broken", "failed"),
        row("off", "stopped", lifecycle="lazy"),
        row("hung", "failed"),
    ]
    assert as_json.stderr.splitlines()[:-1] == []  # nothing but the module probe's line
    assert baseline.json() == [row("ok", "ready", tools=2), row("light", "ready", tools=1)]
    # The hung server costs its own timeoutMs and nothing more: the run ends right after it.
    assert as_json.seconds >= HUNG_TIMEOUT_MS / 1000
    assert as_json.seconds < max(baseline.seconds, HUNG_TIMEOUT_MS / 1000) + 1.5, (
        as_json.seconds,
        baseline.seconds,
    )

    assert plain.code == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0] == "MCP servers (5):"
    assert any(line.split()[:2] == ["ok", "ready"] and "tools 2/2 active" in line for line in lines)
    assert any(line.split()[:3] == ["later", "stopped", "lazy"] for line in lines)
    assert f"    last error: server 'broken': command not found: {MISSING_COMMAND}" in lines
    assert any(
        line.startswith(f"    last error: server 'hung' did not become ready within {HUNG_TIMEOUT_MS} ms")
        for line in lines
    )
    assert lines[-1] == "(one-shot: servers started for this report were stopped again)"


async def test_detail_view_shows_the_masked_stderr_tail_and_why_a_server_failed(
    mixed: Path, tmp_path: Path
) -> None:
    ok, ok_json, broken, hung, lazy = await run_all(
        (mixed, ("status", "ok"), tmp_path),
        (mixed, ("status", "ok", "--json"), tmp_path),
        (mixed, ("status", "broken"), tmp_path),
        (mixed, ("status", "hung"), tmp_path),
        (mixed, ("status", "later"), tmp_path),
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


async def test_no_enabled_server_means_no_mcp_work(tmp_path: Path) -> None:
    empty = write_config(tmp_path / "empty.json", {})
    disabled = write_config(
        tmp_path / "off.json",
        {"off": raw_entry(enabled=False), "gone": {"url": "http://127.0.0.1:9/mcp", "disabled": True}},
    )
    for config, expected in (
        (empty, []),
        (disabled, [row("off", "stopped", lifecycle="lazy"), row("gone", "stopped", lifecycle="lazy")]),
    ):
        result = await run_cli(config, "status", "--json", cwd=tmp_path, probe_modules=True)
        assert result.code == 0, result.stderr
        assert result.json() == expected
        assert heavy_modules(result.stderr) == []
    detail = await run_cli(disabled, "status", "off", cwd=tmp_path, probe_modules=True)
    assert detail.code == 0
    assert "State:  stopped" in detail.stdout.splitlines()
    assert "Lifecycle: lazy (disabled)" in detail.stdout.splitlines()
    assert heavy_modules(detail.stderr) == []
    # The probe does see the SDK when a server connects: see the first test of this module.


async def test_untrusted_project_config_is_named_and_never_run(tmp_path: Path) -> None:
    agent = Path(os.environ["ORB_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    write_config(agent / "mcp.json", {"global-one": raw_entry(lifecycle="lazy")})
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    spawned = tmp_path / "project-server-ran.jsonl"
    write_config(project / ".orb" / "mcp.json", {"from-project": raw_entry("--record", str(spawned))})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    by_option, in_cwd, report = await run_all(
        (None, ("--project", str(project), "status", "global-one"), elsewhere),
        (None, ("status", "global-one"), project),
        (None, ("status",), project),
    )
    notice = f"Project config: not loaded ({project / '.orb'})"
    for result in (by_option, in_cwd):
        assert result.code == 0, result.stderr
        lines = result.stdout.splitlines()
        assert notice in lines
        assert "Source: global" in " ".join(lines)
    assert report.code == 0
    assert "from-project" not in report.stdout
    assert any(line.startswith(notice) for line in report.stdout.splitlines())
    assert not spawned.exists()


async def test_start_stop_reconnect_one_shot(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "small.json",
        {"ok": raw_entry(), "later": raw_entry(lifecycle="lazy"), "broken": {"command": MISSING_COMMAND}},
    )
    start, start_broken, stop, reconnect_all = await run_all(
        (config, ("start", "later"), tmp_path),
        (config, ("start", "broken"), tmp_path),
        (config, ("stop", "ok"), tmp_path),
        (config, ("reconnect", "--json"), tmp_path),
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
        f"Last error: server 'broken': command not found: {MISSING_COMMAND}"
    ]

    assert stop.code == 0, stop.stderr
    assert "stopped 'ok'; its tools are inactive" in stop.stdout
    assert "ok  stopped" in stop.stdout

    # Every eager server is recreated (the lazy one is left alone); the broken one fails the command.
    assert reconnect_all.code == 4
    assert reconnect_all.json() == [row("ok", "ready", tools=2), row("broken", "failed")]


async def test_unknown_server_is_a_usage_error_listing_the_names(mixed: Path, tmp_path: Path) -> None:
    verbs = ("status", "start", "stop", "reconnect")
    results = await run_all(*((mixed, (verb, "nope-xyz"), tmp_path) for verb in verbs))
    for verb, result in zip(verbs, results, strict=True):
        assert result.code == 2, verb
        assert result.stdout == ""
        assert "unknown server 'nope-xyz'" in result.stderr
        assert "known servers: broken, hung, later, off, ok" in result.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_status_over_streamable_http_and_sse(tmp_path: Path) -> None:
    async with http_server() as http, http_server(["--sse", "0"]) as sse:
        config = write_config(
            tmp_path / "http.json",
            {
                "http": {"url": http.url},
                "sse": {"url": sse.url, "type": "sse"},
                "refused": {"url": f"http://127.0.0.1:{_closed_port()}/mcp"},
            },
        )
        status = await run_cli(config, "status", cwd=tmp_path)
    assert status.code == 0, status.stderr
    lines = status.stdout.splitlines()
    rows = {
        line.split()[0]: line.split()
        for line in lines
        if line.startswith("  ") and not line.startswith("    ")
    }
    assert rows["http"][1] == rows["sse"][1] == "ready"
    assert rows["refused"][1] == "failed"
    counts = {name: int(row_[row_.index("tools") + 1].split("/")[0]) for name, row_ in rows.items()}
    assert counts["http"] == counts["sse"] >= 15
    errors = [line.strip() for line in lines if line.startswith("    last error: ")]
    assert len(errors) == 1
    assert errors[0].startswith("last error: cannot connect to server 'refused'")
