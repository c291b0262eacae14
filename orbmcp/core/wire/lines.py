"""Newline-delimited framing over a byte stream: the one line reader of the stdio transport (a
server's stdout) and of serve's wire (an agent's stdin, a daemon pipe).

JSON-RPC over stdio is one message per line. A peer that writes more than the cap without a
newline is either broken or hostile; either way the framing can no longer be trusted, so the
reader stops there instead of buffering without bound.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import anyio
from anyio.abc import ByteReceiveStream

READ_CHUNK = 64 * 1024


class OverlongLine(Exception):
    """More than the cap arrived without a newline."""

    def __init__(self, size: int) -> None:
        super().__init__(f"a line of {size}+ bytes")
        self.size = size


async def read_lines(stream: ByteReceiveStream, max_line_bytes: int) -> AsyncGenerator[bytes, None]:
    """Each line of ``stream`` without its ``\\n`` (nor a ``\\r`` before it), the last one even
    without a newline, until the stream ends or breaks. Raises ``OverlongLine`` past the cap.

    Consume it under ``contextlib.aclosing``: a loop that stops early then closes it at once."""
    buffer = bytearray()
    scanned = 0  # bytes of ``buffer`` already known to hold no newline
    while True:
        try:
            chunk = await stream.receive(READ_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            break
        buffer += chunk
        start = 0
        while (newline := buffer.find(b"\n", max(start, scanned))) >= 0:
            line = bytes(buffer[start:newline]).rstrip(b"\r")
            start = newline + 1
            scanned = 0
            if len(line) > max_line_bytes:
                raise OverlongLine(len(line))
            yield line
        del buffer[:start]
        scanned = len(buffer)
        if len(buffer) > max_line_bytes:
            raise OverlongLine(len(buffer))
    if buffer.strip():
        yield bytes(buffer)  # a last message without its newline is still a message


async def read_lines_skipping(
    stream: ByteReceiveStream, max_line_bytes: int
) -> AsyncGenerator[bytes | OverlongLine, None]:
    """Like ``read_lines``, for a peer whose framing survives a long line (the agent protocol:
    a line is one request): a line over the cap is dropped as it arrives, never buffered whole,
    and an ``OverlongLine`` is yielded in its place; the lines after it are read as usual."""
    buffer = bytearray()
    scanned = 0
    skipped = -1  # bytes of the line being dropped so far; -1: not dropping one
    while True:
        try:
            chunk = await stream.receive(READ_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            break
        if skipped >= 0:
            newline = chunk.find(b"\n")
            if newline < 0:
                skipped += len(chunk)
                continue
            yield OverlongLine(skipped + newline)
            skipped = -1
            chunk = chunk[newline + 1 :]
        buffer += chunk
        start = 0
        while (newline := buffer.find(b"\n", max(start, scanned))) >= 0:
            line = bytes(buffer[start:newline]).rstrip(b"\r")
            start = newline + 1
            scanned = 0
            yield line if len(line) <= max_line_bytes else OverlongLine(len(line))
        del buffer[:start]
        scanned = len(buffer)
        if len(buffer) > max_line_bytes:
            skipped = len(buffer)
            buffer.clear()
            scanned = 0
    if skipped >= 0:
        yield OverlongLine(skipped)
    elif buffer.strip():
        yield bytes(buffer) if len(buffer) <= max_line_bytes else OverlongLine(len(buffer))


__all__ = ["READ_CHUNK", "OverlongLine", "read_lines", "read_lines_skipping"]
