"""The interface every transport module implements, and what they share.

A transport module (``stdio``, ``streamable_http``, ``sse``) holds one ``ServerTransport``: its
kind (``orbmcp.config.transports``: name, label, spellings, entry fields) and ``open``, which turns
one connection attempt (``Dial``) into the SDK ``Transport`` the ``Client`` runs on. The registry
keyed by transport name is the package's ``TRANSPORTS``.

Connect-time only: imports ``mcp`` at the top.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types
from mcp.client import Transport
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

if TYPE_CHECKING:
    from orbmcp.config.model import ServerConfig
    from orbmcp.config.transports import TransportKind
    from orbmcp.core.processes.process import ManagedProcess
    from orbmcp.core.wire.flood import NotificationThrottle
    from orbmcp.core.wire.raw_channel import RawChannel
    from orbmcp.net.http import ResponseHook

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
# Tool results (images, audio) can be large; the SDK's 1 MiB SSE event cap would cut them off.
MAX_SSE_EVENT_BYTES = DEFAULT_MAX_LINE_BYTES


@dataclass
class Dial:
    """What one connection attempt gives its transport (each transport takes what it needs)."""

    cfg: ServerConfig
    throttle: NotificationThrottle
    warn: Callable[[str], None]
    # Told why the connection is about to die (message template, reason), before anything fails.
    lost: Callable[[str, str], None]
    auth: Callable[[], Awaitable[Any]]  # the httpx2.Auth (or None) of a URL, built on demand
    process: ManagedProcess | None = None  # the server a local transport talks to, spawned
    probe_timeout: float | None = None  # answer an unanswered server/discover after this long
    on_response: ResponseHook | None = None  # every HTTP response's status and headers


async def url_options(dial: Dial) -> dict[str, Any]:
    """What a URL transport takes from its entry: the URL, headers, auth, timeouts, response hook."""
    cfg = dial.cfg
    assert cfg.url is not None
    return {
        "url": cfg.url,
        "headers": dict(cfg.headers),
        "auth": await dial.auth(),
        "timeout_s": cfg.timeout_ms / 1000,
        "request_timeout_s": cfg.request_timeout_ms / 1000,
        "on_response": dial.on_response,
    }


@dataclass
class Opened:
    """A transport for ``mcp.Client``, and the raw ``tools/call`` channel beside it, if any."""

    transport: Transport
    raw: RawChannel | None = None


class ServerTransport(Protocol):
    """One way to reach a server (see the module docstring)."""

    @property
    def kind(self) -> TransportKind: ...

    @property
    def throttles_itself(self) -> bool:
        """True: notifications are thinned before they are parsed, so the inbound guard need not."""

    async def open(self, dial: Dial) -> Opened: ...


def decode(raw: bytes) -> tuple[SessionMessage | None, bool]:
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
