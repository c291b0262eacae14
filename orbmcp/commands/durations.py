"""Durations a person types on a command line: ``30s``, ``2m``, ``1.5h``, ``500ms``, or seconds."""

from __future__ import annotations

import math
import re

from orbmcp.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(text: str, *, option: str, positive: bool = True) -> float:
    """Seconds; a usage error naming ``option`` for anything else (or for 0 when ``positive``)."""
    match = _DURATION.match(text)
    seconds = float(match.group(1)) * _UNIT_S[match.group(2)] if match else math.nan
    if not math.isfinite(seconds) or (positive and seconds <= 0):
        want = "a positive duration" if positive else "a duration"
        raise UsageError(
            f"{option}: expected {want} like 30s, 2m, 1.5h or a number of seconds, got {text!r}",
            reason="bad_duration",
        )
    return seconds
