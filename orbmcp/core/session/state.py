"""Server states, what status views read of a server (``Snapshot``), and the retry schedule."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class State(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    NEEDS_AUTH = "needs-auth"


@dataclass
class Snapshot:
    """What status views read; updated only by the supervisor."""

    state: State = State.STOPPED
    retries: int = 0
    last_error: str | None = None
    last_error_code: str | None = None
    last_error_reason: str | None = None  # the error's machine reason (``OrbError.reason``)
    last_error_hint: str | None = None
    started_at: float | None = None
    protocol_version: str | None = None
    transport: str | None = None  # of the last connection; "sse" when a URL refused Streamable HTTP
    server_info: str | None = None
    warnings: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    retry_at: float | None = None  # wall-clock time of the next attempt while waiting for it
    instructions: str | None = None  # from the server's initialize result, raw (bounded)
    capabilities: dict[str, Any] | None = None  # what the server offered (wire JSON)
    advertised: dict[str, Any] | None = None  # what orbmcp advertised to it (wire JSON)


# A fixed schedule: 1 s, 3 s, 5 s, 10 s, 30 s; the last delay repeats up to maxRetries.
RETRY_SCHEDULE_S: tuple[float, ...] = (1.0, 3.0, 5.0, 10.0, 30.0)


def retry_delay(attempt: int) -> float:
    """Delay before retry number ``attempt`` (1-based)."""
    return RETRY_SCHEDULE_S[min(max(attempt, 1), len(RETRY_SCHEDULE_S)) - 1]


def effective_max_retries(value: int) -> int:
    """0 or negative disables retries; the settings cap is 10."""
    return max(0, min(value, 10))
