"""What a failure to connect to or talk with a server means for the user: one ``OrbError``.

Anything that escapes the SDK, httpx2, anyio or the OS while connecting becomes one redacted line
with a code, a machine reason and, where there is one, a hint. Reasons: ``auth_required`` (401),
``insufficient_scope`` and ``access_denied`` (403), ``connect_timeout``, ``request_timeout``,
``connection_refused``, ``connection_failed``, ``connection_closed``, ``http_error``,
``command_not_found``, ``spawn_failed``, ``unsupported_protocol_version``, ``server_error`` (a
JSON-RPC error answer), ``bad_response`` (not an event stream, a message off the MCP schema, an
SDK-detected violation), ``endpoint_origin_mismatch``; anything unforeseen stays ``internal``.
Exceptions are matched by class name and module, so this module never imports mcp or httpx2.
"""

from __future__ import annotations

import asyncio
import re

from orbmcp.core.wire.era import (
    CONNECTION_CLOSED,
    HANDSHAKE_PROTOCOL_VERSIONS,
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    MODERN_PROTOCOL_VERSIONS,
    REQUEST_TIMEOUT,
    UNSUPPORTED_PROTOCOL_VERSION,
    UNSUPPORTED_VERSION_RE,
    mcp_error_code,
    unwrap_exception,
)
from orbmcp.errors import (
    AuthError,
    ConnectionFailed,
    InternalError,
    Interrupted,
    OrbError,
    ProtocolError,
    TimeoutFailed,
    cmd,
)
from orbmcp.redact import redact  # only when an error is shown: its patterns compile on import

MAX_MESSAGE_CHARS = 400
_SCOPE = re.compile(r'scope="([^"]*)"')


def classify_error(
    exc: BaseException,
    *,
    server: str,
    http_status: int | None = None,
    www_authenticate: str | None = None,
) -> OrbError:
    """The user-facing error for anything that escaped connecting to or talking with ``server``.

    ``http_status``/``www_authenticate`` are what the transport's response hook saw last: the SDK
    reports 401, 403 and 500 alike as ``MCPError(-32603)``. Messages are one redacted line.
    """
    leaf = _pick_leaf(exc)
    if isinstance(leaf, OrbError):
        if leaf.server is None:
            leaf.server = server
        return leaf
    status, challenge = http_status, www_authenticate
    response = getattr(leaf, "response", None) if _is_httpx(leaf, "HTTPStatusError") else None
    if response is not None:
        status, challenge = response.status_code, response.headers.get("www-authenticate")
    error = _classify(leaf, server, status, challenge)
    return _finish(error, server)


def _classify(leaf: BaseException, server: str, status: int | None, challenge: str | None) -> OrbError:
    who = f"server '{server}'"
    timeout = _timeout_error(leaf, who)
    if timeout is not None:
        return timeout
    if status in (401, 403) and not _is_connect_level(leaf):
        return _auth_error(server, status, challenge)
    if isinstance(leaf, KeyboardInterrupt):
        return Interrupted("interrupted")
    code = mcp_error_code(leaf)
    if code is not None:
        return _from_mcp_error(leaf, code, who, status)
    if _is_httpx(leaf, "HTTPStatusError"):
        return ConnectionFailed(
            f"{who} answered HTTP {status}", hint=_status_hint(status), reason="http_error"
        )
    if _is_httpx(leaf, "SSEError"):
        return ProtocolError(f"{who} did not answer with an event stream: {leaf}", reason="bad_response")
    if _is_httpx(leaf, "ConnectError"):
        return ConnectionFailed(
            f"cannot connect to {who}: {leaf}",
            hint="is it running, and is the URL right?",
            reason="connection_failed",
        )
    if _is_httpx(leaf, "TransportError"):
        return ConnectionFailed(
            f"connection to {who} failed: {leaf or type(leaf).__name__}", reason="connection_failed"
        )
    if type(leaf).__name__ == "EndpointOriginMismatch":
        return ProtocolError(
            f"{who} refused: {leaf}",
            hint="the server is misconfigured or not trustworthy",
            reason="endpoint_origin_mismatch",
        )
    os_error = _from_os_error(leaf, who)
    if os_error is not None:
        return os_error
    if type(leaf).__name__ in ("EndOfStream", "BrokenResourceError", "ClosedResourceError"):
        return ConnectionFailed(f"{who} closed the connection", reason="connection_closed")
    if isinstance(leaf, RuntimeError):
        match = UNSUPPORTED_VERSION_RE.search(str(leaf))
        if match is not None:
            return ProtocolError(
                f"{who} answered with protocol version '{match.group(1)}', which orbmcp does not support "
                f"(orbmcp offered {HANDSHAKE_PROTOCOL_VERSIONS[-1]}; it speaks "
                f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS + MODERN_PROTOCOL_VERSIONS)})",
                reason="unsupported_protocol_version",
            )
        if _raised_by_sdk(leaf):
            # The SDK raises RuntimeError for what the server did wrong (no mutual version,
            # structured content not matching the tool's schema, ...).
            return ProtocolError(f"{who}: {leaf}", reason="bad_response")
    if type(leaf).__name__ == "ValidationError" and type(leaf).__module__.startswith("pydantic"):
        return ProtocolError(
            f"{who} sent a message that does not match the MCP schema: {_first_line(leaf)}",
            reason="bad_response",
        )
    return InternalError(f"unexpected {type(leaf).__name__} while talking to {who}: {leaf}")


def _timeout_error(leaf: BaseException, who: str) -> OrbError | None:
    if _is_httpx(leaf, "ConnectTimeout"):
        return TimeoutFailed(f"could not connect to {who} in time", reason="connect_timeout")
    if isinstance(leaf, TimeoutError) or _is_httpx(leaf, "TimeoutException"):
        return TimeoutFailed(f"{who} did not answer in time", reason="request_timeout")
    if mcp_error_code(leaf) == REQUEST_TIMEOUT:
        return TimeoutFailed(
            f"{who} did not answer in time ({getattr(leaf, 'message', leaf)})", reason="request_timeout"
        )
    return None


def _auth_error(server: str, status: int, challenge: str | None) -> AuthError:
    hint = f"run: {cmd('auth', server)}"
    if status == 401:
        return AuthError(
            f"server '{server}' requires authorization (HTTP 401)", hint=hint, reason="auth_required"
        )
    if challenge and "insufficient_scope" in challenge:
        scope = _SCOPE.search(challenge)
        needs = f"; it needs scope '{scope.group(1)}'" if scope else ""
        return AuthError(
            f"server '{server}' refused the token for insufficient scope (HTTP 403{needs})",
            hint=hint,
            reason="insufficient_scope",
        )
    return AuthError(
        f"server '{server}' refused access (HTTP 403)",
        hint=f"check the credentials in its headers, or {hint}",
        reason="access_denied",
    )


def _from_mcp_error(leaf: BaseException, code: int, who: str, status: int | None) -> OrbError:
    message = str(getattr(leaf, "message", "") or "")
    if code == CONNECTION_CLOSED:
        detail = "" if message.lower() == "connection closed" else f" ({message})"
        return ConnectionFailed(f"{who} closed the connection{detail}", reason="connection_closed")
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        data = getattr(leaf, "data", None)
        supported = data.get("supported") if isinstance(data, dict) else None
        theirs = ", ".join(map(str, supported)) if isinstance(supported, list) else "unknown"
        return ProtocolError(
            f"{who} supports protocol versions {theirs}; orbmcp speaks "
            f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS + MODERN_PROTOCOL_VERSIONS)}",
            reason="unsupported_protocol_version",
        )
    if code == INTERNAL_ERROR and status is not None and status >= 400:
        return ConnectionFailed(
            f"{who} answered HTTP {status}", hint=_status_hint(status), reason="http_error"
        )
    if code == METHOD_NOT_FOUND and status == 404:
        # The SDK turns a 404 without a session into MCPError(-32601, "Not Found").
        return ConnectionFailed(
            f"{who} answered HTTP 404 ({message})", hint=_status_hint(status), reason="http_error"
        )
    return ProtocolError(f"{who} answered with error {code}: {message}", reason="server_error")


def _from_os_error(leaf: BaseException, who: str) -> OrbError | None:
    if not isinstance(leaf, OSError):
        return None
    if isinstance(leaf, FileNotFoundError) and leaf.filename is not None:
        return ConnectionFailed(
            f"cannot start {who}: command not found: {leaf.filename}", reason="command_not_found"
        )
    if isinstance(leaf, PermissionError):
        return ConnectionFailed(
            f"cannot start {who}: permission denied: {leaf.filename or leaf}", reason="spawn_failed"
        )
    if isinstance(leaf, ConnectionRefusedError):
        return ConnectionFailed(
            f"cannot connect to {who}: connection refused", hint="is it running?", reason="connection_refused"
        )
    if isinstance(leaf, BrokenPipeError | ConnectionResetError | ConnectionAbortedError):
        return ConnectionFailed(f"{who} closed the connection", reason="connection_closed")
    return ConnectionFailed(
        f"connection to {who} failed: {leaf.strerror or leaf}", reason="connection_failed"
    )


def _status_hint(status: int | None) -> str | None:
    if status == 404:
        return "check the server URL"
    if status in (400, 405):
        return "check the server URL, and its transport (streamable-http or sse)"
    if status is not None and status >= 500:
        return "the server failed; try again later or check its logs"
    return None


def _is_connect_level(leaf: BaseException) -> bool:
    return isinstance(leaf, OSError) or _is_httpx(leaf, "ConnectError")


def _pick_leaf(exc: BaseException) -> BaseException:
    """The most telling exception in a (possibly nested, multi-member) group."""
    leaf = unwrap_exception(exc)
    if not isinstance(leaf, BaseExceptionGroup):
        return leaf
    leaves = list(_leaves(leaf))
    ours = (c for c in leaves if isinstance(c, OrbError))
    real = (c for c in leaves if not _is_cancellation(c))
    return next(ours, None) or next(real, None) or (leaves[0] if leaves else leaf)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _is_cancellation(exc: BaseException) -> bool:
    return isinstance(exc, asyncio.CancelledError) or type(exc).__name__ == "Cancelled"


def _is_httpx(exc: BaseException, name: str) -> bool:
    return any(cls.__name__ == name and cls.__module__.startswith("httpx2") for cls in type(exc).__mro__)


def _raised_by_sdk(exc: BaseException) -> bool:
    tb = exc.__traceback__
    module = None
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__")
        tb = tb.tb_next
    return isinstance(module, str) and module.startswith("mcp.")


def _first_line(exc: BaseException) -> str:
    return next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


def _finish(error: OrbError, server: str) -> OrbError:
    error.server = server
    error.template = _one_line(error.template)
    error.args = (error.message,)
    if error.hint_template:
        error.hint_template = _one_line(error.hint_template)
    return error


def _one_line(text: str) -> str:
    line = " ".join(redact(text).split())
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 1] + "…"
