"""Where a shell command's output goes and its questions are asked: a ``Console``.

One-shot, that is this process's own stdin/stdout/stderr. In the session daemon it is the
terminal of the client that sent the command: writes become frames to the client, a question
waits for the client's answer, and the render decisions (a terminal or a pipe, the width,
``NO_COLOR``, ``TERM``) are the client's. Everything the shell front prints or reads goes through
one of these, so the daemon prints exactly what a one-shot run prints.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from orbmcp import environment

if TYPE_CHECKING:
    from orbmcp.text import TextSink

# Input helpers are imported where used: --help and --version make a console too.


@dataclass
class Console:
    out: TextSink
    err: TextSink
    stdout_isatty: bool
    stderr_isatty: bool
    stdin_isatty: bool
    env: Mapping[str, str]
    columns: int | None = None
    # One line typed by the person (prompts); blocking, called from a worker thread or the
    # main thread, never on the daemon's event loop. None: no answer (closed stdin).
    readline: Callable[[], str | None] = field(default=lambda: None)
    # The whole of stdin, for ``call -``; None when there is none.
    read_stdin: Callable[[], Awaitable[str | None]] | None = None
    # Open a URL in the person's browser; False when it could not.
    open_url: Callable[[str], bool] = field(default=lambda url: False)
    remote: bool = False  # the daemon's view of a client's terminal

    def write_out(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def write_err(self, text: str) -> None:
        self.err.write(text)
        self.err.flush()


def isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Std:
    """``sys.stdout``/``sys.stderr`` as they are at each write (tests and redirections swap them)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _stream(self) -> Any:
        return getattr(sys, self.name)

    def write(self, text: str, /) -> Any:
        return self._stream().write(text)

    def flush(self) -> Any:
        return self._stream().flush()

    def isatty(self) -> bool:
        return isatty(self._stream())


class LocalConsole(Console):
    """This process's own terminal (or pipes), looked up at each use."""

    def __init__(self) -> None:
        super().__init__(
            out=_Std("stdout"),
            err=_Std("stderr"),
            stdout_isatty=False,
            stderr_isatty=False,
            stdin_isatty=False,
            env=os.environ,
            readline=_local_readline,
            read_stdin=_local_read_stdin,
            open_url=_local_open_url,
        )

    @property
    def stdout_isatty(self) -> bool:
        return isatty(sys.stdout)

    @stdout_isatty.setter
    def stdout_isatty(self, value: bool) -> None:
        pass

    @property
    def stderr_isatty(self) -> bool:
        return isatty(sys.stderr)

    @stderr_isatty.setter
    def stderr_isatty(self, value: bool) -> None:
        pass

    @property
    def stdin_isatty(self) -> bool:
        return isatty(sys.stdin)

    @stdin_isatty.setter
    def stdin_isatty(self, value: bool) -> None:
        pass


def _local_readline() -> str | None:
    """A line from stdin, or None when stdin is closed, at its end, or unreadable."""
    try:
        line = sys.stdin.readline()
    except (OSError, ValueError, AttributeError):
        return None
    return line if line else None


async def _local_read_stdin() -> str | None:
    """Stdin for ``call -``: read in chunks, in a worker thread, up to ``ORBMCP_MAX_INPUT_MIB``.

    Abandoned on cancel, and told to stop at its next chunk: Ctrl-C or SIGTERM while waiting for
    input must not hang on a blocked read (nor the exit after it), and ``< /dev/zero`` must not
    grow until the OOM killer ends it. More than the limit is a usage error (exit 2).
    """

    from orbmcp.commands.bounded_input import read_in_thread, read_limited, too_large

    stream = sys.stdin
    if stream is None:
        return None
    read = _raw_reader(stream)
    if read is None:
        return None
    limit = environment.max_input_bytes()
    try:
        data = await read_in_thread(partial(read_limited, read, limit))
    except (OSError, ValueError):
        return None
    if len(data) > limit:
        raise too_large("stdin ('-')", limit, reason="stdin_too_large")
    return data.decode("utf-8", "replace")


def _raw_reader(stream: Any) -> Callable[[int], bytes] | None:
    """Reads of the stream's file descriptor itself; the buffered reader's only where there is
    none (a test's in-memory stdin). A thread blocked in the buffered reader would hold its lock,
    and the interpreter aborts at exit when it cannot take that lock."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        binary = getattr(stream, "buffer", None)
        read: Callable[[int], bytes] | None = getattr(binary, "read", None)
        return read
    return lambda size: os.read(fd, size)


def _local_open_url(url: str) -> bool:
    from orbmcp.auth.urlpolicy import open_in_browser

    return open_in_browser(url)


def local_console() -> Console:
    """This process's own terminal (or pipes)."""
    return LocalConsole()


def silence_local_stdout() -> None:
    """`orbmcp tools | head`: the reader left; further writes must not raise."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
