"""serve's fast lane over a real stdio wire: an agent writing JSON lines into OS pipes, a gateway in
this process, real servers behind it. Every call test runs on both call paths (``call_path``): a
stdio server's tools are relayed raw where the relay is on (proven by its connection's
``RawChannel.relayed`` and the paths' counters); an HTTP server's take the SDK's client session.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from orbmcp.core.processes.pipes import PipeReceiveStream, PipeSendStream
from orbmcp.core.wire.raw_channel import RawChannel
from orbmcp.serve import lane
from orbmcp.serve.gateway import Gateway, serve_stream
from orbmcp.serve.lane import FastLane
from orbmcp.serve.options import ServeOptions
from orbmcp.serve.session import own_gateway
from orbmcp.serve.wire import message_streams
from tests.core.live import FAST_GRACE_S, load, stdio_entry, wait_until, write_config
from tests.core.paths import PathProbe
from tests.servers.launch import run_http_server
from tests.timeouts import HANG_GUARD_S

pytestmark = pytest.mark.anyio
BOUND_S = HANG_GUARD_S


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class LineAgent:
    """An agent speaking newline-delimited JSON-RPC on the wire, line by line."""

    def __init__(self, send: PipeSendStream, receive: PipeReceiveStream) -> None:
        self._send, self._receive = send, receive
        self._buffer = b""
        self.tools: list[str] = []

    async def send(self, message: dict[str, Any]) -> None:
        await self._send.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def receive_line(self) -> bytes:
        while b"\n" not in self._buffer:
            self._buffer += await self._receive.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    async def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await self.receive_line())
        return message

    async def answer_to(self, request_id: Any) -> dict[str, Any]:
        """The answer to ``request_id``; notifications before it are dropped."""
        while (message := await self.receive()).get("id") != request_id or "method" in message:
            pass
        return message

    async def start(self, capabilities: dict[str, Any] | None = None) -> None:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities or {},
            "clientInfo": {"name": "line-agent", "version": "1"},
        }
        await self.send({"id": "init", "method": "initialize", "params": params})
        await self.answer_to("init")
        await self.send({"method": "notifications/initialized"})
        await self.send({"id": "list", "method": "tools/list"})
        self.tools = [t["name"] for t in (await self.answer_to("list"))["result"]["tools"]]

    def tool(self, prefix: str) -> str:
        return next(name for name in self.tools if name.startswith(prefix))

    async def call(self, request_id: Any, tool: str, arguments: dict[str, Any], **meta: Any) -> None:
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        await self.send({"id": request_id, "method": "tools/call", "params": params})


@asynccontextmanager
async def lane_wire(
    config: Path, capabilities: dict[str, Any] | None = None
) -> AsyncIterator[tuple[Gateway, LineAgent]]:
    to_serve, from_agent = os.pipe()
    to_agent, from_serve = os.pipe()
    wire_in, wire_out = PipeReceiveStream(to_serve), PipeSendStream(from_serve)
    agent = LineAgent(PipeSendStream(from_agent), PipeReceiveStream(to_agent))
    try:
        async with own_gateway(load(config), ServeOptions(), lambda message, level: None) as gateway:
            gateway.manager.runtime.stdin_grace_s = FAST_GRACE_S
            gateway.manager.runtime.term_grace_s = FAST_GRACE_S
            async with anyio.create_task_group() as tg:

                async def serve() -> None:
                    async with message_streams(wire_in, wire_out, lane=FastLane(gateway)) as (read, write):
                        await serve_stream(gateway, read, write)

                tg.start_soon(serve)
                await agent.start(capabilities)
                yield gateway, agent
                tg.cancel_scope.cancel()
    finally:
        for stream in (wire_in, wire_out, agent._send, agent._receive):
            stream.close_now()


def relay_entry(record: Path | None = None) -> dict[str, Any]:
    return stdio_entry("relay", *(["--record", str(record)] if record is not None else []))


async def recorded(record: Path, method: str) -> dict[str, Any]:
    """The first message of ``method`` the relay server recorded, once it has."""
    with anyio.fail_after(BOUND_S):
        while True:
            lines = record.read_text(encoding="utf-8").splitlines() if record.exists() else []
            for message in map(json.loads, lines):
                if message.get("method") == method:
                    return dict(message)
            await anyio.sleep(0.02)


def raw_side(gateway: Gateway, server: str) -> RawChannel:
    channel = gateway.manager.get(server).raw_channel
    assert channel is not None
    return channel


def text(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


async def test_calls_with_progress_are_relayed_raw(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config) as (gateway, agent):
            await agent.call(1, agent.tool("mcp__relay__echo"), {"text": "hi"})
            assert await agent.receive() == {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"content": [{"type": "text", "text": "hi"}]},
            }
            await agent.call("p", agent.tool("mcp__relay__progress"), {"steps": 2}, progressToken="tok")
            lines = [await agent.receive() for _ in range(3)]
            assert [line.get("params") for line in lines[:2]] == [
                {"progressToken": "tok", "progress": 1.0, "total": 2.0, "message": "step 1"},
                {"progressToken": "tok", "progress": 2.0, "total": 2.0, "message": "step 2"},
            ]
            assert lines[2]["id"] == "p" and text(lines[2]) == "done 2"
            assert raw_side(gateway, "relay").relayed == (2 if call_path.raw else 0)


async def test_a_relayed_answer_goes_out_from_the_servers_reader(
    tmp_path: Path, call_path: PathProbe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the raw path the answer is on the agent's wire before the calling task has its result
    back (written by the reader that read it); on the SDK's path the task writes it afterwards."""
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    on_the_wire: list[bool] = []
    call_tool_wire = lane.call_tool_wire

    async def watched(*args: Any, **kwargs: Any) -> dict[str, Any]:
        result = await call_tool_wire(*args, **kwargs)
        on_the_wire.append(bool(select.select([agent_fd], [], [], 0)[0]))
        return result

    monkeypatch.setattr(lane, "call_tool_wire", watched)
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config) as (_gateway, agent):
            agent_fd = agent._receive._fd
            for n in range(4):
                await agent.call(n, agent.tool("mcp__relay__echo"), {"text": f"hi {n}"})
                answer = await agent.receive()
                assert answer["id"] == n and text(answer) == f"hi {n}"
            # The first answer after the lines of the handshake the SDK was given waits for the
            # SDK to have dispatched them (``RawChannel.held``), and goes out from the task.
            assert on_the_wire[1:] == [call_path.raw] * 3


async def test_a_result_passed_on_by_the_reader_is_the_servers_own_text(
    tmp_path: Path, call_path: PathProbe
) -> None:
    """On the raw path the reader passes a result on as the server wrote it, not encoded again
    (``light.py`` writes ``json.dumps``' spaced JSON); the SDK's path writes it compact."""
    config = write_config(tmp_path / "mcp.json", {"light": stdio_entry("light")})
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config) as (gateway, agent):
            lines = []
            for n in range(3):  # the first answer after the handshake goes out from the task
                await agent.call(n, agent.tool("mcp__light__echo"), {"text": "hé"})
                lines.append(await agent.receive_line())
            assert [json.loads(line)["id"] for line in lines] == [0, 1, 2]
            assert {json.loads(line)["result"]["content"][0]["text"] for line in lines} == {"hé"}
            spaced = [b'"text": "h\\u00e9"' in line for line in lines]
            assert spaced == [False, call_path.raw, call_path.raw]
            assert raw_side(gateway, "light").relayed == (3 if call_path.raw else 0)


async def test_a_relayed_call_is_written_to_its_server_before_its_task_runs(
    tmp_path: Path, call_path: PathProbe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the raw path the reader that read the agent's request writes it to the server
    (``RawChannel.issue``): the calling task finds it pending; on the SDK's path the task sends it."""
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    pending_at_start: list[bool] = []
    call_tool_wire = lane.call_tool_wire

    async def watched(sup: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        pending_at_start.append(sup.raw_channel.pending)
        return await call_tool_wire(sup, *args, **kwargs)

    monkeypatch.setattr(lane, "call_tool_wire", watched)
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config) as (gateway, agent):
            for n in range(3):
                await agent.call(n, agent.tool("mcp__relay__echo"), {"text": f"hi {n}"})
                answer = await agent.receive()
                assert answer["id"] == n and text(answer) == f"hi {n}"
            assert pending_at_start == [call_path.raw] * 3
            assert not raw_side(gateway, "relay").pending


async def test_what_the_agent_is_answered_is_the_checked_result(tmp_path: Path, call_path: PathProbe) -> None:
    """Answered from the reader or by the task, a result is checked first: one that fails the
    negotiated version's check is an error result, never passed on."""
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config) as (gateway, agent):
            for n in range(2):  # the second answer after the handshake can go out from the reader
                await agent.call(f"bad{n}", agent.tool("mcp__relay__bad_result"), {})
                bad = await agent.answer_to(f"bad{n}")
                assert bad["result"]["isError"] is True and isinstance(bad["result"]["content"], list)
                await agent.call(f"echo{n}", agent.tool("mcp__relay__echo"), {"text": "fine"})
                assert text(await agent.answer_to(f"echo{n}")) == "fine"
            assert raw_side(gateway, "relay").relayed == (4 if call_path.raw else 0)


@pytest.mark.parametrize("how", ["cancels", "leaves"])
async def test_a_call_the_agent_gives_up_gets_no_answer_and_the_server_hears_of_it(
    tmp_path: Path, call_path: PathProbe, how: str
) -> None:
    """The agent cancels the call, or leaves (its wire reads EOF, and the lane's call tasks end
    with it: ``lane.CallTasks``): either way the server hears the cancel, and the session and the
    server stay."""
    record = tmp_path / "record.jsonl"
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry(record)})
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config) as (gateway, agent):
            await agent.call(1, agent.tool("mcp__relay__hold"), {})
            upstream = await recorded(record, "tools/call")
            if how == "cancels":
                await agent.send({"method": "notifications/cancelled", "params": {"requestId": 1}})
            else:
                agent._send.close_now()
            cancelled = await recorded(record, "notifications/cancelled")
            assert cancelled["params"]["requestId"] == upstream["id"]
            await wait_until(lambda: not raw_side(gateway, "relay").pending, what="the call's end")
            assert gateway.manager.get("relay").connected
            if how == "cancels":
                await agent.call(2, agent.tool("mcp__relay__echo"), {"text": "next"})
                answer = await agent.receive()  # the first line since the cancel: call 1 got none
                assert answer["id"] == 2 and text(answer) == "next"


async def test_call_tasks_end_with_their_group_and_so_does_the_lane() -> None:
    """``CallTasks`` as a task group would: the group's end cancels every call task without
    breaking into a shielded step (a courtesy cancel to the server), awaits them all, one spawned
    while they end too; then the lane takes no more lines."""
    in_shield, release = anyio.Event(), anyio.Event()
    done: list[str] = []
    spawned: list[asyncio.Task[None]] = []

    async def call(late: bool) -> None:
        if not late:
            with anyio.CancelScope(shield=True):
                in_shield.set()
                await release.wait()  # the group is cancelled meanwhile
                done.append("shielded step")
        try:
            await anyio.sleep_forever()
        finally:
            if not late:
                spawned.append(tasks.spawn(call(late=True)))  # as a line read meanwhile would

    fast = FastLane(cast(Gateway, None))
    with anyio.fail_after(BOUND_S):
        async with anyio.create_task_group() as tg:

            async def write(data: bytes) -> None:
                pass

            fast.attach(write, tg)
            tasks = lane.CallTasks(tg)
            spawned.append(tasks.spawn(call(late=False)))
            await in_shield.wait()
            tg.cancel_scope.cancel()
            with anyio.CancelScope(shield=True):
                while not tasks.closed:  # the keeper has cancelled the call's scope
                    await anyio.lowlevel.checkpoint()
                await anyio.lowlevel.checkpoint()
                release.set()
    assert done == ["shielded step"]
    assert len(spawned) == 2 and all(task.done() for task in spawned)
    call_line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'
    assert fast.take(call_line) is False  # the wire ended: nothing is taken off it


async def test_a_call_task_that_fails_fails_the_wire(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a call's task is not swallowed: it ends the wire as a task of its group would."""

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the lane")

    monkeypatch.setattr(lane, "call_tool_wire", broken)
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S), pytest.raises(RuntimeError, match="a bug in the lane"):
        async with lane_wire(config) as (_, agent):
            await agent.call(1, agent.tool("mcp__relay__echo"), {"text": "x"})
            await anyio.sleep_forever()  # ended by the failure, which the session passes on


async def test_twenty_calls_in_flight_are_answered_out_of_order(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config) as (gateway, agent):
            gather = agent.tool("mcp__relay__gather")
            for i in range(20):
                await agent.call(i, gather, {"n": 20})
            answers = [await agent.receive() for _ in range(20)]
            assert sorted(a["id"] for a in answers) == list(range(20))
            assert [a["id"] for a in answers] != list(range(20))  # the server answered last first
            assert {text(a) for a in answers} == {"gathered"}
            assert raw_side(gateway, "relay").relayed == (20 if call_path.raw else 0)


async def test_a_servers_question_during_a_call_reaches_the_agent(
    tmp_path: Path, call_path: PathProbe
) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config, {"elicitation": {}}) as (gateway, agent):
            await agent.call(1, agent.tool("mcp__relay__ask"), {})
            question = await agent.receive()
            assert question["method"] == "elicitation/create"
            assert question["params"]["message"].endswith("Your name?")
            await agent.send(
                {"id": question["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}
            )
            answer = await agent.answer_to(1)
            assert text(answer) == "accept"
            assert raw_side(gateway, "relay").relayed == (1 if call_path.raw else 0)


async def test_an_http_servers_tools_take_the_sdks_path(tmp_path: Path) -> None:
    with anyio.fail_after(BOUND_S):
        async with run_http_server() as url:
            config = write_config(tmp_path / "mcp.json", {"web": {"url": url}, "relay": relay_entry()})
            async with lane_wire(config) as (gateway, agent):
                await agent.call(1, agent.tool("mcp__web__echo"), {"text": "over http"})
                assert text(await agent.answer_to(1)) == "over http"
                assert gateway.manager.get("web").raw_channel is None
                assert raw_side(gateway, "relay").relayed == 0


async def test_a_question_the_server_gives_up_is_withdrawn_at_the_agent(
    tmp_path: Path, call_path: PathProbe
) -> None:
    """The server cancels its own question, then answers the call: the agent hears of both."""
    config = write_config(tmp_path / "mcp.json", {"ref": stdio_entry("reference")})
    with anyio.fail_after(BOUND_S):
        async with lane_wire(config, {"elicitation": {}}) as (gateway, agent):
            await agent.call(1, agent.tool("mcp__ref__test_elicitation_abandoned"), {"seconds": 0.2})
            question = await agent.receive()
            assert question["method"] == "elicitation/create"
            seen: dict[str, dict[str, Any]] = {}
            while len(seen) < 2:
                message = await agent.receive()
                seen["answer" if message.get("id") == 1 else str(message.get("method"))] = message
            assert seen["notifications/cancelled"]["params"]["requestId"] == question["id"]
            assert text(seen["answer"]).startswith("gave up")
            assert raw_side(gateway, "ref").relayed == (1 if call_path.raw else 0)
