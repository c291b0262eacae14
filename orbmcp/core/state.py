"""Server states and the retry schedule."""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    NEEDS_AUTH = "needs-auth"


# A fixed schedule: 1 s, 3 s, 5 s, 10 s, 30 s; the last delay repeats up to maxRetries.
RETRY_SCHEDULE_S: tuple[float, ...] = (1.0, 3.0, 5.0, 10.0, 30.0)


def retry_delay(attempt: int) -> float:
    """Delay before retry number ``attempt`` (1-based)."""
    return RETRY_SCHEDULE_S[min(max(attempt, 1), len(RETRY_SCHEDULE_S)) - 1]


def effective_max_retries(value: int) -> int:
    """0 or negative disables retries; the settings cap is 10."""
    return max(0, min(value, 10))
