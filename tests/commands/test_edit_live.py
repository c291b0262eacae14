"""enable/disable in sessions that stay up: the file changes and the live server starts or stops.

The REPL and an agent host run the handler in their own session; the session daemon's case is in
tests/daemon/test_session.py. A disabled server's process tree is gone (its liveness sockets close).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.config.jsonc import parse_jsonc
from orbmcp.frontends.shell import run_shell
from orbmcp.host import McpExtension
from orbmcp.session.terminal import TerminalUI
from tests.core.live import raw_entry
from tests.frontends import write_config
from tests.host.example_host import ExampleHost
from tests.servers.launch import LivenessServer
from tests.timeouts import LONG_GUARD_S


def test_in_the_repl_disable_stops_the_server_and_enable_starts_it(tmp_path: Path) -> None:
    # A generous connect timeout: on a loaded machine a first attempt that times out would leave
    # "ev" retrying (starting) when the script's first line runs.
    # raw.py: stdlib only, no SDK import for each of the three starts.
    ev = raw_entry(timeoutMs=120_000)
    config = write_config(tmp_path, {"ev": ev, "other": raw_entry(lifecycle="lazy")})
    out: list[str] = []
    ctx = CommandContext(ui=TerminalUI(interactive=False), config_file=config)
    lines = [
        "status ev --json",
        "/mcp:disable ev --json",
        "status ev --json",
        "enable ev --json",
        "status --json",
        "enable other",
    ]
    assert run_shell(ctx, lines=lines, write=out.append, wait_eager=True) == 0, out
    printed = "".join(out).splitlines()
    before, disabled, after_disable, enabled, overview = (json.loads(line) for line in printed[:5])
    assert before["state"] == "ready"
    assert (disabled["action"], disabled["state"]) == ("disabled", "stopped")
    assert (after_disable["state"], after_disable["lifecycle"]) == ("disabled", "lazy (disabled)")
    assert (enabled["action"], enabled["state"]) == ("enabled", "ready")
    assert {row["name"]: row["state"] for row in overview} == {"ev": "ready", "other": "stopped"}
    # enabling a server that is on in its file (lazy, not connected) starts it in the session
    assert printed[5] == f"Enabled 'other' in {config} (config); in this session it is ready"
    assert parse_jsonc(config.read_text())["mcpServers"]["ev"] == {**ev, "enabled": True}  # type: ignore[index]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_agent_host_switches_the_live_server(tmp_path: Path) -> None:
    async with LivenessServer() as live:
        entry = raw_entry("--liveness", live.address, "--spawn-child")
        config = write_config(tmp_path, {"r": entry})
        host = ExampleHost()
        ext = McpExtension(host, config_file=config)
        with anyio.fail_after(LONG_GUARD_S):
            await ext.start()
            await live.wait_registered(2, timeout=30)  # the server and its child
        try:
            assert any(host.tools[name].server == "r" for name in host.active)
            reply = await ext.slash("/mcp:disable r")
            assert "Disabled 'r'" in reply and "in this session it is stopped" in reply
            await live.wait_all_dead(timeout=30)  # the whole process tree is gone
            assert not any(host.tools[name].server == "r" for name in host.active)
            rows = {row["name"]: row for row in ext.status_rows()}
            assert (rows["r"]["state"], rows["r"]["lifecycle"]) == ("disabled", "lazy (disabled)")
            assert ext.config is not None and ext.config.servers["r"].enabled is False
            reply = await ext.slash("/mcp:enable r")
            assert "in this session it is ready" in reply
            await live.wait_registered(4, timeout=30)  # started again
            assert {row["name"]: row["state"] for row in ext.status_rows()} == {"r": "ready"}
        finally:
            with anyio.fail_after(LONG_GUARD_S):
                await ext.shutdown()


def test_in_the_repl_an_added_server_can_be_used_at_once_and_a_removed_one_is_gone(tmp_path: Path) -> None:
    config = write_config(tmp_path, {})
    out: list[str] = []
    ctx = CommandContext(ui=TerminalUI(interactive=False), config_file=config)
    entry = raw_entry()
    lines = [
        f"add ev --lazy -- {entry['command']} {' '.join(entry['args'])}",
        "call ev echo text=3",
        "remove ev --json",
        "status --json",
    ]
    assert run_shell(ctx, lines=lines, write=out.append) == 0, out
    printed = "".join(out).splitlines()
    assert printed[0] == f"Added 'ev' to {config} (config)"
    assert "3" in printed[2:]
    removed = json.loads(printed[-2])
    assert removed["action"] == "removed"
    assert json.loads(printed[-1]) == []


async def test_a_host_is_asked_about_a_project_that_only_another_client_configures(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".cursor").mkdir(parents=True)
    (project / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"theirs": {**raw_entry(), "lifecycle": "lazy"}}}), encoding="utf-8"
    )
    vouching = ExampleHost(trust=True)
    async with McpExtension(vouching, project=project) as ext:
        assert vouching.trust_asked == [project.absolute()]
        assert ext.config is not None and ext.config.servers["theirs"].source == "import:cursor"
    refusing = ExampleHost(trust=False)
    async with McpExtension(refusing, project=project) as ext:
        assert ext.config is not None and "theirs" not in ext.config.servers
