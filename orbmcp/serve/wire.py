"""Newline-delimited JSON-RPC over byte streams (stdio, a daemon pipe), as the SDK's message streams.

An agent's line that is not JSON gets a parse error, one that is not JSON-RPC an invalid-request
error (with its id when it has one); the session goes on. A line longer than ``MAX_LINE_BYTES``
ends the connection: the framing can no longer be trusted.

``core.processes.pipes.claimed_stdio`` makes this process's stdin and stdout the wire.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from anyio.abc import ByteReceiveStream, ByteSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from orbmcp.core.processes.pipes import PipeSendStream
from orbmcp.core.wire.lines import OverlongLine, read_lines
from orbmcp.log import log_event

if TYPE_CHECKING:
    from orbmcp.serve.lane import FastLane

MAX_LINE_BYTES = 32 * 1024 * 1024
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class LineTooLong(Exception):
    """The agent sent more than ``MAX_LINE_BYTES`` without a newline."""


def _error_line(request_id: Any, code: int, message: str) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(body).encode() + b"\n"


@asynccontextmanager
async def message_streams(
    receive: ByteReceiveStream,
    send: ByteSendStream,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    lane: FastLane | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` of SDK ``SessionMessage``s over a byte stream pair; lines
    the ``lane`` takes are handled there (it writes on the same wire, in order)."""

    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)
    send_lock = anyio.Lock()

    async def locked_write(data: bytes) -> None:
        async with send_lock:
            await send.send(data)

    # A pipe's own send keeps each line whole and in order; other streams (a socket) refuse a
    # second concurrent send, so their writers take turns here.
    write = send.send if isinstance(send, PipeSendStream) else locked_write

    async def take(line: bytes) -> None:
        if lane is not None and lane.take(line):
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError:
            await write(_refusal(line))
            return
        await read_writer.send(SessionMessage(message))

    async def reader() -> None:
        async with read_writer, aclosing(read_lines(receive, max_line_bytes)) as lines:
            try:
                async for line in lines:
                    if line := line.strip():
                        await take(line)
            except OverlongLine as exc:
                log_event("serve.line_too_long", level="warn", count=exc.size)
                raise LineTooLong(f"a line over {max_line_bytes} bytes") from None

    async def writer() -> None:
        async with write_reader:
            async for session_message in write_reader:
                data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await write(data.encode() + b"\n")
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    return  # the agent left; the read side ends the session

    async with anyio.create_task_group() as tg:
        if lane is not None:
            lane.attach(write, tg, send.send_nowait if isinstance(send, PipeSendStream) else None)
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            tg.cancel_scope.cancel()


def _refusal(line: bytes) -> bytes:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return _error_line(None, PARSE_ERROR, "Parse error")
    request_id = data.get("id") if isinstance(data, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    return _error_line(request_id, INVALID_REQUEST, "Invalid Request")
