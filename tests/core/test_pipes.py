"""The read end of a spawned server's pipe (``core.processes.pipes.PipeReceiveStream``): its fd is
registered with the event loop once while it is read, not around every wait; closing it wakes a
waiting reader; readiness nobody waits for leaves nothing registered."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from orbmcp.core.processes.pipes import PipeReceiveStream, PipeSendStream, discard_until_eof
from tests.timeouts import HANG_GUARD_S

pytestmark = pytest.mark.anyio


class Registrations:
    """Counts the running loop's ``add_reader``/``remove_reader`` calls for one fd."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        self.added = self.removed = 0
        self._fd = fd
        self._add, self._remove = loop.add_reader, loop.remove_reader

    def add_reader(self, fd: int, callback: Any, *args: Any) -> None:
        self.added += fd == self._fd
        self._add(fd, callback, *args)

    def remove_reader(self, fd: int) -> bool:
        self.removed += fd == self._fd
        return self._remove(fd)


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        try:
            os.close(fd)
        except OSError:
            pass


def counted(monkeypatch: pytest.MonkeyPatch, fd: int) -> Registrations:
    loop = asyncio.get_running_loop()
    counts = Registrations(loop, fd)
    monkeypatch.setattr(loop, "add_reader", counts.add_reader)
    monkeypatch.setattr(loop, "remove_reader", counts.remove_reader)
    return counts


async def test_the_fd_is_registered_once_for_many_waits(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    read_fd, write_fd = pipe
    stream = PipeReceiveStream(os.dup(read_fd))
    counts = counted(monkeypatch, stream._fd)
    got: list[bytes] = []
    chunks, chunk = anyio.create_memory_object_stream[bytes](5)
    with anyio.fail_after(HANG_GUARD_S):
        async with anyio.create_task_group() as tg:

            async def reader() -> None:
                for _ in range(5):
                    await chunks.send(await stream.receive())

            tg.start_soon(reader)
            for n in range(5):
                await anyio.wait_all_tasks_blocked()  # the reader waits on the empty pipe
                os.write(write_fd, b"%d\n" % n)
                got.append(await chunk.receive())
    assert got == [b"%d\n" % n for n in range(5)]
    assert (counts.added, counts.removed) == (1, 0)
    fd = stream._fd
    stream.close_now()
    assert counts.removed == 1  # closing unregisters it before the fd goes
    with pytest.raises(OSError):
        os.fstat(fd)


async def test_what_comes_while_nobody_waits_is_kept_and_then_the_fd_unregistered(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    read_fd, write_fd = pipe
    stream = PipeReceiveStream(os.dup(read_fd))
    counts = counted(monkeypatch, stream._fd)
    try:
        with anyio.fail_after(HANG_GUARD_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(stream.receive)
                await anyio.wait_all_tasks_blocked()
                os.write(write_fd, b"a\n")
            os.write(write_fd, b"b\n")  # nobody waits: the loop's callback reads it and keeps it
            while stream._kept is None:
                await anyio.sleep(0)
            os.write(write_fd, b"c\n")  # more, with a chunk kept: the fd is unregistered instead
            while counts.removed == 0:
                await anyio.sleep(0)
            assert await stream.receive() == b"b\n"
            assert await stream.receive() == b"c\n"
            assert (counts.added, counts.removed) == (1, 1)
            async with anyio.create_task_group() as tg:
                tg.start_soon(stream.receive)
                await anyio.wait_all_tasks_blocked()
                os.write(write_fd, b"d\n")
            assert counts.added == 2  # the next wait registered it again
    finally:
        stream.close_now()


async def test_bytes_read_for_a_reader_cancelled_before_it_ran_go_to_the_next(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = PipeReceiveStream(os.dup(read_fd))
    try:
        with anyio.fail_after(HANG_GUARD_S):
            reader = asyncio.ensure_future(stream.receive())
            await anyio.wait_all_tasks_blocked()
            os.write(write_fd, b"kept\n")
            stream._on_readable()  # as the loop would: the bytes are the waiting reader's now
            reader.cancel()  # ... which is cancelled before it runs
            with pytest.raises(asyncio.CancelledError):
                await reader
            assert await stream.receive(3) == b"kep"
            assert stream.read_nowait(100) == b"t\n"
    finally:
        stream.close_now()


async def test_a_waiting_reader_wakes_closed_when_the_fd_is_taken(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = PipeReceiveStream(os.dup(read_fd))
    failed: list[BaseException] = []
    with anyio.fail_after(HANG_GUARD_S):
        async with anyio.create_task_group() as tg:

            async def reader() -> None:
                try:
                    await stream.receive()
                except anyio.ClosedResourceError as exc:
                    failed.append(exc)

            tg.start_soon(reader)
            await anyio.wait_all_tasks_blocked()
            fd = stream.detach()
        assert len(failed) == 1
        # The fd is left registered nowhere: anyio's own wait on it (the discard of a stopping
        # server's stdout) works, and ends at EOF.
        os.write(write_fd, b"left over\n")
        os.close(write_fd)
        await discard_until_eof(fd)
    os.close(fd)
    with pytest.raises(anyio.ClosedResourceError):
        await stream.receive()


def fill(fd: int) -> int:
    """Write into ``fd`` (non-blocking) until the pipe takes no more; the bytes written."""
    total = 0
    while True:
        try:
            total += os.write(fd, b"f" * 4096)
        except BlockingIOError:
            return total


def drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            return b"".join(chunks)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


async def test_send_nowait_writes_a_line_the_pipe_takes_at_once(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = PipeSendStream(os.dup(write_fd))
    try:
        assert stream.send_nowait(b"one\n")
        assert drain(read_fd) == b"one\n"
        filled = fill(stream._fd)
        assert not stream.send_nowait(b"two\n")  # a full pipe: nothing written
        assert len(drain(read_fd)) == filled
    finally:
        stream.close_now()


async def test_what_the_pipe_did_not_take_goes_out_first_on_the_next_send(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = PipeSendStream(os.dup(write_fd))
    try:
        filled = fill(stream._fd)
        os.set_blocking(read_fd, True)
        os.read(read_fd, 4096)  # one page free: room for part of the next line only
        line = b"L" * 20_000 + b"\n"
        assert stream.send_nowait(line)
        assert not stream.send_nowait(b"x\n")  # the rest of a line is waiting: no other line now
        got = bytearray()

        async def reader() -> None:
            while not got.endswith(b"tail\n"):
                await anyio.wait_readable(read_fd)
                got.extend(drain(read_fd))

        with anyio.fail_after(HANG_GUARD_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(reader)
                await stream.send(b"tail\n")
        assert bytes(got) == b"f" * (filled - 4096) + line + b"tail\n"
    finally:
        stream.close_now()


async def test_send_nowait_leaves_a_send_under_way_alone(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = PipeSendStream(os.dup(write_fd))
    try:
        fill(stream._fd)
        with anyio.fail_after(HANG_GUARD_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(stream.send, b"waiting\n")
                await anyio.wait_all_tasks_blocked()  # the send holds the pipe, waiting for room
                drain(read_fd)
                assert not stream.send_nowait(b"now\n")
        assert drain(read_fd) == b"waiting\n"
    finally:
        stream.close_now()


async def test_a_send_cancelled_before_the_rest_of_a_line_went_breaks_the_stream(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    stream = PipeSendStream(os.dup(write_fd))
    try:
        fill(stream._fd)
        os.set_blocking(read_fd, True)
        os.read(read_fd, 4096)
        assert stream.send_nowait(b"L" * 20_000 + b"\n")
        with anyio.move_on_after(0):  # the subject: a send that cannot finish is cancelled
            await stream.send(b"tail\n")
        with pytest.raises(anyio.BrokenResourceError):
            await stream.send(b"more\n")  # half a line is on the wire: nothing may follow it
    finally:
        stream.close_now()


async def test_send_nowait_on_a_pipe_nobody_reads_is_refused_and_the_next_send_says_so(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    stream = PipeSendStream(os.dup(write_fd))
    os.close(read_fd)
    try:
        assert not stream.send_nowait(b"lost\n")
        with pytest.raises(anyio.BrokenResourceError):
            await stream.send(b"next\n")
    finally:
        stream.close_now()
