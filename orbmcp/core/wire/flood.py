"""Thinning floods of server notifications before the SDK handles them.

A server may send progress or log notifications as fast as it can write (100,000 a second is one
``for`` loop away). Each one the SDK takes in costs validation and a callback, and each progress
update may be drawn on the terminal, so a flood would hold a core and scroll the screen while the
call it belongs to still has to finish. Past a steady rate per kind (a burst allowed), the excess
is dropped here: progress is only ever "how far along", and the next admitted update says it
again; a log flood keeps its first messages and its rate.

The stdio reader asks before the SDK's parser runs (``notification_method`` is a plain
``json.loads``), so a dropped line costs a few microseconds; HTTP messages are asked about once
the SDK's transport has parsed them. Clock-injectable; no I/O, no SDK.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

# method -> (steady rate per second, burst). The burst lets a busy but honest server through
# whole (a thousand steps of a fast loop); only a sustained stream is thinned. What a terminal
# draws of it is throttled again where it is drawn.
LIMITS: dict[str, tuple[float, int]] = {
    "notifications/progress": (100.0, 2000),
    "notifications/message": (100.0, 1000),
}


class _Bucket:
    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = now

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class NotificationThrottle:
    """Admits a server's notifications at a bounded rate per method; counts what it drops."""

    def __init__(
        self,
        warn: Callable[[str], None] | None = None,
        *,
        limits: dict[str, tuple[float, int]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._warn = warn
        self._limits = LIMITS if limits is None else limits
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self.dropped: dict[str, int] = {}

    def admit(self, method: str) -> bool:
        """True to pass this notification on; False to drop it (a method without a limit always passes)."""
        limit = self._limits.get(method)
        if limit is None:
            return True
        now = self._clock()
        bucket = self._buckets.get(method)
        if bucket is None:
            bucket = self._buckets[method] = _Bucket(*limit, now)
        if bucket.take(now):
            return True
        dropped = self.dropped[method] = self.dropped.get(method, 0) + 1
        if dropped == 1 and self._warn is not None:
            self._warn(f"the server sends more than {limit[0]:g} {method} per second; the excess is dropped")
        return False


def notification_method(line: bytes) -> str | None:
    """The method of a JSON-RPC notification on one stdio line, else None (requests, answers,
    anything unparsable: those go on to the real parser)."""
    if b'"notifications/' not in line:
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # deep nesting from a hostile server must not kill the reader
        return None
    if not isinstance(message, dict) or "id" in message:
        return None
    method = message.get("method")
    return method if isinstance(method, str) else None


__all__ = ["LIMITS", "NotificationThrottle", "notification_method"]
