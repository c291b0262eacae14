"""Durations a person types on a command line: ``30s``, ``2m``, ``1.5h``, ``500ms``, or seconds.

The one parser of them: ``--timeout``, ``--wait``, the daemon's ``--idle-timeout`` (where 0 says
never). Config files hold numbers of milliseconds and are checked by the config layer."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from orbmcp.errors import UsageError

if TYPE_CHECKING:
    from orbmcp.commands.context import CommandContext

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(text: str, *, option: str, positive: bool = True, zero: str | None = None) -> float:
    """Seconds; a usage error naming ``option`` for anything else (or for 0 when ``positive``).

    ``zero`` names what 0 means where it is allowed (``never``); the error then offers it."""
    match = _DURATION.match(text)
    seconds = float(match.group(1)) * _UNIT_S[match.group(2)] if match else math.nan
    positive = positive and zero is None
    if not math.isfinite(seconds) or (positive and seconds <= 0):
        want = "a positive duration" if positive else "a duration"
        like = "30s, 2m, 1.5h or a number of seconds" if zero is None else f"30m, 90s, 1h or 0 ({zero})"
        raise UsageError(f"{option}: expected {want} like {like}, got {text!r}", reason="bad_duration")
    return seconds


def apply_timeout(ctx: CommandContext, timeout: str | None) -> float | None:
    """``--timeout`` of a connecting command (check, status, tools, start): every server's connect
    and request timeouts become that long for this command; the seconds, or None when not given."""
    if timeout is None:
        return None

    seconds = parse_duration(timeout, option="--timeout")
    ms = max(1, round(seconds * 1000))
    config = ctx.config()
    servers = {n: replace(s, timeout_ms=ms, request_timeout_ms=ms) for n, s in config.servers.items()}
    ctx.set_config(replace(config, servers=servers))
    return seconds
