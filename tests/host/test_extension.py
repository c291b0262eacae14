"""The embedding API, driven by the example host in ``example_host.py`` against real servers."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.config.loader import load_config
from orbmcp.config.trust import approve, describe_project
from orbmcp.core.tooling.results import ImageBlock, TextBlock
from orbmcp.errors import ConnectionFailed
from orbmcp.host import CONNECT_TOOL, STATUS_TOOL, McpExtension
from tests.core.live import wait_until
from tests.host import handed
from tests.host.example_host import ExampleHost
from tests.servers.everything import MARKER_ENV
from tests.servers.launch import server_cmd
from tests.timeouts import HANG_GUARD_S, generous_servers

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def write_config(path: Path, servers: dict[str, Any], **top: Any) -> Path:
    path.write_text(json.dumps({**top, "mcpServers": generous_servers(servers)}), encoding="utf-8")
    return path


def stdio(name: str, *args: str, **extra: Any) -> dict[str, Any]:
    command, *argv = server_cmd(name, *args)
    return {"command": command, "args": argv, **extra}


def raw_lazy() -> dict[str, Any]:
    return stdio("raw", "--answer-discover-error", "-32601", lifecycle="lazy")


def names_of(host: ExampleHost, server: str) -> set[str]:
    return {name for name, tool in host.tools.items() if tool.server == server}


# -- zero work -----------------------------------------------------------------------------------


def test_no_enabled_server_builds_nothing_and_imports_nothing_heavy(tmp_path: Path) -> None:
    import subprocess

    config = write_config(tmp_path / "off.json", {"x": {**stdio("everything"), "enabled": False}})
    proc = subprocess.run(
        [sys.executable, "-m", "tests.host.example_host", "--config", str(config)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report == {
        "active": False,
        "registered": [],
        "offered": [],
        "active_after_shutdown": [],
        "heavy_modules": [],
    }


async def test_mcp_turned_off_or_no_extensions_is_inert(tmp_path: Path) -> None:
    off = write_config(tmp_path / "off.json", {"e": stdio("everything")}, goExtensions={"mcp": False})
    enabled = write_config(tmp_path / "on.json", {"e": stdio("everything")})
    for ext_kwargs in ({"config_file": off}, {"config_file": enabled, "enabled": False}):
        host = ExampleHost()
        async with McpExtension(host, **ext_kwargs) as ext:
            assert not ext.active and ext._manager is None
        assert host.registrations == [] and host.activations == []


async def test_config_problems_are_notified_not_raised(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": []}', encoding="utf-8")
    host = ExampleHost()
    async with McpExtension(host, config_file=broken) as ext:
        assert not ext.active and ext.config_error is not None
    assert host.notifications and host.notifications[0][0] == "error"
    invalid = write_config(tmp_path / "invalid.json", {"bad": {"command": 42}})
    host = ExampleHost()
    async with McpExtension(host, config_file=invalid):
        pass
    assert any(level == "warning" and "bad" in msg for level, msg in host.notifications)


async def test_host_trust_answer_wins_over_orbmcp_store(tmp_path: Path, _isolated_agent_dir: Path) -> None:
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    (project / ".orb" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"p": raw_lazy()}}), encoding="utf-8"
    )
    # The host asked its user: its "yes" loads the project's servers without orbmcp's own store.
    vouching = ExampleHost(trust=True)
    async with McpExtension(vouching, project=project) as ext:
        assert ext.config is not None and "p" in ext.config.servers
        assert ext.config.servers["p"].source == "project"

    approve(_isolated_agent_dir, project, describe_project(project).digest)

    trusted_by_orbmcp = McpExtension(ExampleHost(trust=None), project=project)
    async with trusted_by_orbmcp as ext:
        assert ext.config is not None and "p" in ext.config.servers and ext.active
    host = ExampleHost(trust=False)
    async with McpExtension(host, project=project) as ext:
        assert host.trust_asked == [project.absolute()]
        assert ext.config is not None and "p" not in ext.config.servers
        assert not ext.config.project_loaded and not ext.active


# -- one long-lived extension --------------------------------------------------------------------


@dataclass
class Session:
    ext: McpExtension
    host: ExampleHost
    markers: Path


@pytest.fixture(scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    home = tmp_path_factory.mktemp("host")
    markers = home / "markers"
    markers.mkdir()
    config = write_config(
        home / "mcp.json",
        {"e": stdio("everything", env={MARKER_ENV: str(markers)}), "lz": raw_lazy()},
    )
    host = ExampleHost()
    # A module outlives the per-test agent dir, so this session names its own.
    loaded = load_config(config_file=config, global_dir=home / "agent")
    # Startup is bounded by each server's timeoutMs (a cancel scope cannot span the yield).
    async with handed(McpExtension(host, retries=False), loaded) as ext:
        yield Session(ext, host, markers)
    # Shutting down deactivated every tool the host had.
    assert host.active == set()


async def test_tools_are_registered_once_and_activated(session: Session) -> None:
    host = session.host
    e_tools = names_of(host, "e")
    assert len(e_tools) == 18 and e_tools <= host.active
    assert {STATUS_TOOL, CONNECT_TOOL} <= host.active
    assert len(host.registrations) == len(set(host.registrations))
    echo = next(t for t in host.tools.values() if t.tool_name == "echo")
    assert echo.name.startswith("mcp__e__echo_") and echo.server == "e"
    assert echo.input_schema["required"] == ["text"]
    add = next(t for t in host.tools.values() if t.tool_name == "add")
    assert add.description.endswith("[read-only, idempotent]")
    offered = {t["name"] for t in host.offered()}
    assert echo.name in offered and STATUS_TOOL in offered


async def test_calls_results_progress_and_errors(session: Session) -> None:
    host = session.host
    by_tool = {t.tool_name: t.name for t in host.tools.values() if t.server == "e"}
    seen: list[tuple[float, float | None, str | None]] = []

    def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    with anyio.fail_after(HANG_GUARD_S):
        echoed = await host.call(by_tool["echo"], {"text": "hi"})
        slow = await host.call(by_tool["slow"], {"steps": 2, "delay": 0.01}, progress=on_progress)
        failed = await host.call(by_tool["fail"], {"message": "nope"})
        mixed = await host.call(by_tool["mixed"])
    assert echoed.content == [TextBlock("hi")] and not echoed.is_error
    assert slow.text() == "done 2 steps" and seen == [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")]
    assert failed.is_error and "nope" in failed.text()
    assert isinstance(mixed.content[1], ImageBlock)


async def test_cancelling_a_host_call_cancels_it_on_the_server(session: Session) -> None:
    for f in session.markers.iterdir():
        f.unlink()
    sleep = next(t.name for t in session.host.tools.values() if t.tool_name == "sleep")
    echo = next(t.name for t in session.host.tools.values() if t.tool_name == "echo")
    with anyio.fail_after(HANG_GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.host.call, sleep, {"seconds": 30})
            await wait_until(lambda: (session.markers / "sleep-started").exists())
            tg.cancel_scope.cancel()
        await wait_until(lambda: (session.markers / "sleep-cancelled").exists())
        assert (await session.host.call(echo, {"text": "after"})).text() == "after"


async def test_mcp_status_and_mcp_connect(session: Session) -> None:
    host, ext = session.host, session.ext

    async def status() -> dict[str, dict[str, Any]]:
        rows = json.loads((await host.call(STATUS_TOOL)).text())
        return {row["name"]: row for row in rows}

    with anyio.fail_after(HANG_GUARD_S):
        before = await status()
        assert before["e"] == {
            "name": "e",
            "lifecycle": "eager",
            "state": "ready",
            "tools": {"discovered": 18, "active": 18},
            "auth": "-",
            "source": "config",
            "lastError": None,
            "hint": None,
            "warnings": [],
        }
        assert before["lz"]["state"] == "stopped" and before["lz"]["tools"] == {"discovered": 0, "active": 0}

        unknown = await host.call(CONNECT_TOOL, {"server": "lzz"})
        assert unknown.is_error and "unknown server 'lzz'" in unknown.text() and "'lz'" in unknown.text()

        connected = await host.call(CONNECT_TOOL, {"server": "lz"})
        assert not connected.is_error and connected.text() == "Server 'lz' is connected: 2 tools active."
        assert connected.structured == {
            "server": "lz",
            "state": "ready",
            "connected": True,
            "tools": {"discovered": 2, "active": 2},
            "allToolsActive": True,
        }
        lazy_tools = names_of(host, "lz")
        assert len(lazy_tools) == 2 and lazy_tools <= host.active

        # Another extension keeps one tool inactive: ready, but mcp_connect must not claim success.
        blocked = next(n for n in lazy_tools if "__never_" in n)
        host.blocked.add(blocked)
        try:
            honest = await host.call(CONNECT_TOOL, {"server": "lz"})
            assert not honest.is_error
            assert "only 1 of 2 discovered tools are active" in honest.text() and blocked in honest.text()
            assert isinstance(honest.structured, dict) and honest.structured["allToolsActive"] is False
            assert (await status())["lz"]["tools"] == {"discovered": 2, "active": 1}
        finally:
            host.blocked.clear()

        stopped = await ext.slash("/mcp:stop lz")
        assert "stopped" in stopped
        assert not (lazy_tools & host.active) and (await status())["lz"]["state"] == "stopped"
        assert host.registrations.count(blocked) == 1


# -- a server dying, and start()/shutdown() from different tasks ----------------------------------


async def test_crash_deactivates_then_reconnect_reactivates_without_reregistering(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"d": stdio("everything")})
    host = ExampleHost()
    ext = McpExtension(host, config_file=config)  # retries on: a session that stays up reconnects
    with anyio.fail_after(HANG_GUARD_S):
        await ext.start()
    try:
        tools = names_of(host, "d")
        assert tools and tools <= host.active
        # A tool the server adds at runtime is registered and activated; removing it deactivates it.
        by_tool = {t.tool_name: t.name for t in host.tools.values()}
        with anyio.fail_after(HANG_GUARD_S):
            await host.call(by_tool["add_tool"], {"name": "dyn"})
            await wait_until(
                lambda: any(t.tool_name == "dyn" and t.name in host.active for t in host.tools.values())
            )
            dyn = next(t for t in host.tools.values() if t.tool_name == "dyn")
            assert (await host.call(dyn.name)).text() == "dynamic dyn"
            await host.call(by_tool["remove_tool"], {"name": "dyn"})
            await wait_until(lambda: dyn.name not in host.active)
        crash = next(t.name for t in host.tools.values() if t.tool_name == "crash")
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(ConnectionFailed) as info:
            await host.call(crash)
        assert info.value.server == "d"
        assert not (tools & host.active)  # deactivated by the time the error arrived
        # The supervisor reconnects (first retry after 1 s): the same tools come back.
        await wait_until(lambda: tools <= host.active, timeout=20)
        assert sorted(host.registrations) == sorted({*tools, dyn.name, STATUS_TOOL, CONNECT_TOOL})
        assert dyn.name not in host.active  # still gone after the reconnect
    finally:
        async with anyio.create_task_group() as tg:  # shutdown from another task is fine
            tg.start_soon(ext.shutdown)
    assert host.active == set() and ext._manager is None
    echo = next(t for t in host.tools.values() if t.tool_name == "echo")
    with pytest.raises(ConnectionFailed, match="shut down"):
        await echo.call({"text": "late"})


async def test_a_dead_eager_server_neither_blocks_startup_nor_the_others(tmp_path: Path) -> None:
    dead = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}
    good = stdio("raw", "--answer-discover-error", "-32601")
    config = write_config(tmp_path / "mcp.json", {"dead": dead, "good": good})
    host = ExampleHost()
    started = anyio.current_time()
    with anyio.fail_after(HANG_GUARD_S):
        async with McpExtension(host, config_file=config) as ext:  # retries on, as in a real agent
            assert anyio.current_time() - started < 8  # not the ~50 s retry schedule
            assert ext._manager is not None and ext._manager.get("good").state == "ready"
            assert names_of(host, "good") <= host.active and not names_of(host, "dead")
            warnings = [m for level, m in host.notifications if level == "warning"]
            assert any("'dead' failed to start" in m and "retrying" in m for m in warnings)
    assert host.active == set()


def test_example_host_script_end_to_end(tmp_path: Path) -> None:
    import subprocess

    config = write_config(tmp_path / "mcp.json", {"e": stdio("everything")})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.host.example_host",
            "--config",
            str(config),
            "--call",
            "e/echo",
            '{"text": "from the example host"}',
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["active"] is True
    assert report["registered"][:2] == [STATUS_TOOL, CONNECT_TOOL] and len(report["registered"]) == 20
    assert report["mcp_status"][0]["state"] == "ready"
    assert report["call"]["content"] == [{"type": "text", "text": "from the example host"}]
    assert report["active_after_shutdown"] == []
