"""The parent's ends of a spawned server's pipes, as anyio byte streams over plain non-blocking fds.

Each fd is closed exactly once, by whoever detaches or closes the stream first; a reader woken
by a close never reads a recycled fd number. Nothing here knows about processes.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream

READ_CHUNK = 65536


def close_fd(fd: int) -> None:
    """Close ``fd`` if it is one (>= 0), ignoring an fd that is already gone."""
    if fd >= 0:
        with suppress(OSError):
            os.close(fd)


class PipeReceiveStream(ByteReceiveStream):
    """The parent's non-blocking read end of a pipe.

    Every wait is followed by a check that the fd is still ours: a close may happen while a
    reader is between its wake-up and its ``os.read``, and the fd number may already belong
    to another pipe by then.

    On asyncio the fd's reader is registered with the loop once and stays registered while the
    stream is read, instead of ``anyio.wait_readable`` adding and removing it around every wait
    (a relayed call waits on two pipes; each registration is a system call and a selector
    update). The loop's callback reads what came and hands it to the waiting reader, so the fd
    is drained before the loop polls again: a level-triggered fd left readable would wake the
    loop once more for nothing. What comes while nobody waits is read once and kept for the next
    ``receive``; after that the fd is unregistered until the next wait.
    """

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._loop: asyncio.AbstractEventLoop | None = None  # where the fd's reader is registered
        self._ready: asyncio.Future[bytes | None] | None = None  # the waiting reader's bytes
        self._kept: bytes | None = None  # read by the callback, not yet received

    async def receive(self, max_bytes: int = READ_CHUNK) -> bytes:
        # Read first, wait only when the pipe is empty: a wait already yields to the event loop,
        # and a checkpoint on top of it would cost a relayed message one more trip round it.
        waited = False
        while True:
            fd = self._fd
            if fd < 0:
                raise anyio.ClosedResourceError
            data = self._kept
            if data is not None:
                self._kept = data[max_bytes:] or None
                data = data[:max_bytes]
            else:
                try:
                    data = os.read(fd, max_bytes)
                except BlockingIOError:
                    waited = True
                    got = await self._readable(fd)
                    if got is None:
                        continue
                    self._kept = got[max_bytes:] or None
                    data = got[:max_bytes]
                except OSError as exc:
                    raise anyio.BrokenResourceError from exc
            if not waited:
                # Shielded: the bytes are read, and a cancellation here would lose them.
                await anyio.lowlevel.cancel_shielded_checkpoint()
            if not data:
                raise anyio.EndOfStream
            return data

    async def _readable(self, fd: int) -> bytes | None:
        """What the loop's callback read once ``fd`` became readable (None: look again)."""
        loop = asyncio.get_running_loop()  # orbmcp runs on anyio's asyncio backend only
        if self._loop is not loop:
            self._unregister()
            loop.add_reader(fd, self._on_readable)
            self._loop = loop
        ready: asyncio.Future[bytes | None] = loop.create_future()
        self._ready = ready
        try:
            return await ready
        except anyio.get_cancelled_exc_class():
            if ready.done() and not ready.cancelled():
                self._kept = ready.result()  # read for a reader cancelled since: the next one's
            raise
        finally:
            self._ready = None

    def _on_readable(self) -> None:
        ready = self._ready
        if ready is not None and ready.done():
            return  # the reader has its bytes and has not run yet
        if ready is None and self._kept is not None:
            self._unregister()  # nobody waits and a chunk is kept: read no more until a wait
            return
        try:
            data = os.read(self._fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            self._unregister()
            if ready is not None:
                ready.set_result(None)  # the reader reads the fd itself and meets the error
            return
        if ready is not None:
            ready.set_result(data)
        else:
            self._kept = data

    def _unregister(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and self._fd >= 0 and not loop.is_closed():
            loop.remove_reader(self._fd)

    def read_nowait(self, limit: int) -> bytes:
        """Whatever is buffered right now, up to ``limit`` bytes, without waiting."""
        kept, self._kept = self._kept or b"", None
        chunks: list[bytes] = [kept[:limit]]
        total = len(chunks[0])
        while self._fd >= 0 and total < limit:
            try:
                data = os.read(self._fd, min(READ_CHUNK, limit - total))
            except OSError:  # BlockingIOError: nothing buffered; anything else: nothing to read
                break
            if not data:
                break
            chunks.append(data)
            total += len(data)
        return b"".join(chunks)

    def detach(self) -> int:
        """Close the stream for its users but hand the fd to the caller (-1 if already closed)."""
        self._unregister()
        fd, self._fd = self._fd, -1
        self._kept = None
        ready = self._ready
        if ready is not None and not ready.done():
            ready.set_result(None)  # the waiting reader wakes, finds the fd gone and stops
        if fd >= 0:
            anyio.notify_closing(fd)
        return fd

    def close_now(self) -> None:
        close_fd(self.detach())

    async def aclose(self) -> None:
        self.close_now()
        await anyio.lowlevel.checkpoint()


class PipeSendStream(ByteSendStream):
    """The parent's non-blocking write end of a pipe; each ``send`` lands whole and in order.

    A ``send`` the pipe takes at once returns without yielding to the event loop (on the hot path
    of a relay every trip round it costs): its callers' loops yield elsewhere (on what they read).
    ``send_nowait`` writes from code that cannot wait (a reader handing an answer on); what the
    pipe did not take of it goes out first on the next ``send``.
    """

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._lock = anyio.Lock()
        self._broken = False
        self._rest = b""  # what the pipe did not take of a ``send_nowait``

    def send_nowait(self, item: bytes) -> bool:
        """Write ``item`` now, without waiting, when no ``send`` is under way and the pipe takes
        some of it at once (the rest is the next ``send``'s to finish); False: nothing written."""
        fd = self._fd
        if self._lock.locked() or self._rest or self._broken or fd < 0:
            return False
        try:
            written = os.write(fd, item)
        except BlockingIOError:
            return False
        except OSError:  # EPIPE: the reader is gone; the next ``send`` says so
            self._broken = True
            return False
        self._rest = item[written:]
        return True

    async def send(self, item: bytes) -> None:
        lock = self._lock
        if lock.locked():
            await lock.acquire()
        else:
            # No other sender: taken without a trip round the event loop. A message the pipe takes
            # at once is then written without any; only a full pipe waits (holding the lock).
            lock.acquire_nowait()
        try:
            carried = bool(self._rest)  # a message of ``send_nowait`` is half on the wire
            if carried:
                item, self._rest = self._rest + item, b""
            view = memoryview(item)
            while view:
                fd = self._fd
                if fd < 0:
                    raise anyio.ClosedResourceError
                if self._broken:
                    raise anyio.BrokenResourceError
                try:
                    written = os.write(fd, view)
                except BlockingIOError:
                    try:
                        await anyio.wait_writable(fd)
                    except anyio.get_cancelled_exc_class():
                        # Half a message on the wire: later messages would be misframed.
                        if carried or len(view) < len(item):
                            self._broken = True
                        raise
                    continue
                except OSError as exc:  # EPIPE: the reader is gone
                    self._broken = True
                    raise anyio.BrokenResourceError from exc
                view = view[written:]
        finally:
            lock.release()

    def close_now(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            anyio.notify_closing(fd)
            close_fd(fd)

    async def aclose(self) -> None:
        self.close_now()
        await anyio.lowlevel.checkpoint()


async def discard_until_eof(fd: int) -> None:
    """Read and drop everything from ``fd`` until EOF (the caller closes it afterwards)."""
    with suppress(OSError, anyio.ClosedResourceError):
        while True:
            try:
                if not os.read(fd, READ_CHUNK):
                    return
            except BlockingIOError:
                await anyio.wait_readable(fd)


__all__ = ["READ_CHUNK", "PipeReceiveStream", "PipeSendStream", "close_fd", "discard_until_eof"]


PIPE_BYTES = 1024 * 1024


def _widen_pipe(fd: int) -> None:
    """A 1 MiB pipe buffer (Linux; the default is 64 KiB): a ten-thousand-tool listing then
    crosses in two writes instead of twenty, each of which waits for the reader to be scheduled."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is not None:
        with suppress(OSError):  # not a pipe, or over the system's limit: keep the default
            fcntl.fcntl(fd, set_size, PIPE_BYTES)


@contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private duplicates of fd 0 and fd 1 for the wire; fd 0 reads /dev/null and fd 1 writes to
    stderr meanwhile. Restored (with their blocking mode) on the way out, when the duplicates are
    closed: streams over them must leave closing to this."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved = (os.get_blocking(wire_in), os.get_blocking(wire_out))
    for fd in (wire_in, wire_out):
        _widen_pipe(fd)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
        os.dup2(2, 1)
    finally:
        os.close(devnull)
    try:
        yield wire_in, wire_out
    finally:
        with suppress(OSError):
            os.dup2(wire_in, 0)
        with suppress(OSError):
            os.dup2(wire_out, 1)
        for fd, blocking in zip((0, 1), saved, strict=True):
            with suppress(OSError):
                os.set_blocking(fd, blocking)
        for fd in (wire_in, wire_out):
            with suppress(OSError):
                os.close(fd)
