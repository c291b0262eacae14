"""A guard between a transport and the SDK session: what a server sends passes here first.

It wraps the ``(read, write)`` streams of any ``Transport`` (stdio, Streamable HTTP, SSE) without
a task or a buffer of its own: the write side notes the requests whose answers matter (tool
listings, for ``listings.ToolListingSalvage``), the read side drops notifications past their rate
(``flood.NotificationThrottle``) and shows the salvage each answer. Everything else goes through
untouched, in order.

Connect-time only (imports the SDK).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Transport
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.shared.message import SessionMessage

from orbmcp.core.tooling.listings import ToolListingSalvage
from orbmcp.core.wire.flood import NotificationThrottle


class _GuardedRead:
    """The session's read stream: notification floods thinned, tool listings kept for salvage."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        salvage: ToolListingSalvage,
        throttle: NotificationThrottle | None,
    ) -> None:
        self._inner = inner
        self._salvage = salvage
        self._throttle = throttle

    def __getattr__(self, name: str) -> Any:
        # ``last_context`` and whatever else the SDK reads off its stream.
        return getattr(self._inner, name)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, SessionMessage):
                return item
            message = item.message
            if isinstance(message, types.JSONRPCNotification):
                if self._throttle is None or self._throttle.admit(message.method):
                    return item
                continue
            answer = self._salvage.received(message)
            if answer is not message:
                return SessionMessage(answer, metadata=item.metadata)  # type: ignore[arg-type]
            return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _GuardedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        # As anyio's memory streams do: the end of the stream ends the iteration.
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _GuardedRead:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _NotingWrite:
    """The session's write stream: requests are noted, then sent as they are."""

    def __init__(self, inner: WriteStream[SessionMessage], salvage: ToolListingSalvage) -> None:
        self._inner = inner
        self._salvage = salvage

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send(self, item: SessionMessage, /) -> None:
        self._salvage.sent(item.message)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _NotingWrite:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def _guarded_streams(
    transport: Transport, salvage: ToolListingSalvage, throttle: NotificationThrottle | None
) -> AsyncIterator[TransportStreams]:
    async with transport as (read, write):
        yield _GuardedRead(read, salvage, throttle), _NotingWrite(write, salvage)


def guarded(
    transport: Transport, *, salvage: ToolListingSalvage, throttle: NotificationThrottle | None
) -> Transport:
    """``transport`` with the guard between it and the session (see the module docstring);
    ``throttle`` None when the transport thins notifications itself (stdio, before parsing)."""
    return _guarded_streams(transport, salvage, throttle)


__all__ = ["guarded"]
