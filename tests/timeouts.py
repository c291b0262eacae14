"""One timeout scale for the whole suite.

A bound a test puts on a wait is a hang guard: it only decides how long a test that is already
broken takes to say so, and it must never fail a test on a slow or busy machine. Every such
bound — the hang guards around waits, a command line's bound, the time a test server is given to
announce its port, and the connect timeout (``timeoutMs``) of the servers in a test's config —
is ``scaled(seconds)``, so ``ORBMCP_TEST_TIMEOUT_SCALE=3`` triples them all at once (default 1).

Timeouts that are a test's subject (a server given up on after 1.2 s, a grace period, a wait that
proves nothing arrives) are not scaled: they are what the test proves.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

SCALE_ENV = "ORBMCP_TEST_TIMEOUT_SCALE"
MAX_SCALE = 100.0


def read_scale(environ: Mapping[str, str]) -> float:
    """The scale ``environ`` asks for (1 when unset); a bad value stops the run with one line."""
    raw = environ.get(SCALE_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        scale = float(raw)
    except ValueError:
        scale = math.nan
    if not (math.isfinite(scale) and 0 < scale <= MAX_SCALE):
        raise ValueError(f"{SCALE_ENV}={raw!r}: expected a number above 0 and at most {MAX_SCALE:g}, e.g. 2")
    return scale


SCALE = read_scale(os.environ)


def scaled(seconds: float) -> float:
    """``seconds`` times the suite's timeout scale."""
    return seconds * SCALE


# The hang guard of a wait on something that will happen (a reply, a process's exit, a line).
HANG_GUARD_S = scaled(30.0)
# A whole command line, a daemon start or a real agent: each may start several servers in turn.
LONG_GUARD_S = scaled(60.0)
# ``timeoutMs`` of the servers in a test's config (orbmcp's default is 10 s: a Python server that
# imports the SDK on a machine with two busy loops beside the suite has missed it).
CONNECT_TIMEOUT_MS = round(scaled(60.0) * 1000)


def generous(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A server entry with the suite's connect timeout, unless it states its own (a test whose
    subject is the timeout)."""
    if "timeoutMs" in entry or not ("command" in entry or "url" in entry):
        return dict(entry)
    return {**entry, "timeoutMs": CONNECT_TIMEOUT_MS}


def generous_servers(servers: Mapping[str, Any]) -> dict[str, Any]:
    """Every entry of an ``mcpServers`` object through ``generous`` (non-objects kept as they are:
    a test may write a bad entry on purpose)."""
    return {name: generous(entry) if isinstance(entry, Mapping) else entry for name, entry in servers.items()}
