"""Calls relayed raw on a stdio connection (``orbmcp.core.tooling.call_paths``), against real servers.

Every test runs on both call paths (``call_path``), through the one interface
(``calls.call_tool_wire``), and asserts the same outcome on both: every failure must read exactly
as on the SDK's path. Which path a call took is read from the paths' counters (the fixture) and
the connection's ``RawChannel.relayed`` (calls answered through it), never from timing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError

from orbmcp.core.capabilities.elicitation import ElicitationAnswer
from orbmcp.core.session.supervisor import Supervisor
from orbmcp.core.tooling import call_paths
from orbmcp.core.tooling.call_paths import RAW, Call
from orbmcp.core.tooling.calls import call_tool, call_tool_wire, progress_filter
from orbmcp.core.wire.raw_channel import ID_PREFIX, RawChannel
from orbmcp.errors import ConnectionFailed, ProtocolError, TimeoutFailed
from tests.core.capabilities.test_live import Scripted, asks
from tests.core.live import managed, stdio_entry, write_config
from tests.core.paths import PathProbe
from tests.timeouts import HANG_GUARD_S

pytestmark = pytest.mark.anyio
BOUND_S = HANG_GUARD_S


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def relay_entry(record: Path | None = None, **extra: Any) -> dict[str, Any]:
    args = ["--record", str(record)] if record is not None else []
    return stdio_entry("relay", *args, **extra)


def channel(sup: Supervisor) -> RawChannel:
    assert sup.raw_channel is not None
    return sup.raw_channel


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def received(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


async def until_received(record: Path, method: str) -> dict[str, Any]:
    """The first message of ``method`` the server recorded (polled: it is another process)."""
    with anyio.fail_after(BOUND_S):
        while True:
            for message in received(record):
                if message.get("method") == method:
                    return message
            await anyio.sleep(0.02)


def relayed(sup: Supervisor, probe: PathProbe, calls: int) -> int:
    """How many calls the connection's raw channel answered: ``calls`` on the raw path, else 0."""
    assert channel(sup).relayed == (calls if probe.raw else 0)
    return channel(sup).relayed


async def test_a_call_is_relayed_raw_with_its_progress_in_order(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            assert text(await call_tool_wire(sup, "echo", {"text": "hi"})) == "hi"
            seen: list[tuple[float, float | None, str | None]] = []

            async def progress(value: float, total: float | None, message: str | None) -> None:
                seen.append((value, total, message))

            assert text(await call_tool_wire(sup, "progress", {"steps": 3}, progress=progress)) == "done 3"
            assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
            relayed(sup, call_path, 2)


async def test_cancelling_a_call_tells_the_server_and_forgets_the_id(
    tmp_path: Path, call_path: PathProbe
) -> None:
    record = tmp_path / "record.jsonl"
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry(record)})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            async with anyio.create_task_group() as tg:
                tg.start_soon(call_tool_wire, sup, "hold", {})
                call = await until_received(record, "tools/call")
                tg.cancel_scope.cancel()
            cancelled = await until_received(record, "notifications/cancelled")
            assert str(call["id"]).startswith(ID_PREFIX) == call_path.raw
            assert cancelled["params"]["requestId"] == call["id"]
            assert not channel(sup).pending
            assert text(await call_tool_wire(sup, "echo", {"text": "after"})) == "after"
            relayed(sup, call_path, 1)


async def test_a_timeout_cancels_upstream_and_fails_as_on_the_sdks_path(
    tmp_path: Path, call_path: PathProbe
) -> None:
    record = tmp_path / "record.jsonl"
    entry = relay_entry(record, requestTimeoutMs=300)
    config = write_config(tmp_path / "mcp.json", {"relay": entry})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            with pytest.raises(TimeoutFailed) as timed_out:
                await call_tool_wire(sup, "hold", {})
            assert timed_out.value.message == "server 'relay': tools/call hold timed out"
            assert timed_out.value.reason == "request_timeout"
            call = await until_received(record, "tools/call")
            cancelled = await until_received(record, "notifications/cancelled")
            assert cancelled["params"]["requestId"] == call["id"]
            assert str(call["id"]).startswith(ID_PREFIX) == call_path.raw
            assert not channel(sup).pending


async def test_a_server_dying_mid_call_fails_it_as_on_the_sdks_path(
    tmp_path: Path, call_path: PathProbe
) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            raw = channel(sup)
            with pytest.raises(ConnectionFailed) as err:
                await call_tool_wire(sup, "crash", {})
            assert raw.closed and not raw.pending
            assert err.value.reason == "server_exited"
            assert err.value.message.startswith("server 'relay' exited")
            assert err.value.message.endswith("during tools/call crash")


async def test_hostile_lines_never_break_the_reader(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            # Bad JSON, deep nesting, ids that are an object and a list, an answer to an id
            # never sent: each goes to the SDK (which skips it), the real answer comes through.
            assert text(await call_tool_wire(sup, "hostile", {"text": "still here"})) == "still here"
            assert sup.connected
            assert text(await call_tool_wire(sup, "echo", {"text": "and on"})) == "and on"
            relayed(sup, call_path, 2)


async def test_a_result_the_sdk_would_refuse_is_refused_the_same_way(
    tmp_path: Path, call_path: PathProbe
) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            with pytest.raises(ProtocolError) as refused:
                await call_tool_wire(sup, "bad_result", {})
            assert refused.value.reason == "request_failed"
            assert refused.value.message.startswith(
                "server 'relay': tools/call bad_result failed: ValidationError:"
            )


async def test_questions_during_a_call_reach_its_asker(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    person = Scripted(answers=[ElicitationAnswer("accept", {"name": "Ada"})])
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            assert text(await call_tool_wire(sup, "ask", {}, asker=person)) == "accept"
            assert [q.message for q in person.asked] == ["Your name?"]
            relayed(sup, call_path, 1)


async def test_a_32042_answer_is_completed_and_retried_on_the_sdks_path(
    tmp_path: Path, call_path: PathProbe
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    config = write_config(tmp_path / "mcp.json", {"asks": asks(markers)})
    person = Scripted(answers=[ElicitationAnswer("accept")])
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("asks")
            assert text(await call_tool_wire(sup, "needs_url", {}, asker=person)) == "authorized"
            assert person.asked[0].url == "https://example.com/authorize"
            # The -32042 came on the path under test; the resend always takes the SDK's.
            relayed(sup, call_path, 1)


async def test_twenty_calls_in_flight_are_answered_out_of_order(tmp_path: Path, call_path: PathProbe) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    answers: dict[int, str] = {}
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")

            async def one(i: int) -> None:
                answers[i] = text(await call_tool_wire(sup, "gather", {"n": 20}))

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(one, i)
            assert answers == dict.fromkeys(range(20), "gathered")
            relayed(sup, call_path, 20)
            assert not channel(sup).pending


async def test_a_result_read_as_a_model_is_checked_against_the_output_schema(
    tmp_path: Path, call_path: PathProbe
) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            good = await call_tool(sup, "weather", {"good": True})
            assert good.structured == {"celsius": 21.5} and not good.is_error
            with pytest.raises(ProtocolError) as refused:
                await call_tool(sup, "weather", {})
            assert refused.value.message.startswith(
                "server 'relay': tools/call weather failed: RuntimeError: Invalid structured content returned by tool weather"
            )
            failed = await call_tool(sup, "fail", {})  # an error result is not held to the schema
            assert failed.is_error and failed.text() == "weather"
            relayed(sup, call_path, 3)


async def test_a_later_revisions_fields_are_dropped_and_a_gone_channel_fails_as_closed(
    tmp_path: Path, call_path: PathProbe
) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            assert await call_tool_wire(sup, "later", {}) == {"content": [{"type": "text", "text": "later"}]}
            relayed(sup, call_path, 1)
            await manager.stop("relay")
        # The raw path, asked after its connection went (between the choice and the call).
        call = Call("echo", {}, 1.0, progress_filter(None))
        with pytest.raises(MCPError) as closed:
            await RAW.wire(sup, None, call)
        assert closed.value.error.code == -32000


def test_the_channel_hands_over_only_answers_to_its_own_pending_ids() -> None:
    raw = RawChannel("s")
    line = b'{"jsonrpc":"2.0","id":"orbmcp-lane-1","result":{}}'
    assert not raw.take(line)  # nothing pending: everything is the SDK's
    fake = {"put": lambda self, item: got.append(item), "early": None, "items": []}
    raw._waiters["orbmcp-lane-1"] = waiter = type("W", (), fake)()
    got: list[Any] = []
    for hostile in (
        b"[" * 50_000 + b'"orbmcp-lane-1"' + b"]" * 50_000,
        b'{"id": "orbmcp-lane-1", "result": ',
        b'{"jsonrpc":"2.0","id":["orbmcp-lane-1"],"result":{}}',
        b'{"jsonrpc":"2.0","id":"orbmcp-lane-2","result":{}}',
        b'{"jsonrpc":"2.0","id":"orbmcp-lane-1","method":"ping"}',
        b'["orbmcp-lane-1"]',
    ):
        assert not raw.take(hostile)
    assert got == []
    assert raw.take(line) and got == [{}]
    assert waiter is raw._waiters["orbmcp-lane-1"]


def test_the_servers_text_goes_on_only_with_the_result_it_checked_unchanged() -> None:
    """The hand-over passes the server's text on with a result the check left as it came; one
    whose later revision's fields were dropped goes on without it (encoded again), and one that
    fails the check is not handed on at all."""
    delivered: list[tuple[dict[str, Any], bytes | None]] = []

    def deliver(result: dict[str, Any], raw: bytes | None) -> bool:
        delivered.append((result, raw))
        return True

    plain = {"content": [{"type": "text", "text": "hi"}]}
    call_paths._early(deliver, "2025-11-25", [])(plain, b"TEXT")
    later = {**plain, "resultType": "complete"}
    call_paths._early(deliver, "2025-11-25", [])(later, b"LATER")
    call_paths._early(deliver, "2025-11-25", [])({"content": "not a list"}, b"BAD")
    assert delivered == [(plain, b"TEXT"), (plain, None)]


def test_the_sdk_helper_the_relay_shares_is_there() -> None:
    """The relay drops a later revision's result fields exactly as the SDK's session does, by
    the SDK's own (private) table: an SDK upgrade that moves it fails here, not in a call."""
    from mcp.client.session import _later_revision_fields

    dropped = _later_revision_fields("tools/call", "2025-11-25")
    assert isinstance(dropped, frozenset) and "resultType" in dropped


def test_a_result_is_handed_on_early_only_when_nothing_of_its_call_must_come_first() -> None:
    """``early`` gets a result as the reader reads it, unless progress of the call is still to be
    relayed or the SDK has lines to dispatch first (then the call's task returns it as before)."""
    raw = RawChannel("s")
    early: list[Any] = []
    got: list[Any] = []
    fake = {
        "put": lambda self, item: got.append(item),
        "early": staticmethod(lambda result, text: early.append(result)),
        "items": [],
    }
    raw._waiters["orbmcp-lane-1"] = waiter = type("W", (), fake)()
    answer = b'{"jsonrpc":"2.0","id":"orbmcp-lane-1","result":{"n":1}}'
    assert raw.take(answer) and early == [{"n": 1}] and got == [{"n": 1}]
    waiter.items = [(1.0, None, None)]  # progress not relayed yet
    assert raw.take(answer) and early == [{"n": 1}]
    waiter.items = []
    raw.sdk_behind = True  # the SDK was given a line before this answer
    assert raw.take(answer) and early == [{"n": 1}] and raw.held
    error = b'{"jsonrpc":"2.0","id":"orbmcp-lane-1","error":{"code":-1,"message":"no"}}'
    raw.sdk_behind = False
    assert raw.take(error) and early == [{"n": 1}]  # an error goes the task's way


def test_a_result_is_handed_on_with_the_servers_text_of_it_in_the_shapes_servers_write() -> None:
    """An answer shaped as servers write one (``jsonrpc``, ``id``, ``result`` as the SDK orders
    them, or ``result`` first as the TypeScript SDK does; compact or spaced) is handed on with the
    result's own text, so a relay passes it on as the server wrote it; another order is handed on
    parsed only, and a line with more after the result (an ``error`` too) is judged by the full
    parse, as before."""
    raw = RawChannel("s")
    early: list[tuple[Any, bytes | None]] = []
    got: list[Any] = []
    fake = {
        "put": lambda self, item: got.append(item),
        "early": staticmethod(lambda result, text: early.append((result, text))),
        "items": [],
    }
    raw._waiters["orbmcp-lane-7"] = type("W", (), fake)()
    compact = '{"jsonrpc":"2.0","id":"orbmcp-lane-7","result":{"x":1.50,"t":"é\\u00e9"}} \r'.encode()
    spaced = b'{"jsonrpc": "2.0", "id": "orbmcp-lane-7", "result": {"x": 1}}'
    first = b'{"result":{"x":[2]},"jsonrpc":"2.0","id":"orbmcp-lane-7"}'
    other = b'{"id":"orbmcp-lane-7","jsonrpc":"2.0","result":{"x":3}}'
    for line in (compact, spaced, first, other):
        assert raw.take(line)
    assert early == [
        ({"x": 1.5, "t": "éé"}, '{"x":1.50,"t":"é\\u00e9"}'.encode()),
        ({"x": 1}, b'{"x": 1}'),
        ({"x": [2]}, b'{"x":[2]}'),
        ({"x": 3}, None),
    ]
    for both in (
        b'{"jsonrpc":"2.0","id":"orbmcp-lane-7","result":{"x":1},"error":{"code":-1,"message":"no"}}',
        b'{"result":{"x":1},"error":{"code":-1,"message":"no"},"jsonrpc":"2.0","id":"orbmcp-lane-7"}',
    ):
        assert raw.take(both) and len(early) == 4  # an error: the task's way, as the full parse says
        assert type(got[-1]).__name__ == "_RawError"
    assert not raw.take(b'{"jsonrpc":"2.0","id":"orbmcp-lane-8","result":{}}')  # not ours
    assert not raw.take(b'{"result":{},"jsonrpc":"2.0","id":"orbmcp-lane-8"}')
    for bad in (
        b'{"jsonrpc":"2.0","id":"orbmcp-lane-7","result":{"x":\xff}}',  # not UTF-8
        b'{"jsonrpc":"2.0","id":"orbmcp-lane-7","result":[1]}',  # not an object
        b'{"result":' + b"[" * 100_000 + b"]" * 100_000 + b',"jsonrpc":"2.0","id":"orbmcp-lane-7"}',
    ):
        raw.take(bad)  # the full parse decides: nothing goes on early
    assert len(early) == 4 and len(got) == 7  # the array: an outcome; the others: not answers


async def test_an_issued_call_is_written_at_once_and_its_call_waits_for_the_answer() -> None:
    """``RawChannel.issue`` writes the request without waiting; ``call`` with it sends nothing more
    and returns the answer; an issued call nobody waits for is abandoned; a stdin that cannot take
    the line now, or a closed channel, issues nothing."""
    raw = RawChannel("s")
    lines: list[bytes] = []
    takes = True

    async def send(line: bytes) -> None:
        lines.append(line)

    def send_now(line: bytes) -> bool:
        if takes:
            lines.append(line)
        return takes

    raw.attach(send, None, send_now)
    issued = raw.issue("echo", {"text": "hi"})
    assert issued is not None and raw.pending and len(lines) == 1
    request = json.loads(lines[0])
    assert request["id"] == issued.request_id and request["params"]["name"] == "echo"
    answer = {"jsonrpc": "2.0", "id": issued.request_id, "result": {"content": []}}
    with anyio.fail_after(BOUND_S):
        async with anyio.create_task_group() as tg:

            async def reply() -> None:
                await anyio.wait_all_tasks_blocked()
                assert raw.take(json.dumps(answer).encode())

            tg.start_soon(reply)
            result = await raw.call(
                "echo", {"text": "hi"}, timeout=BOUND_S, on_progress=no_progress, issued=issued
            )
    assert result == {"content": []} and len(lines) == 1 and not raw.pending
    issued.abandon()  # after its call: nothing left to abandon
    assert not raw.pending
    left = raw.issue("echo", {})
    assert left is not None and raw.pending
    left.abandon()
    assert not raw.pending
    takes = False
    assert raw.issue("echo", {}) is None and not raw.pending
    raw.close()
    assert raw.issue("echo", {}) is None


async def no_progress(value: float, total: float | None, message: str | None) -> None:
    raise AssertionError("no progress expected")
