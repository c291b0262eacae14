"""The HTTP gateway's memory of recent SSE events, so an agent whose stream broke can resume it.

With an event store the SDK's Streamable HTTP transport opens each SSE stream with a priming event
(an id and a ``retry`` hint) and numbers every event; an agent that reconnects with
``Last-Event-ID`` is sent what it missed on that stream. Bounded: the oldest events are forgotten
first, and a stream resumed from a forgotten event gets nothing replayed.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from mcp.server.streamable_http import EventMessage, EventStore

if TYPE_CHECKING:
    from mcp.server.streamable_http import EventCallback

MAX_EVENTS = 10_000
_SEPARATOR = "/"


def memory_event_store(max_events: int = MAX_EVENTS) -> Any:
    """An SDK ``EventStore`` (built here: the SDK import is paid only by ``serve --http``)."""

    class MemoryEventStore(EventStore):
        def __init__(self) -> None:
            self._events: OrderedDict[str, tuple[str, Any]] = OrderedDict()
            self._ids = itertools.count(1)

        async def store_event(self, stream_id: str, message: Any) -> str:
            event_id = f"{stream_id}{_SEPARATOR}{next(self._ids)}"
            self._events[event_id] = (stream_id, message)
            while len(self._events) > max_events:
                self._events.popitem(last=False)
            return event_id

        async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
            stream_id, _, _ = last_event_id.rpartition(_SEPARATOR)
            if last_event_id not in self._events or not stream_id:
                return None
            after = False
            for event_id, (stream, message) in list(self._events.items()):
                if after and stream == stream_id and message is not None:
                    await send_callback(EventMessage(message, event_id))
                after = after or event_id == last_event_id
            return stream_id

    return MemoryEventStore()
