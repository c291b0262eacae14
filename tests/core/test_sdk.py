"""Loading the SDK: embedded, orbmcp leaves the process alone; the CLI tunes it; the dropped-tool
relay works either way.

Each case runs in a fresh interpreter: process-wide state (the collector, log levels, warning
filters) is the thing under test, and this test process has long had the SDK loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent(
    """
    import gc, json, logging, sys, warnings

    import anyio

    from orbmcp.core.wire import sdk
    from orbmcp.core.session.discovery import _dropped_tool_sink

    NAMES = ("mcp", "client", "httpx2", "httpcore")

    def state():
        return {
            "gc_enabled": gc.isenabled(),
            "frozen": gc.get_freeze_count() > 0,
            "switch": sys.getswitchinterval(),
            "filters": len(warnings.filters),
            "levels": {name: logging.getLogger(name).level for name in NAMES},
            "client_propagates": logging.getLogger("client").propagate,
        }

    if sys.argv[1] == "cli":
        from orbmcp.frontends.process_tuning import tune_for_cli

        tune_for_cli()
    else:
        logging.basicConfig(stream=sys.stderr)  # a host that routes logs somewhere
    before = state()
    anyio.run(sdk.ensure_sdk)
    after = state()
    heard = []
    _dropped_tool_sink.set(heard.append)
    sdk.session_logger().warning("dropping tool %r: invalid x-mcp-header (%s)", "t", "why")
    print(json.dumps({"before": before, "after": after, "heard": heard}))
    """
)


def probe(mode: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    report["stderr"] = result.stderr
    return report


RELAYED = ["tool 't' is not available: why (2026-07-28 clients must drop such tools)"]


def test_embedded_loading_leaves_the_process_alone() -> None:
    report = probe("embedded")
    assert report["after"] == report["before"]  # collector, switch interval, filters, log levels
    assert report["heard"] == RELAYED  # the relay needs no level of a logger orbmcp does not own
    assert "dropping tool" in report["stderr"]  # and the host's own handlers still get the record


def test_the_cli_tunes_the_import_and_keeps_sdk_logs_off_the_terminal() -> None:
    report = probe("cli")
    before, after = report["before"], report["after"]
    assert after["gc_enabled"] and after["frozen"] and not before["frozen"]
    assert after["switch"] == before["switch"]  # lowered for the import only
    assert after["levels"]["mcp"] == after["levels"]["httpx2"] == 50  # CRITICAL
    assert after["levels"]["client"] == 30 and not after["client_propagates"]  # only the relay hears it
    assert report["heard"] == RELAYED
    assert report["stderr"] == ""
