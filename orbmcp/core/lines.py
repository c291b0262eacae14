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


__all__ = ["READ_CHUNK", "OverlongLine", "read_lines"]
