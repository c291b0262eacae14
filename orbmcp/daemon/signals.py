"""The daemon clients' signal handling: Ctrl-C, SIGTERM and SIGHUP while a command or serve runs
through the session daemon (stdlib only: the warm path imports nothing heavy, not even
``contextlib``)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType, TracebackType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def signals_handled_by(handler: Callable[[int, FrameType | None], None]) -> HandledSignals:
    """SIGINT, SIGTERM and SIGHUP go to ``handler`` inside the block (in the main thread only)."""
    return HandledSignals(handler)


class HandledSignals:
    """The block of ``signals_handled_by``: the handlers it replaced come back at its end."""

    def __init__(self, handler: Callable[[int, FrameType | None], None]) -> None:
        self.handler = handler
        self.previous: dict[signal.Signals, Callable[[int, FrameType | None], object] | int | None] = {}

    def __enter__(self) -> None:
        for sig in SIGNALS:
            try:
                self.previous[sig] = signal.signal(sig, self.handler)
            except ValueError:  # not the main thread
                pass

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for sig, old in self.previous.items():
            signal.signal(sig, old)
