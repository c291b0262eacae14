"""The notification throttle: a burst passes whole, a sustained flood is held to its rate."""

from __future__ import annotations

from orbmcp.core.wire.flood import NotificationThrottle, notification_method


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_steady_rate_and_one_warning() -> None:
    clock, warnings = Clock(), []
    throttle = NotificationThrottle(
        warnings.append, limits={"notifications/progress": (10.0, 5)}, clock=clock
    )
    assert [throttle.admit("notifications/progress") for _ in range(7)] == [True] * 5 + [False] * 2
    clock.now = 0.5  # half a second at 10/s: five more
    assert sum(throttle.admit("notifications/progress") for _ in range(100)) == 5
    assert throttle.dropped == {"notifications/progress": 97}
    assert warnings == [
        "the server sends more than 10 notifications/progress per second; the excess is dropped"
    ]
    assert all(throttle.admit("notifications/tools/list_changed") for _ in range(1000))  # not limited


def test_notification_method_reads_only_notifications() -> None:
    assert notification_method(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}') == (
        "notifications/progress"
    )
    # An answer that merely mentions a notification is an answer: never dropped.
    assert notification_method(b'{"jsonrpc":"2.0","id":1,"result":{"text":"notifications/progress"}}') is None
    assert notification_method(b'{"jsonrpc":"2.0","id":1,"method":"notifications/x"}') is None
    assert notification_method(b"not json notifications/progress") is None
    assert notification_method(b'["notifications/progress"]') is None
    assert notification_method(b'{"method": 5, "x": "notifications/"}') is None


async def test_the_guard_thins_parsed_notifications_and_passes_the_rest_in_order() -> None:
    # The HTTP path: the transport has parsed the messages; the guard drops before the SDK.
    from contextlib import asynccontextmanager

    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    from orbmcp.core.tooling.listings import ToolListingSalvage
    from orbmcp.core.wire.inbound import guarded

    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](100)
    to_server, _sent = anyio.create_memory_object_stream[SessionMessage](100)

    @asynccontextmanager
    async def transport():  # type: ignore[no-untyped-def]
        yield from_server, to_server

    warnings: list[str] = []
    throttle = NotificationThrottle(warnings.append, limits={"notifications/message": (0.0, 2)})
    salvage = ToolListingSalvage("s", warnings.append)
    note = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"level": "info"})
    answer = types.JSONRPCResponse(jsonrpc="2.0", id=7, result={})
    for message in (note, note, note, answer, note):
        to_session.send_nowait(SessionMessage(message))
    to_session.close()
    async with guarded(transport(), salvage=salvage, throttle=throttle) as (read, write):
        received = [item.message async for item in read]  # type: ignore[union-attr]
        await write.send(SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=8, method="tools/list")))
    assert received == [note, note, answer]
    assert throttle.dropped == {"notifications/message": 2} and len(warnings) == 1
