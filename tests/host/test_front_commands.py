"""The fronts' own commands answer in an embedding host too: their handlers are bound wherever
orbmcp is imported (``orbmcp/__init__.py``), not only by the program's entry."""

from __future__ import annotations

from pathlib import Path

import anyio

from orbmcp.host import McpExtension
from tests.core.live import write_config
from tests.host.example_host import ExampleHost
from tests.timeouts import HANG_GUARD_S


async def test_daemon_status_answers_in_a_host(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {})
    with anyio.fail_after(HANG_GUARD_S):
        async with McpExtension(ExampleHost(), config_file=config) as ext:
            reply = await ext.slash_reply("/mcp daemon status")
    assert reply.exit_code == 1
    assert "No session daemon is running" in reply.text
