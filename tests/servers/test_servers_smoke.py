"""The test servers work with the bare SDK client, so later failures point at orbmcp, not at them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import Any

import anyio
import psutil  # type: ignore[import-untyped]
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp_types import ServerNotification, TextContent, ToolListChangedNotification

from tests.servers.launch import LivenessServer, http_server, run_http_server, server_cmd, stop_process
from tests.timeouts import HANG_GUARD_S


def stdio(name: str, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    command, *argv = server_cmd(name, *args)
    return StdioServerParameters(command=command, args=argv, env=env)


def text_of(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_everything_stdio_tools_progress_and_cancellation(tmp_path: Any) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    params = stdio("everything", env={"ORB_TEST_MARKER_DIR": str(tmp_path)})
    with anyio.fail_after(HANG_GUARD_S):
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"echo", "slow", "mixed", "sleep", "crash", "add_tool"} <= names
            assert text_of(await client.call_tool("echo", {"text": "hi\nthere"})) == "hi\nthere"

            await client.call_tool("slow", {"steps": 3, "delay": 0.01}, progress_callback=on_progress)
            assert updates == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

            kinds = [b.type for b in (await client.call_tool("mixed")).content]
            assert kinds == ["text", "image", "resource_link", "resource", "resource"]
            failed = await client.call_tool("fail", {"message": "boom 42"})
            assert failed.is_error and "boom 42" in text_of(failed)

            with anyio.move_on_after(0.5):
                await client.call_tool("sleep", {"seconds": 30})
            while not (tmp_path / "sleep-cancelled").exists():
                await anyio.sleep(0.02)
            assert (tmp_path / "sleep-started").exists()


async def test_everything_stdio_list_changed_on_legacy_session() -> None:
    seen = anyio.Event()

    async def on_message(message: ServerNotification | Exception) -> None:
        if isinstance(message, ToolListChangedNotification):
            seen.set()

    with anyio.fail_after(HANG_GUARD_S):
        async with Client(
            stdio("everything", "--list-changed"), mode="legacy", message_handler=on_message
        ) as c:
            tools_cap = c.server_capabilities.tools
            assert tools_cap is not None and tools_cap.list_changed
            await c.call_tool("add_tool", {"name": "dyn_one"})
            await seen.wait()
            assert "dyn_one" in {t.name for t in (await c.list_tools()).tools}


async def test_everything_http_on_legacy_and_auto() -> None:
    with anyio.fail_after(HANG_GUARD_S):
        async with http_server() as server:
            assert server.url == f"http://127.0.0.1:{server.port}/mcp"
            versions = []
            for mode in ("legacy", "auto"):
                async with Client(server.url, mode=mode) as client:
                    versions.append(client.protocol_version)
                    assert text_of(await client.call_tool("echo", {"text": mode})) == mode
            assert versions == ["2025-11-25", "2026-07-28"]


async def test_everything_sse() -> None:
    with anyio.fail_after(HANG_GUARD_S):
        async with run_http_server(["--sse", "0"]) as url:
            assert url.endswith("/sse")
            async with Client(sse_client(url), mode="legacy") as client:
                assert text_of(await client.call_tool("add", {"a": 2, "b": 3})) == "5"


async def test_paged_server_follows_cursors() -> None:
    pages: list[list[str]] = []
    with anyio.fail_after(HANG_GUARD_S):
        async with Client(stdio("paged", "--tools", "5", "--page-size", "2")) as client:
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                pages.append([t.name for t in page.tools])
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
            assert text_of(await client.call_tool("t0004")) == "t0004"
    assert pages == [["t0000", "t0001"], ["t0002", "t0003"], ["t0004"]]


async def test_raw_server_legacy_and_recorded_traffic(tmp_path: Any) -> None:
    record = tmp_path / "received.jsonl"
    with anyio.fail_after(HANG_GUARD_S):
        async with Client(stdio("raw", "--record", str(record)), mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            assert [t.name for t in (await client.list_tools()).tools] == ["echo", "never"]
            assert text_of(await client.call_tool("echo", {"text": "raw"})) == "raw"
    methods = [json.loads(line).get("method") for line in record.read_text().splitlines()]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert "tools/call" in methods


async def test_liveness_sees_whole_tree_die_on_group_kill() -> None:
    async with LivenessServer() as live:
        proc = await anyio.open_process(
            server_cmd("raw", "--spawn-grandchild", "--liveness", live.address),
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            await live.wait_registered(3, timeout=30)
            assert live.roles()["server"] == proc.pid
            assert set(live.roles()) == {"server", "child", "grandchild"}
            os.killpg(proc.pid, signal.SIGKILL)
            await live.wait_all_dead(timeout=30)
            assert live.alive_pids() == []
        finally:
            await stop_process(proc)


async def test_liveness_reports_survivor_when_leader_alone_dies() -> None:
    async with LivenessServer() as live:
        proc = await anyio.open_process(
            server_cmd("raw", "--spawn-child", "--liveness", live.address),
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            await live.wait_registered(2, timeout=30)
            proc.kill()
            await proc.wait()
            with pytest.raises(TimeoutError):
                await live.wait_all_dead(timeout=0.3)
            assert live.alive_pids() == [live.roles()["child"]]
        finally:
            await stop_process(proc)
    # LivenessServer's exit SIGKILLed the orphaned child (a zombie is dead too: init may be slow to reap).
    with anyio.fail_after(HANG_GUARD_S):
        while is_running(live.roles()["child"]):
            await anyio.sleep(0.02)


def is_running(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
