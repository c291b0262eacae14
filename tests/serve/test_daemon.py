"""orbmcp serve with a session daemon running: the agent shares the shell's live session.

Real daemon, real serve processes, real servers. Over stdio the serve process is a byte pipe into
the daemon (it spawns no server itself); over HTTP the daemon listens for as long as serve stays.
What the shell does (stop, start) reaches the agent as list changes; serve ending leaves the
daemon's servers running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import psutil
import pytest
from anyio.abc import Process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from orbmcp.core.wire.transports.stdio import stdio_pipe_transport
from tests.daemon import Scoped, daemon, scope_in
from tests.serve import OWN_TOOL_NAMES, Notices, everything_entry, names
from tests.timeouts import HANG_GUARD_S

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def scoped(tmp_path: Path) -> Scoped:
    return scope_in(tmp_path)


@asynccontextmanager
async def serve(scoped: Scoped, *args: str) -> AsyncIterator[Process]:
    proc = await anyio.open_process(
        scoped.argv("serve", *args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=scoped.env(),
        cwd=scoped.project,
    )
    try:
        yield proc
    finally:
        with anyio.CancelScope(shield=True):
            if proc.returncode is None and proc.stdin is not None:
                await proc.stdin.aclose()
            with anyio.move_on_after(30):
                await proc.wait()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def shell(scoped: Scoped, *args: str) -> str:
    run = await anyio.to_thread.run_sync(lambda: scoped.run(*args))
    assert run.code == 0, run.err
    return run.out


async def test_the_agent_and_the_shell_see_one_session(scoped: Scoped) -> None:
    scoped.write({"everything": everything_entry()})
    notices = Notices()
    with daemon(scoped):
        async with serve(scoped) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            transport = stdio_pipe_transport(proc.stdin, proc.stdout, server="serve")
            async with Client(transport, mode="legacy", message_handler=notices) as client:
                assert any(n.startswith("mcp__everything__echo_") for n in names(await client.list_tools()))
                assert psutil.Process(proc.pid).children() == []  # the daemon runs the servers

                await shell(scoped, "stop", "everything")
                await notices.wait_count("notifications/tools/list_changed", 1)
                assert names(await client.list_tools()) == OWN_TOOL_NAMES

                await shell(scoped, "start", "everything")
                await notices.wait_count("notifications/tools/list_changed", 2)
                assert len(names(await client.list_tools())) > len(OWN_TOOL_NAMES)

                status = await client.call_tool("mcp", {})
                assert "(daemon: pid" in status.content[0].text
            with anyio.fail_after(HANG_GUARD_S):
                assert await proc.wait() == 0
        rows = json.loads(await shell(scoped, "status", "--json"))
        assert [(row["name"], row["state"]) for row in rows] == [
            ("everything", "ready")
        ]  # serve left; it runs


async def test_the_daemon_listens_over_http_while_serve_stays(scoped: Scoped) -> None:
    scoped.write({"everything": everything_entry()})
    with daemon(scoped):
        token = (await shell(scoped, "serve", "--print-token")).strip()
        async with serve(scoped, "--http", "127.0.0.1:0") as proc:
            assert proc.stderr is not None
            banner = b""
            with anyio.fail_after(HANG_GUARD_S):
                while b"\n" not in banner:
                    banner += await proc.stderr.receive()
            text = banner.decode()
            assert "from the session daemon" in text, text
            url = text.split("serving MCP at ", 1)[1].split(" ", 1)[0]
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                assert any(n.startswith("mcp__everything__") for n in names(await client.list_tools()))
            proc.send_signal(signal.SIGTERM)
            with anyio.fail_after(HANG_GUARD_S):
                assert await proc.wait() == 130
            async with httpx2.AsyncClient(headers=headers) as http:
                with pytest.raises(httpx2.ConnectError):  # the daemon stopped listening
                    await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
