"""Roots never widen or replace a server's own sandbox: the real npm ``server-filesystem``.

server-filesystem replaces the directories it was started with by the client's roots whenever the
client offers roots (modelcontextprotocol/servers #3602, #3929). orbmcp offers roots only where
they are configured, so a server started with one directory keeps exactly that directory from
whatever directory orbmcp runs in; configured roots are what it is told. Installed into the npm
cache like server-everything (``tests/servers/npm.py``); skipped, saying why, without npm.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from orbmcp.commands.views import server_detail
from orbmcp.core.tooling.calls import call_tool
from orbmcp.core.tooling.results import TextBlock, ToolResult
from orbmcp.render.plain import render_plain
from tests.cli import run_cli
from tests.core.live import load, managed, wait_until
from tests.servers.npm import SERVER_FILESYSTEM, npm_server
from tests.timeouts import LONG_GUARD_S

pytestmark = pytest.mark.slow


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _world(tmp_path: Path, sandbox: Path, **entry: object) -> dict[str, str]:
    server, why = npm_server(SERVER_FILESYSTEM, str(sandbox))
    if server is None:
        pytest.skip(f"server-filesystem from npm is not available: {why}")
    agent = tmp_path / "agent"
    agent.mkdir()
    config = {"mcpServers": {"fs": server.entry(**entry)}}
    (agent / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ORB_AGENT_DIR": str(agent), "CI": "true"}


def _allowed(env: dict[str, str], cwd: Path | str) -> list[str]:
    done = run_cli("--no-daemon", "call", "fs", "list_allowed_directories", "--json", env=env, cwd=cwd)
    assert done.code == 0, done.stderr
    text = "\n".join(block.get("text", "") for block in done.json()["content"])
    return [line for line in text.splitlines()[1:] if line.strip()]


def test_a_server_started_with_one_directory_keeps_exactly_it_from_anywhere(tmp_path: Path) -> None:
    sandbox = (tmp_path / "sandbox").resolve()
    other = tmp_path / "elsewhere"
    sandbox.mkdir()
    other.mkdir()
    env = _world(tmp_path, sandbox)
    for cwd in ("/", env["HOME"], other):
        assert _allowed(env, cwd) == [str(sandbox)], f"from {cwd}"

    status = run_cli("--no-daemon", "status", "fs", "--json", env=env, cwd="/")
    body = status.json()
    assert body["roots"] is None
    assert "roots" not in body["capabilities"]["advertised"]
    shown = run_cli("--no-daemon", "status", "fs", env=env, cwd="/").stdout
    assert "Roots: none offered" in shown


async def test_configured_roots_are_what_it_is_told_and_status_shows_them(tmp_path: Path) -> None:
    """Roots configured under a live connection made without them: the server is connected anew
    (only a new connection can offer the capability), and then works in the configured root."""
    sandbox = (tmp_path / "sandbox").resolve()
    given = (tmp_path / "given").resolve()
    sandbox.mkdir()
    given.mkdir()
    server, why = npm_server(SERVER_FILESYSTEM, str(sandbox))
    if server is None:
        pytest.skip(f"server-filesystem from npm is not available: {why}")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fs": server.entry()}}), encoding="utf-8")

    with anyio.fail_after(LONG_GUARD_S):
        async with managed(config) as manager:
            first = await manager.ready("fs")
            assert _listed(await call_tool(first, "list_allowed_directories", {})) == [str(sandbox)]
            assert server_detail(first.cfg, manager.config, first).roots is None

            config.write_text(
                json.dumps({"settings": {"roots": [str(given)]}, "mcpServers": {"fs": server.entry()}}),
                encoding="utf-8",
            )
            await manager.apply_config(load(config))
            sup = await manager.ready("fs")
            # The server asks for the roots after its handshake, on its own time: it says when done.
            await wait_until(
                lambda: any(
                    "Updated allowed directories from MCP roots" in line for line in sup.stderr_tail()
                ),
                timeout=30,
                what="server-filesystem to take the roots",
            )
            assert _listed(await call_tool(sup, "list_allowed_directories", {})) == [str(given)]
            detail = server_detail(sup.cfg, manager.config, sup)
            assert detail.roots == (given.as_uri(),)
            assert detail.to_json()["capabilities"]["advertised"]["roots"] == {"listChanged": True}
            assert f"Roots: {given.as_uri()}" in render_plain(detail)


def _listed(result: ToolResult) -> list[str]:
    text = "\n".join(b.text for b in result.content if isinstance(b, TextBlock))
    return [line for line in text.splitlines()[1:] if line.strip()]
