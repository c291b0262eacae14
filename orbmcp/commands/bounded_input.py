"""Reading what a person hands a command, bounded: stdin and ``k=@FILE`` arguments.

At most ``ORBMCP_MAX_INPUT_MIB`` (16 MiB by default) per input, read in chunks, so a
``/dev/zero`` or a file of gigabytes is refused without being held; a regular file larger than
the limit is refused by its size, unread. Reads run in a thread of their own that a cancelled
command abandons: a FIFO nobody writes to must not keep Ctrl-C or SIGTERM from ending it.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

from orbmcp import environment
from orbmcp.errors import UsageError

_INPUT_CHUNK = 1 << 16
T = TypeVar("T")


def read_limited(read: Callable[[int], bytes], limit: int, stop: threading.Event | None = None) -> bytes:
    """What ``read(n)`` yields until its end, in chunks, but never more than ``limit + 1``
    bytes: a caller that gets more than ``limit`` knows the input is too large without having
    held it all (a ``/dev/zero`` never ends). ``stop`` set by another thread ends the read at
    the next chunk."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit and not (stop is not None and stop.is_set()):
        chunk = read(min(_INPUT_CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def too_large(what: str, limit: int, *, reason: str) -> UsageError:
    return UsageError(
        f"{what} is larger than {limit // (1024 * 1024)} MiB",
        hint="raise the limit with ORBMCP_MAX_INPUT_MIB=N (MiB)",
        reason=reason,
    )


class _FileTooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit // (1024 * 1024)} MiB")
        self.limit = limit


def _read_capped_file(path: str, limit: int, stop: threading.Event | None = None) -> str:
    """A file's UTF-8 text, refused unread when it says it is larger than ``limit``."""
    fd = os.open(os.path.expanduser(path), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise _FileTooLarge(limit)
        data = read_limited(partial(os.read, fd), limit, stop)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _FileTooLarge(limit)
    return data.decode("utf-8")


def read_text_file(path: str) -> str:
    return _read_capped_file(path, environment.max_input_bytes())


def file_arguments(tokens: Sequence[str]) -> dict[str, str]:
    """The files ``k=@FILE`` and ``k:=@FILE`` tokens name, each with the first key naming it."""
    files: dict[str, str] = {}
    for token in tokens:
        key, sep, raw = token.partition("=")
        if sep and raw.startswith("@") and (key.endswith(":") or not raw.startswith("@@")) and raw[1:]:
            files.setdefault(raw[1:], key.removesuffix(":"))
    return files


async def read_in_thread(read: Callable[[threading.Event], T]) -> T:
    """``read(stop)`` in a daemon thread of its own; on cancellation ``stop`` is set and the
    thread abandoned.

    Not anyio's worker threads: those are joined at interpreter exit, so a read blocked on a pipe
    nobody writes would keep a command that SIGTERM ended from exiting.
    """
    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    stop = threading.Event()
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            outcome.append((True, read(stop)))
        except BaseException as exc:
            outcome.append((False, exc))
        try:
            anyio.from_thread.run_sync(done.set, token=token)
        except Exception:
            pass  # the event loop is gone: nobody is waiting any more

    threading.Thread(target=run, name="orbmcp input reader", daemon=True).start()
    try:
        await done.wait()
    finally:
        stop.set()
    ok, value = outcome[0]
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


async def read_argument_files(tokens: Sequence[str], *, limit: int) -> Callable[[str], str]:
    """Every ``@FILE`` of ``tokens`` read once, at most ``limit`` bytes each, in a worker thread:
    a FIFO nobody writes to or a ``/dev/zero`` must not keep Ctrl-C or SIGTERM from ending the
    command. Returns the ``read_file`` for ``parse_call_arguments``."""
    out: dict[str, str] = {}
    for path, key in file_arguments(tokens).items():
        try:
            out[path] = await read_in_thread(partial(_read_capped_file, path, limit))
        except _FileTooLarge:
            raise too_large(f"argument '{key}': file '{path}'", limit, reason="file_too_large") from None
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UsageError(f"argument '{key}': cannot read file '{path}': {reason}") from exc

    def read_file(path: str) -> str:
        return out[path] if path in out else _read_capped_file(path, limit)

    return read_file
