"""The one newline framing (``orbmcp.core.wire.lines``) over a real pipe: lines split anywhere by the
writes, CRLF, a last line without its newline, and the cap."""

from __future__ import annotations

import os

import anyio
import pytest

from orbmcp.core.processes.pipes import PipeReceiveStream
from orbmcp.core.wire.lines import OverlongLine, read_lines
from tests.timeouts import HANG_GUARD_S

pytestmark = pytest.mark.anyio


async def lines_of(writes: list[bytes], cap: int = 64) -> list[bytes]:
    read_fd, write_fd = os.pipe()
    stream = PipeReceiveStream(read_fd)
    try:
        with anyio.fail_after(HANG_GUARD_S):
            async with anyio.create_task_group() as tg:

                async def writer() -> None:
                    for data in writes:
                        os.write(write_fd, data)
                        await anyio.lowlevel.checkpoint()
                    os.close(write_fd)

                tg.start_soon(writer)
                return [line async for line in read_lines(stream, cap)]
    finally:
        stream.close_now()


async def test_lines_come_whole_however_the_writes_split_them() -> None:
    assert await lines_of([b'{"a"', b":1}\r\n\n", b'{"b":2}\n{"c"', b":3}"]) == [
        b'{"a":1}',
        b"",
        b'{"b":2}',
        b'{"c":3}',  # the last one needs no newline
    ]


async def test_a_blank_tail_is_no_line() -> None:
    assert await lines_of([b"x\n", b"  \n", b" "]) == [b"x", b"  "]


@pytest.mark.parametrize("writes", [[b"y" * 65 + b"\n"], [b"z" * 40, b"z" * 40]])
async def test_past_the_cap_the_framing_is_given_up(writes: list[bytes]) -> None:
    caught: list[BaseException] = []
    try:
        await lines_of(writes)
    except* OverlongLine as group:  # out of the writer's task group
        caught.extend(group.exceptions)
    assert len(caught) == 1 and isinstance(caught[0], OverlongLine) and caught[0].size > 64
