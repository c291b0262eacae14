"""Shared helpers for the end-to-end core tests: configs of real servers, in-process sessions, and
the CLI as a process for the tests of what it imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from orbmcp.config.loader import load_config
from orbmcp.config.model import ResolvedConfig
from orbmcp.core.session.manager import Manager
from tests.cli import CliResult
from tests.servers.launch import server_cmd
from tests.timeouts import generous_servers, scaled

# Short stop graces for in-process managers: the SDK's 2 s + 2 s would dominate every test.
FAST_GRACE_S = 0.3


def stdio_entry(server: str, *args: str, **extra: Any) -> dict[str, Any]:
    """A config entry running ``tests/servers/<server>.py`` with the test interpreter."""
    command, *argv = server_cmd(server, *args)
    return {"command": command, "args": argv, **extra}


def raw_entry(*args: str, **extra: Any) -> dict[str, Any]:
    """raw.py answering ``server/discover`` with -32601 at once: no probe wait on first contact."""
    return stdio_entry("raw", "--answer-discover-error", "-32601", *args, **extra)


def write_config(path: Path, servers: Mapping[str, Any], **top: Any) -> Path:
    """The config file of ``servers``, each with the suite's generous connect timeout unless it
    states its own (``tests/timeouts.py``)."""
    path.write_text(json.dumps({"mcpServers": generous_servers(servers), **top}), encoding="utf-8")
    return path


def load(path: Path) -> ResolvedConfig:
    return load_config(config_file=path, cwd=path.parent)


@asynccontextmanager
async def managed(config: Path, *, retries: bool = False) -> AsyncIterator[Manager]:
    """An in-process session over ``config`` with short stop graces."""
    manager = Manager(load(config), retries=retries)
    manager.runtime.stdin_grace_s = FAST_GRACE_S
    manager.runtime.term_grace_s = FAST_GRACE_S
    async with manager:
        yield manager


async def wait_until(predicate: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    """Poll ``predicate`` until it holds; fail the test after ``timeout`` seconds on the suite's
    timeout scale."""
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await anyio.sleep(0.02)


def enable_debug_log(directory: Path) -> Path:
    """Turn the debug log on for this test (the autouse fixture resets it), writing under
    ``directory``; returns the log file, where the supervisors record what they did."""
    from orbmcp import log

    log.configure(directory, enabled=True)
    return directory / log.LOG_DIR_NAME / log.LOG_FILE_NAME


def logged(log_file: Path, event: str, server: str | None = None) -> list[dict[str, Any]]:
    """The debug-log records of ``event`` (for ``server``), oldest first."""
    if not log_file.exists():
        return []
    records = [json.loads(line) for line in log_file.read_text(encoding="utf-8").splitlines()]
    return [r for r in records if r.get("event") == event and (server is None or r.get("server") == server)]


def recorded_methods(path: Path) -> list[str]:
    """Methods of the messages raw.py ``--record`` saw, in order."""
    if not path.exists():
        return []
    out: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        method = json.loads(line).get("method")
        if isinstance(method, str):
            out.append(method)
    return out


def isolated_env(stated: Mapping[str, str]) -> dict[str, str]:
    """The process environment without orbmcp's own variables (``ORBMCP_*``, ``ORB_*``) or
    Python's (``PYTHON*``), plus ``stated``: a child process sees only what the test states."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORBMCP_", "ORB_", "PYTHON"))}
    env.update(stated)
    return env


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"NO_COLOR": "1", "CI": "1"})
    env.pop("ORBMCP_CONFIG", None)
    env.update(extra or {})
    return env


# Runs the CLI like ``python -m orbmcp`` and, at exit, names on stderr the heavy modules it loaded.
MODULE_PROBE = """
import atexit, json, sys
HEAVY = ("mcp", "mcp_types", "httpx2")  # pydantic-settings carries the config: allowed
def report():
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    sys.stderr.write("LOADED-HEAVY " + json.dumps(loaded) + "\\n")
atexit.register(report)
from orbmcp.fastpath.entry import main
main(sys.argv[1:])
"""


def heavy_modules(stderr: str) -> list[str]:
    """What ``MODULE_PROBE`` reported; fails if the probe did not run."""
    for line in stderr.splitlines():
        if line.startswith("LOADED-HEAVY "):
            loaded: list[str] = json.loads(line.split(" ", 1)[1])
            return loaded
    raise AssertionError(f"the module probe did not report: {stderr!r}")


def cli_argv(config: Path | None, *args: str, probe_modules: bool = False) -> list[str]:
    argv = [sys.executable, "-c", MODULE_PROBE] if probe_modules else [sys.executable, "-m", "orbmcp"]
    if config is not None:
        argv += ["--config", str(config)]
    return [*argv, *args]


def run_probed(config: Path | None, *args: str, cwd: Path) -> CliResult:
    """``python -m orbmcp [--config F] ARGS`` as a real process that names the heavy modules it
    loaded (``heavy_modules(result.stderr)``): which modules a run imports is a process's business.
    Every other CLI test runs the command in-process (``tests.cli.run_cli``)."""
    proc = subprocess.run(
        cli_argv(config, *args, probe_modules=True),
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)
