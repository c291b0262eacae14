"""Legacy HTTP+SSE (2024-11-05): a GET opens an event stream that names the POST endpoint.

Reached when an entry says ``"transport": "sse"``, or when a Streamable HTTP URL refused that
transport (``connect``'s fallback).

Connect-time only: imports ``mcp`` and ``httpx2`` at the top.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress

import anyio
import httpx2
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.shared._httpx_utils import request_within_origin, sse_within_origin
from mcp.shared.message import SessionMessage

from orbmcp.config.transports import SSE, TransportKind
from orbmcp.core.wire.transports.base import MAX_SSE_EVENT_BYTES, Dial, Opened, decode, url_options
from orbmcp.log import get_logger
from orbmcp.net.bounded import ResponseTooLarge
from orbmcp.net.http import ResponseHook, make_http_client

__all__ = ["EndpointOriginMismatch", "SseTransport", "sse_transport"]

logger = get_logger(__name__)


class EndpointOriginMismatch(ValueError):
    """A legacy SSE server named a message endpoint on another origin; nothing was sent there."""

    def __init__(self, endpoint_origin: str) -> None:
        super().__init__(f"endpoint event points to another origin ({endpoint_origin})")
        self.endpoint_origin = endpoint_origin


@asynccontextmanager
async def sse_transport(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
    timeout_s: float,
    request_timeout_s: float,
    on_response: ResponseHook | None = None,
) -> AsyncIterator[TransportStreams]:
    """A legacy HTTP+SSE (2024-11-05) ``Transport``; same client policy as ``streamable_http.http_transport``.

    An ``endpoint`` event on another origin (scheme, host, port) is refused with
    :class:`EndpointOriginMismatch` before anything is POSTed, so a server cannot redirect our
    authenticated requests. Connect errors (refused, 4xx on the GET, origin mismatch, no
    endpoint within ``timeout_s``) are raised bare, not in an ``ExceptionGroup``. A POST answered
    with a non-2xx status fails that request only. Redirects are followed only within the origin.
    """
    # Not mcp.client.sse.sse_client: when it refuses an endpoint on another origin, its reader
    # hands the ValueError to a read stream nobody reads yet and the connect hangs (SDK 2.3.0).
    # It also drops every later message after one non-2xx POST. The protocol is small enough.
    client = make_http_client(
        headers=headers,
        auth=auth,
        timeout_s=timeout_s,
        request_timeout_s=request_timeout_s,
        on_response=on_response,
    )
    async with client, sse_within_origin(client, url, max_event_size=MAX_SSE_EVENT_BYTES) as source:
        source.response.raise_for_status()
        events = aiter(source)
        with anyio.fail_after(timeout_s):
            endpoint = await _endpoint_from(events, url)
        # Created only now: a failed connect must not leave unclosed streams behind.
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_sse_reader, events, read_writer)
            tg.start_soon(_sse_writer, client, endpoint, write_reader, read_writer)
            try:
                yield read_stream, write_stream
            finally:
                for stream in (write_stream, write_reader, read_stream, read_writer):
                    stream.close()
                tg.cancel_scope.cancel()


async def _sse_reader(
    events: AsyncIterator[httpx2.ServerSentEvent],
    read_writer: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    async for event in events:
        if event.event != "message" or not event.data:
            continue
        message, garbage = decode(event.data.encode())
        if garbage:
            logger.debug("skipped a malformed SSE message event (%d bytes)", len(event.data))
        if message is not None:
            try:
                await read_writer.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
    read_writer.close()  # the server ended the stream: the connection is over


async def _sse_writer(
    client: httpx2.AsyncClient,
    endpoint: str,
    write_reader: MemoryObjectReceiveStream[SessionMessage],
    read_writer: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    async with write_reader:
        async for session_message in write_reader:
            message = session_message.message
            body = message.model_dump(by_alias=True, mode="json", exclude_unset=True)
            try:
                response = await request_within_origin(client, "POST", endpoint, json=body)
            except ResponseTooLarge as exc:
                failure = f"message endpoint answered with a {exc}"
            else:
                if response.is_success:
                    continue
                failure = f"message endpoint answered HTTP {response.status_code}"
            if not isinstance(message, types.JSONRPCRequest):
                continue
            # The answer will never come over the event stream: fail this request now, not at its
            # timeout. The session goes on (the SDK's client stops sending after one failed POST).
            error = types.ErrorData(code=types.INTERNAL_ERROR, message=failure)
            reply = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await read_writer.send(SessionMessage(reply))


async def _endpoint_from(events: AsyncIterator[httpx2.ServerSentEvent], url: str) -> str:
    """The message endpoint announced by the first ``endpoint`` event, checked to be same-origin."""
    async for event in events:
        if event.event != "endpoint":
            continue  # nothing can be an answer yet: no request was sent
        base = httpx2.URL(url)
        endpoint = base.join(event.data.strip())
        if (endpoint.scheme, endpoint.host, endpoint.port) != (base.scheme, base.host, base.port):
            # Otherwise a server could send our authenticated POSTs to a host of its choosing.
            raise EndpointOriginMismatch(_origin(endpoint))
        return str(endpoint)
    raise httpx2.RemoteProtocolError("the SSE stream ended before its endpoint event")


def _origin(url: httpx2.URL) -> str:
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}"


class SseTransport:
    """An httpx2 client orbmcp makes, as for Streamable HTTP; the endpoint must stay same-origin."""

    kind: TransportKind = SSE
    throttles_itself = False

    async def open(self, dial: Dial) -> Opened:
        return Opened(sse_transport(**await url_options(dial)))
