"""The daemon's wire protocol: length-prefixed JSON frames over a Unix socket. Standard library only.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (one object with a
``"t"`` type field). Frames are bounded (``MAX_FRAME``): an oversized, truncated or malformed frame
ends that connection with an error frame; the daemon keeps serving everyone else.

Client -> daemon: ``hello`` (protocol, version), then one of ``run`` (a command), ``serve`` (an
``orbmcp serve`` line), ``agent`` (a line of ``slash --stdio``: ``agent_run.py`` has its frames),
``status``, ``stop``; during a run: ``answer`` (to a ``prompt``), ``stdin``
(data asked for), ``cancel`` (Ctrl-C). Daemon -> client: ``hello``; during a run: ``out``/``err``
(text for stdout/stderr), ``prompt`` (a question for the person), ``read_stdin``, ``exit`` (the
status; last frame); ``error`` (a protocol error; the daemon closes the connection after it).

A ``serve`` request is answered like a run that failed (``err`` frames, ``exit``), or ``local``
(serve with a session of your own), or ``serving``. After ``serving`` with ``"transport": "stdio"``
the connection stops speaking frames: both directions carry the MCP session's newline-delimited
JSON-RPC until either end closes. After ``serving`` with ``"transport": "http"`` (and the ``url``)
the daemon listens until the client closes the connection or sends ``cancel``.
"""

from __future__ import annotations

import json

# The daemon's client imports this on every invocation: no ``typing``, ``socket`` or ``struct``.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket
    from typing import Any

PROTOCOL_VERSION = 2  # 2: the serve request
MAX_FRAME = 16 * 1024 * 1024  # a `call -` with a large stdin object fits; anything larger is refused
HEADER_SIZE = 4  # the body's length, unsigned, big-endian


class ProtocolError(Exception):
    """A frame that is oversized, truncated or not a JSON object with a type."""


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if len(body) > MAX_FRAME:
        raise ProtocolError(f"frame of {len(body)} bytes is over the {MAX_FRAME}-byte limit")
    return len(body).to_bytes(HEADER_SIZE, "big") + body


def decode_body(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"malformed frame: {type(exc).__name__}") from None
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        raise ProtocolError("malformed frame: not an object with a type")
    return message


def frame_length(header: bytes) -> int:
    if len(header) != HEADER_SIZE:
        raise ProtocolError("connection closed mid-frame")
    length = int.from_bytes(header, "big")
    if length > MAX_FRAME:
        raise ProtocolError(f"frame of {length} bytes is over the {MAX_FRAME}-byte limit")
    return length


# -- blocking helpers for the stdlib client ------------------------------------------------------


def send(sock: socket, message: dict[str, Any]) -> None:
    sock.sendall(encode(message))


def _recv_exactly(sock: socket, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = sock.recv(min(remaining, 1 << 16))
        if not chunk:
            raise ProtocolError("connection closed mid-frame" if chunks or size != remaining else "closed")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket) -> dict[str, Any] | None:
    """The next frame, or None when the peer closed the connection between frames."""
    first = sock.recv(HEADER_SIZE)
    if not first:
        return None
    header = first if len(first) == HEADER_SIZE else first + _recv_exactly(sock, HEADER_SIZE - len(first))
    return decode_body(_recv_exactly(sock, frame_length(header)))
