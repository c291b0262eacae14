"""Every HTTP response body orbmcp reads is bounded, as an SSE event already is.

A server may answer with an endless ``application/json`` body (or one that claims to be
terabytes long, or a small gzip that inflates to gigabytes). ``cap_response`` is an httpx2
response hook, run before any body byte is read: it swaps the body for one that yields at most
``MAX_RESPONSE_BYTES`` of *decoded* content and then fails with ``ResponseTooLarge``, and refuses
outright a ``Content-Length`` above the cap. An event stream is left alone: it is long-lived by
design, and the SDK caps each of its events.

``ResponseTooLarge`` is an ``httpx2.StreamError``, what a body read may raise anyway: the SDK turns
it into an error answer to the one request, and the session goes on.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

import httpx2

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
_DECODE_CHUNK = 64 * 1024


class ResponseTooLarge(httpx2.StreamError):
    """A response body past the cap; nothing beyond the cap was kept."""

    def __init__(self, limit: int = MAX_RESPONSE_BYTES) -> None:
        super().__init__(f"response larger than {limit // (1024 * 1024)} MiB")
        self.limit = limit


class _Refused(httpx2.AsyncByteStream):
    """The body of a response refused for its stated length: fails at the first read."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        raise ResponseTooLarge(self._limit)
        yield b""  # pragma: no cover  # makes this an async generator

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Capped(httpx2.AsyncByteStream):
    """At most ``limit`` bytes of the body, decoded here when it is gzip or deflate so the cap
    counts what the body inflates to, not what went over the wire."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int, encoding: str | None) -> None:
        self._inner = inner
        self._limit = limit
        self._decoder: zlib._Decompress | None = None
        if encoding == "gzip":
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj(zlib.MAX_WBITS)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for raw in self._inner:
            for chunk in self._decoded(raw, total):
                total += len(chunk)
                if total > self._limit:
                    raise ResponseTooLarge(self._limit)
                yield chunk

    def _decoded(self, raw: bytes, total: int) -> list[bytes]:
        if self._decoder is None:
            return [raw]
        out: list[bytes] = []
        pending = raw
        try:
            while pending:
                # Never more than one byte past the cap per call: a bomb cannot inflate here.
                room = max(1, min(_DECODE_CHUNK, self._limit + 1 - total))
                data = self._decoder.decompress(pending, room)
                out.append(data)
                total += len(data)
                if total > self._limit:
                    break
                pending = self._decoder.unconsumed_tail
        except zlib.error as exc:
            raise httpx2.DecodingError(f"invalid compressed body: {exc}") from None
        return out

    async def aclose(self) -> None:
        await self._inner.aclose()


async def cap_response(response: httpx2.Response, limit: int = MAX_RESPONSE_BYTES) -> None:
    """The response hook: bound this response's body (see the module docstring)."""
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    stream = response.stream
    if content_type == "text/event-stream" or not isinstance(stream, httpx2.AsyncByteStream):
        return
    length = response.headers.get("content-length", "")
    if length.strip().isdigit() and int(length) > limit:
        response.stream = _Refused(stream, limit)
        return
    encodings = [e.strip().lower() for e in response.headers.get_list("content-encoding", split_commas=True)]
    encodings = [e for e in encodings if e and e != "identity"]
    if len(encodings) > 1 or (encodings and encodings[0] not in ("gzip", "deflate")):
        response.stream = _Refused(stream, limit)  # nothing we can bound the inflated size of
        return
    if encodings:
        del response.headers["content-encoding"]  # decoded here, within the cap
    response.stream = _Capped(stream, limit, encodings[0] if encodings else None)


__all__ = ["MAX_RESPONSE_BYTES", "ResponseTooLarge", "cap_response"]
