"""The serve process once the scope's daemon serves its line (``orbmcp serve`` with a daemon).

The connection is the forwarding client's, so the daemon was verified (``trust``) before the
serve request was sent. Standard library only, like the rest of the client: the agent's
``orbmcp serve`` then starts in milliseconds and the MCP session lives in the daemon. Over stdio
this process is a pipe: a thread copies stdin to the socket (and half-closes it at EOF), the main
thread copies the socket to stdout; the daemon ends the session when the agent's stdin ends. Over
HTTP it says where the daemon listens and waits: SIGTERM, SIGINT or SIGHUP make the daemon stop listening.
"""

from __future__ import annotations

import _socket
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from types import FrameType
from typing import Any, Protocol

from orbmcp.daemon.signals import signals_handled_by
from orbmcp.session import daemon_protocol as protocol
from orbmcp.text import one_line

CHUNK = 64 * 1024
INTERRUPTED = 130
CONNECTION = 4


class Conversation(Protocol):
    """What serving uses of the forwarding client's conversation (fastpath.daemon_client)."""

    sock: _socket.socket
    cancelled: bool  # set: a cancel frame would corrupt the MCP stream from now on


class _Stop(Exception):
    """A signal asked this process to stop."""


def serving(conv: Conversation, message: Mapping[str, Any]) -> int:
    if message.get("transport") == "http":
        return _wait_http(conv, str(message.get("url", "")))
    conv.cancelled = True  # from now on a cancel frame would corrupt the MCP stream
    with _stop_on_signals():
        try:
            return _pipe(conv.sock)
        except _Stop:
            return INTERRUPTED


def _wait_http(conv: Conversation, url: str) -> int:
    sys.stderr.write(
        f"orbmcp: serving MCP at {one_line(url, max_len=500)} from the session daemon "
        "(send Authorization: Bearer <token>; the token: orbmcp serve --print-token)\n"
    )
    sys.stderr.flush()
    while True:  # Ctrl-C / SIGTERM send a cancel (the client's handler); the daemon then hangs up
        try:
            frame = protocol.receive(conv.sock)
        except (OSError, protocol.ProtocolError):
            frame = None
        if frame is None:
            if conv.cancelled:
                return INTERRUPTED
            sys.stderr.write("orbmcp: the session daemon stopped serving\n")
            return CONNECTION


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        raise _Stop(signal.Signals(signum).name)

    with signals_handled_by(handler):
        yield


def _pipe(sock: _socket.socket) -> int:
    """Copy until the daemon closes; 0 when that follows the agent's EOF, 4 when it came first."""
    stdin_done = threading.Event()

    def upstream() -> None:
        try:
            while data := os.read(0, CHUNK):
                sock.sendall(data)
        except OSError:
            pass
        finally:
            stdin_done.set()
            with contextlib.suppress(OSError):
                sock.shutdown(_socket.SHUT_WR)

    threading.Thread(target=upstream, name="orbmcp-serve-stdin", daemon=True).start()
    while True:
        try:
            data = sock.recv(CHUNK)
        except OSError:
            data = b""
        if not data:
            if stdin_done.is_set():
                return 0
            sys.stderr.write("orbmcp: the session daemon closed the MCP session\n")
            return CONNECTION
        if not _write_all(data):
            return 0  # the agent stopped reading: it is gone


def _write_all(data: bytes) -> bool:
    view = memoryview(data)
    while view:
        try:
            written = os.write(1, view)
        except BrokenPipeError:
            return False
        except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for odd platforms
            continue
        view = view[written:]
    return True
