"""Frames on an anyio byte stream (the daemon's side of ``protocol``): bounded reads, queued writes.

``FrameReader`` reads whole frames and raises ``protocol.ProtocolError`` on an oversized, truncated
or malformed one. ``FrameWriter`` queues frames from synchronous code (a renderer writing output,
a progress bar) and a task sends them in order; closing it flushes what is queued.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
from anyio.abc import ByteStream
from anyio.streams.buffered import BufferedByteReceiveStream

from orbmcp.daemon import protocol

_CLOSED = (anyio.IncompleteRead, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


class FrameReader:
    def __init__(self, stream: ByteStream) -> None:
        self._buffered = BufferedByteReceiveStream(stream)

    @property
    def raw(self) -> BufferedByteReceiveStream:
        """The bytes after the last frame read, for a connection that stops speaking frames
        (``serve``): whatever the reader has buffered comes first."""
        return self._buffered

    async def receive(self) -> dict[str, Any] | None:
        """The next frame; None when the peer closed the connection between frames."""
        try:
            header = await self._buffered.receive_exactly(protocol.HEADER_SIZE)
        except (
            anyio.IncompleteRead,
            anyio.EndOfStream,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
        ):
            return None
        length = protocol.frame_length(header)
        try:
            body = await self._buffered.receive_exactly(length)
        except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError) as exc:
            raise protocol.ProtocolError("connection closed mid-frame") from exc
        return protocol.decode_body(body)


# Text for the client's terminal goes in frames of at most this many characters: JSON escapes a
# character to at most 6 bytes, so a piece is always far under ``protocol.MAX_FRAME``, and output of
# any size (a 15 MB ``--json`` answer) reaches the client whole, in order.
OUTPUT_PIECE_CHARS = 1024 * 1024
assert OUTPUT_PIECE_CHARS * 6 + 64 < protocol.MAX_FRAME


class FrameWriter:
    """Frames in order, from any code on the event loop thread (``send_nowait``) or a task."""

    def __init__(self, stream: ByteStream) -> None:
        self._stream = stream
        self._send, self._receive = anyio.create_memory_object_stream[bytes](math.inf)
        self.broken = False
        self._finished = anyio.Event()

    def send_nowait(self, message: dict[str, Any]) -> None:
        if self.broken:
            return
        try:
            self._send.send_nowait(protocol.encode(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.broken = True

    def send_text(self, kind: str, text: str) -> None:
        """Text for the client's stdout or stderr (``kind``), in as many frames as it takes."""
        for start in range(0, len(text), OUTPUT_PIECE_CHARS):
            self.send_nowait({"t": kind, "data": text[start : start + OUTPUT_PIECE_CHARS]})

    async def run(self) -> None:
        """Send queued frames until ``close``; a client that went away marks the writer broken."""
        try:
            async with self._receive:
                async for data in self._receive:
                    if self.broken:
                        continue
                    try:
                        await self._stream.send(data)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        self.broken = True
        finally:
            self._finished.set()

    def close(self) -> None:
        self._send.close()

    async def drain(self) -> None:
        """Close, and return once every queued frame is sent: the stream is then free for raw
        bytes (``serve``)."""
        self.close()
        await self._finished.wait()
