"""stdio: a server process orbmcp spawned, JSON-RPC over its stdin and stdout pipes.

Why not ``mcp.client.stdio.stdio_client``: it spawns the server itself, after ``import mcp``
(~0.7 s). orbmcp spawns first and imports the SDK while the server boots, so it needs an adapter
that frames JSON-RPC over pipes it does not own. Compared with the SDK's framing this one also
caps a line's size (a server that never writes a newline cannot eat the client's memory), skips
non-JSON noise instead of handing the session an exception per line, and can bound the
``server/discover`` probe of one connection (see ``orbmcp.core.wire.era``). Beside the session, a
``RawChannel`` may relay ``tools/call`` lines raw (``orbmcp.core.wire.raw_channel``).

Connect-time only: imports ``mcp`` at the top.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager, suppress

import anyio
import anyio.abc
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from orbmcp.config.transports import STDIO, TransportKind
from orbmcp.core.processes.pipes import PipeSendStream
from orbmcp.core.wire.flood import NotificationThrottle, notification_method
from orbmcp.core.wire.lines import OverlongLine, read_lines
from orbmcp.core.wire.raw_channel import RawChannel
from orbmcp.core.wire.transports.base import DEFAULT_MAX_LINE_BYTES, Dial, Opened, decode
from orbmcp.errors import ConnectionFailed
from orbmcp.log import get_logger

__all__ = ["FatalHook", "GarbageHook", "LineTooLong", "StdioTransport", "stdio_pipe_transport"]

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


@asynccontextmanager
async def stdio_pipe_transport(
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
) -> AsyncIterator[TransportStreams]:
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

    ``raw`` (``raw_channel.RawChannel``) may write whole lines to stdin beside the session, and is
    handed the lines that answer its own requests before the SDK parses anything.
    """
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
        message, garbage = decode(line)
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
                    if not line.strip():
                        continue
                    if (item := parse(line)) is not None:
                        if not await deliver(item):
                            return
                        if raw is not None:
                            raw.sdk_behind = True
                    elif raw is not None and raw.held:
                        # The SDK takes the barrier once it has dispatched the lines before it.
                        delivered = await deliver(_BARRIER)
                        raw.release()
                        if not delivered:
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
        send_now = stdin.send_nowait if isinstance(stdin, PipeSendStream) else None
        raw.attach(stdin.send, report_garbage, send_now)
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


# An answer to an id nobody waits for: the SDK's dispatcher drops it (see ``RawChannel.held``).
_BARRIER = SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id="orbmcp-barrier", result={}))


def _line_too_long(server: str, limit: int) -> LineTooLong:
    return LineTooLong(
        f"server '{server}' sent a line longer than {limit} bytes",
        server=server,
        hint="the server is not speaking newline-delimited JSON-RPC on stdout",
        reason="response_too_large",
    )


class StdioTransport:
    """The spawned server's pipes (``Dial.process``), with a raw channel for relayed calls."""

    kind: TransportKind = STDIO
    throttles_itself = True  # notifications are thinned before they are parsed

    async def open(self, dial: Dial) -> Opened:
        proc = dial.process
        assert proc is not None, "a stdio server is spawned before its transport opens"
        cfg, warn, lost = dial.cfg, dial.warn, dial.lost

        def garbage(line: str) -> None:
            warn(f"skipped a non-JSON line from stdout: {line[:200]}")

        raw = RawChannel(cfg.name)
        transport = stdio_pipe_transport(
            proc.stdin,
            proc.stdout,
            server=cfg.name,
            on_garbage=garbage,
            discover_timeout_s=dial.probe_timeout,
            throttle=dial.throttle,
            on_fatal=lambda error: lost(error.template, error.reason),
            raw=raw,
        )
        return Opened(transport, raw)
