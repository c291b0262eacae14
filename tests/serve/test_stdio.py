"""orbmcp serve over stdio, as a real process an agent starts: the pipes and the process are the point.

An agent (the SDK's ``Client`` over the serve process's own pipes) lists and calls; closing its
stdin, or SIGTERM, stops every server serve started, process trees included (proven by liveness
sockets: EOF on each process's connection is its death). Lines that are not JSON-RPC are answered
with JSON-RPC errors and the session goes on.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from mcp import Client, MCPError

from orbmcp.core.wire.transports.stdio import stdio_pipe_transport
from tests.cli import run_cli
from tests.core.live import cli_env, raw_entry, write_config
from tests.serve import everything_entry, names
from tests.servers.launch import LivenessServer, server_cmd
from tests.timeouts import HANG_GUARD_S, LONG_GUARD_S

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX processes")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def serve_process(config: Path, *args: str) -> AsyncIterator[Process]:
    """``python -m orbmcp --config F serve ARGS`` with its pipes; killed if a test leaves it alive."""
    proc = await anyio.open_process(
        [sys.executable, "-m", "orbmcp", "--no-daemon", "--config", str(config), "serve", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env({"ORB_AGENT_DIR": os.environ["ORB_AGENT_DIR"]}),
    )
    try:
        yield proc
    finally:
        with anyio.CancelScope(shield=True):
            if proc.returncode is None and proc.stdin is not None:
                await proc.stdin.aclose()  # the agent leaves: serve stops its servers and exits
            with anyio.move_on_after(30):
                await proc.wait()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


def agent_over(proc: Process) -> Client:
    assert proc.stdin is not None and proc.stdout is not None
    return Client(stdio_pipe_transport(proc.stdin, proc.stdout, server="serve"), mode="legacy")


async def stderr_of(proc: Process) -> str:
    assert proc.stderr is not None
    chunks: list[bytes] = []
    with anyio.move_on_after(5):
        async for chunk in proc.stderr:
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


async def test_stdin_eof_stops_every_server_serve_started(tmp_path: Path) -> None:
    async with LivenessServer() as live:
        tree = raw_entry("--spawn-grandchild", "--liveness", live.address)
        config = write_config(tmp_path / "mcp.json", {"tree": tree, "everything": everything_entry()})
        async with serve_process(config) as proc:
            async with agent_over(proc) as client:
                listing = await client.list_tools()
                echo = next(n for n in names(listing) if n.startswith("mcp__everything__echo_"))
                assert any(n.startswith("mcp__tree__echo_") for n in names(listing))
                assert (await client.call_tool(echo, {"text": "over stdio"})).content[0].text == "over stdio"
                await live.wait_registered(3, 30)
            # The agent left: its side of stdin is closed.
            with anyio.fail_after(HANG_GUARD_S):
                code = await proc.wait()
            assert code == 0, await stderr_of(proc)
            await live.wait_all_dead(10)


async def test_progress_and_cancellation_cross_the_stdio_wire(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    entry = everything_entry(env={"ORB_TEST_MARKER_DIR": str(markers)})
    config = write_config(tmp_path / "mcp.json", {"everything": entry})
    async with serve_process(config) as proc, agent_over(proc) as client:
        listing = names(await client.list_tools())
        slow = next(n for n in listing if n.startswith("mcp__everything__slow_"))
        sleep = next(n for n in listing if n.startswith("mcp__everything__sleep_"))
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append((value, total, message))

        done = await client.call_tool(slow, {"steps": 3, "delay": 0}, progress_callback=progress)
        assert done.content[0].text == "done 3 steps"
        assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, sleep, {"seconds": 600})
            with anyio.fail_after(HANG_GUARD_S):
                while not (markers / "sleep-started").exists():
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
        with anyio.fail_after(HANG_GUARD_S):
            while not (markers / "sleep-cancelled").exists():
                await anyio.sleep(0.02)
        with pytest.raises(MCPError, match="Unknown tool"):  # an unknown name takes the checked path
            await client.call_tool("mcp__everything__nope_00000000", {})
        assert (await client.call_tool(slow, {"steps": 1, "delay": 0})).content[0].text == "done 1 steps"


async def test_sigterm_stops_every_server_and_exits_interrupted(tmp_path: Path) -> None:
    async with LivenessServer() as live:
        config = write_config(
            tmp_path / "mcp.json", {"tree": raw_entry("--spawn-child", "--liveness", live.address)}
        )
        async with serve_process(config) as proc, agent_over(proc) as client:
            await client.list_tools()
            await live.wait_registered(2, 30)
            proc.send_signal(signal.SIGTERM)
            with anyio.fail_after(HANG_GUARD_S):
                code = await proc.wait()
            assert code == 130
            assert "interrupted by SIGTERM" in await stderr_of(proc)
            await live.wait_all_dead(10)


async def test_lines_that_are_not_json_rpc_get_errors_and_the_session_goes_on(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {})
    async with serve_process(config) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        initialize = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        lines = [
            b"not json\n",
            b'{"jsonrpc": "2.0", "id": 7, "method": 5}\n',
            json.dumps(initialize).encode() + b"\n",
        ]
        await proc.stdin.send(b"".join(lines))
        answers: list[dict[str, object]] = []
        buffer = b""
        with anyio.fail_after(LONG_GUARD_S):
            while len(answers) < 3:
                buffer += await proc.stdout.receive()
                *done, buffer = buffer.split(b"\n")
                answers += [json.loads(line) for line in done if line.strip()]
        assert answers[0] == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error"},
        }
        assert answers[1] == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32600, "message": "Invalid Request"},
        }
        assert answers[2]["id"] == 9 and answers[2]["result"]["serverInfo"]["name"] == "orbmcp"
        await proc.stdin.aclose()
        with anyio.fail_after(HANG_GUARD_S):
            assert await proc.wait() == 0


def test_an_unknown_served_server_is_a_usage_error(tmp_path: Path) -> None:
    # Refused before anything starts: the command line is the subject, run in-process.
    config = write_config(tmp_path / "mcp.json", {"everything": everything_entry()})
    done = run_cli("--no-daemon", "--config", str(config), "serve", "--server", "nope")
    assert done.code == 2
    assert "unknown server 'nope'" in done.stderr and "known servers: everything" in done.stderr


async def test_serve_one_server_given_on_the_line(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {})
    command = shlex.join(server_cmd("everything"))
    async with serve_process(config, "--server-stdio", command, "--names", "raw") as proc:
        async with agent_over(proc) as client:
            listing = await client.list_tools()
            assert "echo" in names(listing)
            assert (await client.call_tool("echo", {"text": "ad hoc"})).content[0].text == "ad hoc"


def test_serve_takes_either_configured_servers_or_one_given_on_the_line() -> None:
    command = shlex.join(server_cmd("everything"))
    both = run_cli("--no-daemon", "serve", "--server-stdio", command, "--server", "everything")
    assert both.code == 2 and "not both" in both.stderr
    stray = run_cli("--no-daemon", "serve", "--env", "A=1")
    assert stray.code == 2 and "--env, --header and --name describe a server" in stray.stderr
