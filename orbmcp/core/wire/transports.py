"""SDK ``Transport``s over pipes orbmcp spawned itself, Streamable HTTP and legacy SSE.

Connect-time only: imports ``mcp`` and ``httpx2`` at the top, so nothing on the CLI start-up path
may import this module.

Why not ``mcp.client.stdio.stdio_client``: it spawns the server itself, after ``import mcp``
(~0.7 s). orbmcp spawns first and imports the SDK while the server boots, so it needs an adapter
that frames JSON-RPC over pipes it does not own. Compared with the SDK's framing this one also
caps a line's size (a server that never writes a newline cannot eat the client's memory), skips
non-JSON noise instead of handing the session an exception per line, and can bound the
``server/discover`` probe of one connection (see ``orbmcp.core.wire.era``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing, asynccontextmanager, suppress

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client import Transport
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import request_within_origin, sse_within_origin
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from orbmcp.core.tooling.raw_calls import RawChannel
from orbmcp.core.wire.flood import NotificationThrottle, notification_method
from orbmcp.core.wire.lines import OverlongLine, read_lines
from orbmcp.errors import ConnectionFailed
from orbmcp.log import get_logger
from orbmcp.net.bounded import ResponseTooLarge
from orbmcp.net.http import ResponseHook, make_http_client

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "EndpointOriginMismatch",
    "FatalHook",
    "GarbageHook",
    "LineTooLong",
    "http_transport",
    "sse_transport",
    "stdio_pipe_transport",
]

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
# Tool results (images, audio) can be large; the SDK's 1 MiB SSE event cap would cut them off.
MAX_SSE_EVENT_BYTES = DEFAULT_MAX_LINE_BYTES
GARBAGE_PREVIEW_CHARS = 4096

# Same window the SDK gives its stdio writer to flush accepted messages before stdin closes.
_WRITER_FLUSH_S = 0.5
DISCOVER_METHOD = "server/discover"

GarbageHook = Callable[[str], None]
"""Receives a skipped stdout line (decoded leniently, at most GARBAGE_PREVIEW_CHARS characters)."""
FatalHook = Callable[[ConnectionFailed], None]
"""Told why the transport is about to kill the connection, before anything fails because of it."""

logger = get_logger(__name__)


class LineTooLong(ConnectionFailed):
    """The server wrote more than ``max_line_bytes`` without a newline; the connection is dead."""


class EndpointOriginMismatch(ValueError):
    """A legacy SSE server named a message endpoint on another origin; nothing was sent there."""

    def __init__(self, endpoint_origin: str) -> None:
        super().__init__(f"endpoint event points to another origin ({endpoint_origin})")
        self.endpoint_origin = endpoint_origin


@asynccontextmanager
async def _stdio_pipe_streams(
    stdin: anyio.abc.ByteSendStream,
    stdout: anyio.abc.ByteReceiveStream,
    *,
    server: str,
    max_line_bytes: int,
    on_garbage: GarbageHook | None,
    discover_timeout_s: float | None,
    throttle: NotificationThrottle | None = None,
    on_fatal: FatalHook | None = None,
    raw: RawChannel | None = None,
) -> AsyncIterator[TransportStreams]:
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    # id -> cancel scope of the timer that answers an unanswered server/discover for the server.
    probes: dict[types.RequestId, anyio.CancelScope] = {}

    def report_garbage(line: bytes) -> None:
        preview = line[: GARBAGE_PREVIEW_CHARS * 4].decode("utf-8", errors="replace")[:GARBAGE_PREVIEW_CHARS]
        if on_garbage is None:
            logger.debug("server %r: skipped a non-JSON-RPC stdout line (%d bytes)", server, len(line))
            return
        try:
            on_garbage(preview)
        except Exception:
            logger.debug("on_garbage callback raised", exc_info=True)

    def parse(line: bytes) -> SessionMessage | None:
        if throttle is not None and (method := notification_method(line)) and not throttle.admit(method):
            return None  # a flood: dropped before the SDK's parser
        if raw is not None and raw.take(line):
            return None  # an answer to (or progress of) a call relayed raw: that call has it
        message, garbage = _decode(line)
        if garbage:
            report_garbage(line)
        if message is not None:
            reply = message.message
            if isinstance(reply, types.JSONRPCResponse | types.JSONRPCError) and reply.id is not None:
                timer = probes.pop(reply.id, None)
                if timer is not None:
                    timer.cancel()
        return message

    def fatal(error: ConnectionFailed) -> ConnectionFailed:
        # Told first: requests in flight fail with a vague "connection closed" once the session
        # is torn down, and whoever reports them must know the real cause by then.
        if on_fatal is not None:
            try:
                on_fatal(error)
            except Exception:
                logger.debug("on_fatal callback raised", exc_info=True)
        if raw is not None:
            raw.close()
        return error

    async def deliver(item: SessionMessage) -> bool:
        try:
            await read_writer.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False  # the session is gone
        return True

    async def reader() -> None:
        # read_writer is closed on EOF only: after LineTooLong the cancellation must reach the
        # session before an EOF could turn pending requests into a vaguer "Connection closed".
        async with aclosing(read_lines(stdout, max_line_bytes)) as lines:
            try:
                async for line in lines:
                    if line.strip() and (item := parse(line)) is not None and not await deliver(item):
                        return
            except OverlongLine:
                raise fatal(_line_too_long(server, max_line_bytes)) from None
        if raw is not None:
            raw.close()
        read_writer.close()

    async def answer_probe_timeout(request_id: types.RequestId, scope: anyio.CancelScope) -> None:
        with scope:
            await anyio.sleep(discover_timeout_s or 0)
            probes.pop(request_id, None)
            # The SDK treats any JSON-RPC error to the probe as "legacy server": fall back now
            # instead of after its own 10 s. A late real answer is dropped by the dispatcher.
            timeout = types.JSONRPCError(
                jsonrpc="2.0",
                id=request_id,
                error=types.ErrorData(
                    code=types.REQUEST_TIMEOUT,
                    message=f"{DISCOVER_METHOD} unanswered after {discover_timeout_s:g} s",
                ),
            )
            await deliver(SessionMessage(timeout))

    async def writer(tg: anyio.abc.TaskGroup) -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    message = session_message.message
                    # JSON serialisation escapes control characters, so this is exactly one line.
                    data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                    if (
                        discover_timeout_s is not None
                        and isinstance(message, types.JSONRPCRequest)
                        and message.method == DISCOVER_METHOD
                    ):
                        scope = anyio.CancelScope()
                        probes[message.id] = scope
                        tg.start_soon(answer_probe_timeout, message.id, scope)
                    await stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # stdin is gone, so the server is as good as dead: end the read stream so pending
            # requests fail now ("Connection closed") instead of waiting for their timeout.
            if raw is not None:
                raw.close()
            await read_writer.aclose()
        finally:
            writer_done.set()

    if raw is not None:
        raw.attach(stdin.send, report_garbage)
    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer, tg)
        try:
            yield read_stream, write_stream
        finally:
            if raw is not None:
                raw.close()
            with anyio.CancelScope(shield=True):
                write_stream.close()
                with anyio.move_on_after(_WRITER_FLUSH_S):
                    await writer_done.wait()
                # The caller owns the process: closing stdin is the polite "please exit"; stopping
                # it (and draining stdout) is the caller's job.
                with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stdin.aclose()
                read_stream.close()
                read_writer.close()
                write_reader.close()
            tg.cancel_scope.cancel()


def _line_too_long(server: str, limit: int) -> LineTooLong:
    return LineTooLong(
        f"server '{server}' sent a line longer than {limit} bytes",
        server=server,
        hint="the server is not speaking newline-delimited JSON-RPC on stdout",
        reason="response_too_large",
    )


def _decode(raw: bytes) -> tuple[SessionMessage | None, bool]:
    """One JSON-RPC message from one line/event, and whether the input was garbage.

    Garbage that looks like an answer to one of our requests is turned into an error answering
    it; otherwise that request would wait its full timeout for a response that already came.
    Anything else (noise, a malformed server request) is only skipped.
    """
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(raw, by_name=False)), False
    except ValidationError:
        pass
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None, True
    if not isinstance(obj, dict) or "method" in obj or not ("result" in obj or "error" in obj):
        return None, True
    request_id = obj.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None, True
    error = types.ErrorData(code=types.INTERNAL_ERROR, message="server sent a malformed JSON-RPC response")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)), True


def stdio_pipe_transport(
    stdin: anyio.abc.ByteSendStream,
    stdout: anyio.abc.ByteReceiveStream,
    *,
    server: str,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    on_garbage: GarbageHook | None = None,
    discover_timeout_s: float | None = None,
    throttle: NotificationThrottle | None = None,
    on_fatal: FatalHook | None = None,
    raw: RawChannel | None = None,
) -> Transport:
    """A ``Transport`` for ``mcp.Client`` over a server process's stdin/stdout pipes.

    Newline-delimited JSON-RPC in UTF-8. Lines that are not JSON-RPC are skipped and passed to
    ``on_garbage`` (the caller redacts and truncates further); the session continues. A line
    longer than ``max_line_bytes`` kills the connection: :class:`LineTooLong` is raised from the
    transport, which cancels the ``Client`` body and leaves ``async with Client`` as an
    ``ExceptionGroup`` (use ``era.unwrap_exception``). EOF on stdout ends the read stream, so
    pending requests fail with ``MCPError(-32000)``.

    ``discover_timeout_s`` answers an unanswered ``server/discover`` with a timeout error after
    that long, for this connection only, so ``mode="auto"`` falls back to ``initialize`` early.
    Notifications ``throttle`` does not admit are dropped before they are parsed.

    ``on_fatal`` hears why the transport kills the connection (a line over the cap) before the
    session fails. The transport never owns the process: leaving it closes stdin only.

    ``raw`` (``raw_calls.RawChannel``) may write whole lines to stdin beside the session, and is
    handed the lines that answer its own requests before the SDK parses anything.
    """
    return _stdio_pipe_streams(
        stdin,
        stdout,
        server=server,
        max_line_bytes=max_line_bytes,
        on_garbage=on_garbage,
        discover_timeout_s=discover_timeout_s,
        throttle=throttle,
        on_fatal=on_fatal,
        raw=raw,
    )


@asynccontextmanager
async def _http_streams(
    url: str,
    *,
    headers: Mapping[str, str] | None,
    auth: httpx2.Auth | None,
    timeout_s: float,
    request_timeout_s: float,
    on_response: ResponseHook | None,
) -> AsyncIterator[TransportStreams]:
    client = make_http_client(
        headers=headers,
        auth=auth,
        timeout_s=timeout_s,
        request_timeout_s=request_timeout_s,
        on_response=on_response,
    )
    async with (
        client,
        streamable_http_client(
            url, http_client=client, terminate_on_close=True, max_sse_event_size=MAX_SSE_EVENT_BYTES
        ) as streams,
    ):
        yield streams


def http_transport(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
    timeout_s: float,
    request_timeout_s: float,
    on_response: ResponseHook | None = None,
) -> Transport:
    """A Streamable HTTP ``Transport`` on an httpx2 client orbmcp creates and closes itself.

    The client has real timeouts (connect = ``timeout_s``; read never below
    ``request_timeout_s``), sends ``headers`` on every request, and reports every response to
    ``on_response``: the SDK turns 401/403/500 into one ``MCPError(-32603)``, so the hook is the
    only way to tell them apart. A 2025-era session is ended with DELETE on close.
    """
    return _http_streams(
        url,
        headers=headers,
        auth=auth,
        timeout_s=timeout_s,
        request_timeout_s=request_timeout_s,
        on_response=on_response,
    )


@asynccontextmanager
async def _sse_streams(
    url: str,
    *,
    headers: Mapping[str, str] | None,
    auth: httpx2.Auth | None,
    timeout_s: float,
    request_timeout_s: float,
    on_response: ResponseHook | None,
) -> AsyncIterator[TransportStreams]:
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
        message, garbage = _decode(event.data.encode())
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


def sse_transport(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
    timeout_s: float,
    request_timeout_s: float,
    on_response: ResponseHook | None = None,
) -> Transport:
    """A legacy HTTP+SSE (2024-11-05) ``Transport``; same client policy as :func:`http_transport`.

    An ``endpoint`` event on another origin (scheme, host, port) is refused with
    :class:`EndpointOriginMismatch` before anything is POSTed, so a server cannot redirect our
    authenticated requests. Connect errors (refused, 4xx on the GET, origin mismatch, no
    endpoint within ``timeout_s``) are raised bare, not in an ``ExceptionGroup``. A POST answered
    with a non-2xx status fails that request only. Redirects are followed only within the origin.
    """
    return _sse_streams(
        url,
        headers=headers,
        auth=auth,
        timeout_s=timeout_s,
        request_timeout_s=request_timeout_s,
        on_response=on_response,
    )
