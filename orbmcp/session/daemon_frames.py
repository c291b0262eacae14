"""Frames on an anyio byte stream (the daemon's side of ``protocol``): bounded reads, queued writes.

``FrameReader`` reads whole frames and raises ``protocol.ProtocolError`` on an oversized, truncated
or malformed one. ``FrameWriter`` queues frames from synchronous code (a renderer writing output,
a progress bar) and a task sends them in order; closing it flushes what is queued.
"""

from __future__ import annotations

import tempfile
from collections import deque
from typing import Any, BinaryIO

import anyio
from anyio.abc import ByteStream
from anyio.streams.buffered import BufferedByteReceiveStream

from orbmcp import log
from orbmcp.session import daemon_protocol as protocol

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
OUTPUT_PIECE_CHARS = 256 * 1024
assert OUTPUT_PIECE_CHARS * 6 + 64 < protocol.MAX_FRAME
MEMORY_QUEUE_BYTES = 1024 * 1024
SPOOL_LIMIT_BYTES = 1024 * 1024 * 1024
SPOOL_CHUNK_BYTES = 256 * 1024


class FrameWriter:
    """Frames in order, from any code on the event loop thread (``send_nowait``) or a task.

    A client that does not read (stopped, or piped into a pager nobody scrolls) must not grow the
    daemon: at most ``memory_limit`` bytes wait in memory per connection; what follows waits in
    an unlinked temporary file in the daemon's private directory (``spool_dir``) and is sent from
    there as the client reads. Past ``spool_limit`` the client is given up on (the connection ends;
    the client says the daemon closed it).
    """

    def __init__(
        self,
        stream: ByteStream,
        *,
        spool_dir: str | None = None,
        memory_limit: int = MEMORY_QUEUE_BYTES,
        spool_limit: int = SPOOL_LIMIT_BYTES,
    ) -> None:
        self._stream = stream
        self._spool_dir = spool_dir
        self._memory_limit = memory_limit
        self._spool_limit = spool_limit
        self._queue: deque[bytes] = deque()
        self._queued = 0
        self._spool: BinaryIO | None = None
        self._spool_read = 0
        self._spool_written = 0
        self._wake = anyio.Event()
        self._closed = False
        self.broken = False
        self._finished = anyio.Event()

    @property
    def backlog(self) -> int:
        """Bytes the client has not taken yet (in memory and in the spool file)."""
        return self._queued + self._spool_written - self._spool_read

    def send_nowait(self, message: dict[str, Any]) -> None:
        if self.broken or self._closed:
            return
        data = protocol.encode(message)
        if self._spool is None and (not self._queue or self._queued + len(data) <= self._memory_limit):
            self._queue.append(data)
            self._queued += len(data)
        else:
            self._to_spool(data)
        self._wake.set()

    def _to_spool(self, data: bytes) -> None:
        if self._spool_written - self._spool_read + len(data) > self._spool_limit:
            log.log_event("daemon.client_not_reading", level="warn", count=self.backlog)
            self.broken = True
            self._drop_spool()
            self._queue.clear()
            self._queued = 0
            return
        try:
            if self._spool is None:
                self._spool = tempfile.TemporaryFile(dir=self._spool_dir)  # noqa: SIM115 - closed by the writer
            self._spool.seek(self._spool_written)
            self._spool.write(data)
            self._spool_written += len(data)
        except OSError as exc:  # no disk, no descriptor: the frames wait in memory instead
            log.log_event("daemon.spool_failed", level="warn", error=exc)
            self._queue.append(data)
            self._queued += len(data)

    def _drop_spool(self) -> None:
        if self._spool is not None:
            self._spool.close()
        self._spool, self._spool_read, self._spool_written = None, 0, 0

    def _next_chunk(self) -> bytes | None:
        """The next bytes to send, in order: the memory queue first, then the spool."""
        if self._queue:
            data = self._queue.popleft()
            self._queued -= len(data)
            return data
        if self._spool is not None:
            self._spool.seek(self._spool_read)
            data = self._spool.read(SPOOL_CHUNK_BYTES)
            self._spool_read += len(data)
            if self._spool_read >= self._spool_written:
                self._drop_spool()  # all sent: later frames may wait in memory again
            return data or None
        return None

    async def run(self) -> None:
        """Send queued frames until ``close``; a client that went away marks the writer broken."""
        try:
            while True:
                data = self._next_chunk()
                if data is None:
                    if self._closed or self.broken:
                        return
                    self._wake = anyio.Event()
                    await self._wake.wait()
                    continue
                try:
                    await self._stream.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    self.broken = True
                    self._queue.clear()
                    self._queued = 0
                    self._drop_spool()
        finally:
            self._drop_spool()
            self._finished.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    async def drain(self) -> None:
        """Close, and return once every queued frame is sent: the stream is then free for raw
        bytes (``serve``)."""
        self.close()
        await self._finished.wait()

    def send_text(self, kind: str, text: str) -> None:
        """Text for the client's stdout or stderr (``kind``), in as many frames as it takes."""
        for start in range(0, len(text), OUTPUT_PIECE_CHARS):
            self.send_nowait({"t": kind, "data": text[start : start + OUTPUT_PIECE_CHARS]})
