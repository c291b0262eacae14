"""The daemon clients' signal handling: Ctrl-C, SIGTERM and SIGHUP while a command or serve runs
through the session daemon (stdlib only: the warm path imports nothing heavy)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType


@contextlib.contextmanager
def signals_handled_by(handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP go to ``handler`` inside the block (in the main thread only)."""
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError):  # not the main thread
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
