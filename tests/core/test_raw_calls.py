"""Calls relayed raw on a stdio connection (``orbmcp.core.tooling.raw_calls``), against real servers.

Which path a call took is read from the connection's ``RawChannel.relayed`` (calls answered
through it), never from timing. Every failure must read exactly as on the SDK's path
(``calls.call_tool_wire``), so several tests make the same call both ways and compare.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.core.capabilities.elicitation import ElicitationAnswer
from orbmcp.core.session.supervisor import Supervisor
from orbmcp.core.tooling.calls import call_tool_wire
from orbmcp.core.tooling.raw_calls import call_tool_relayed
from orbmcp.core.wire.raw_channel import ID_PREFIX, RawChannel
from orbmcp.errors import ConnectionFailed, OrbError, ProtocolError, TimeoutFailed
from tests.core.capabilities.test_live import Scripted, asks
from tests.core.live import managed, stdio_entry, write_config
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


async def test_a_call_is_relayed_raw_with_its_progress_in_order(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            assert text(await call_tool_relayed(sup, "echo", {"text": "hi"})) == "hi"
            seen: list[tuple[float, float | None, str | None]] = []

            async def progress(value: float, total: float | None, message: str | None) -> None:
                seen.append((value, total, message))

            assert text(await call_tool_relayed(sup, "progress", {"steps": 3}, progress=progress)) == "done 3"
            assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
            assert channel(sup).relayed == 2
            # The SDK's path still works beside it, on the same connection.
            assert text(await call_tool_wire(sup, "echo", {"text": "sdk"})) == "sdk"
            assert channel(sup).relayed == 2


async def test_cancelling_a_call_tells_the_server_and_forgets_the_id(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry(record)})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            async with anyio.create_task_group() as tg:
                tg.start_soon(call_tool_relayed, sup, "hold", {})
                call = await until_received(record, "tools/call")
                tg.cancel_scope.cancel()
            cancelled = await until_received(record, "notifications/cancelled")
            assert call["id"].startswith(ID_PREFIX)
            assert cancelled["params"] == {"requestId": call["id"], "reason": "caller cancelled"}
            assert not channel(sup).pending
            assert text(await call_tool_relayed(sup, "echo", {"text": "after"})) == "after"


async def test_a_timeout_cancels_upstream_and_fails_as_on_the_sdks_path(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    entry = relay_entry(record, requestTimeoutMs=300)
    config = write_config(tmp_path / "mcp.json", {"relay": entry})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            with pytest.raises(TimeoutFailed) as raw:
                await call_tool_relayed(sup, "hold", {})
            with pytest.raises(TimeoutFailed) as sdk:
                await call_tool_wire(sup, "hold", {})
            assert (raw.value.message, raw.value.reason) == (sdk.value.message, sdk.value.reason)
            assert raw.value.reason == "request_timeout"
            cancelled = await until_received(record, "notifications/cancelled")
            assert str(cancelled["params"]["requestId"]).startswith(ID_PREFIX)
            assert cancelled["params"]["reason"] == "timed out after 0.3s"
            assert not channel(sup).pending


async def test_a_server_dying_mid_call_fails_it_as_on_the_sdks_path(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": relay_entry(), "sdk": relay_entry()})
    errors: list[OrbError] = []
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            for name, call in (("raw", call_tool_relayed), ("sdk", call_tool_wire)):
                sup = await manager.ready(name)
                raw = channel(sup)
                with pytest.raises(ConnectionFailed) as err:
                    await call(sup, "crash", {})
                errors.append(err.value)
                assert raw.closed and not raw.pending
            assert errors[0].reason == errors[1].reason == "server_exited"
            assert errors[0].message.replace("'raw'", "'sdk'") == errors[1].message
            assert errors[0].hint == errors[1].hint


async def test_hostile_lines_never_break_the_reader(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            # Bad JSON, deep nesting, ids that are an object and a list, an answer to an id
            # never sent: each goes to the SDK (which skips it), the real answer comes through.
            assert text(await call_tool_relayed(sup, "hostile", {"text": "still here"})) == "still here"
            assert sup.connected
            assert text(await call_tool_relayed(sup, "echo", {"text": "and on"})) == "and on"
            assert channel(sup).relayed == 2


async def test_a_result_the_sdk_would_refuse_is_refused_the_same_way(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            with pytest.raises(ProtocolError) as raw:
                await call_tool_relayed(sup, "bad_result", {})
            with pytest.raises(ProtocolError) as sdk:
                await call_tool_wire(sup, "bad_result", {})
            assert raw.value.reason == sdk.value.reason == "request_failed"
            assert raw.value.message == sdk.value.message


async def test_questions_during_a_call_reach_its_asker(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    person = Scripted(answers=[ElicitationAnswer("accept", {"name": "Ada"})])
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")
            assert text(await call_tool_relayed(sup, "ask", {}, asker=person)) == "accept"
            assert [q.message for q in person.asked] == ["Your name?"]
            assert channel(sup).relayed == 1


async def test_a_32042_answer_is_completed_and_retried_on_the_sdks_path(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    config = write_config(tmp_path / "mcp.json", {"asks": asks(markers)})
    person = Scripted(answers=[ElicitationAnswer("accept")])
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("asks")
            assert text(await call_tool_relayed(sup, "needs_url", {}, asker=person)) == "authorized"
            assert person.asked[0].url == "https://example.com/authorize"
            assert channel(sup).relayed == 1  # the -32042 came raw; the retry did not


async def test_twenty_calls_in_flight_are_answered_out_of_order(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"relay": relay_entry()})
    answers: dict[int, str] = {}
    with anyio.fail_after(BOUND_S):
        async with managed(config) as manager:
            sup = await manager.ready("relay")

            async def one(i: int) -> None:
                answers[i] = text(await call_tool_relayed(sup, "gather", {"n": 20}))

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(one, i)
            assert answers == dict.fromkeys(range(20), "gathered")
            assert channel(sup).relayed == 20 and not channel(sup).pending


def test_the_channel_hands_over_only_answers_to_its_own_pending_ids() -> None:
    raw = RawChannel("s")
    line = b'{"jsonrpc":"2.0","id":"orbmcp-lane-1","result":{}}'
    assert not raw.take(line)  # nothing pending: everything is the SDK's
    raw._waiters["orbmcp-lane-1"] = waiter = type("W", (), {"put": lambda self, item: got.append(item)})()
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


def test_the_sdk_helper_the_relay_shares_is_there() -> None:
    """The relay drops a later revision's result fields exactly as the SDK's session does, by
    the SDK's own (private) table: an SDK upgrade that moves it fails here, not in a call."""
    from mcp.client.session import _later_revision_fields

    dropped = _later_revision_fields("tools/call", "2025-11-25")
    assert isinstance(dropped, frozenset) and "resultType" in dropped
