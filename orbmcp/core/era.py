"""Protocol eras (2025 handshake vs 2026-07-28 discover) and the mapping of connect errors.

A server that silently drops ``server/discover`` costs the SDK's ``mode="auto"`` a 10 s wait
before it falls back to ``initialize``. orbmcp avoids paying it twice and bounds it the first time:

* ``EraCache`` remembers, per server definition, which era the server spoke last time. A cached
  legacy server is connected with ``mode="legacy"``: no probe at all.
* Otherwise the probe is bounded per connection by the stdio transport
  (``stdio_pipe_transport(discover_timeout_s=discover_timeout_for(cached))``), which answers an
  unanswered probe itself. Per connection rather than by lowering the SDK's process-wide
  ``mcp.client.session.DISCOVER_TIMEOUT_SECONDS``: that global would also cut short probes of
  unrelated concurrent sessions. A short bound is safe: a modern server that was merely slow to
  start still ends up modern (it rejects the pipelined ``initialize`` with -32022 and the SDK
  re-probes), and a slow legacy one answers the queued ``initialize``. HTTP keeps the SDK's bound:
  an HTTP server answers every POST at once, even one that does not know the method.

The module is light at import (no mcp/httpx2), so reading the cache costs nothing extra.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, cast

from orbmcp.errors import (
    AuthError,
    ConnectionFailed,
    InternalError,
    Interrupted,
    OrbError,
    ProtocolError,
    TimeoutFailed,
)

Era = Literal["modern", "legacy"]

# A stdio server that answers nothing in this long is treated as legacy (see module docstring).
DISCOVER_PROBE_TIMEOUT_S = 2.0
CACHE_FORMAT = 1
MAX_CACHE_ENTRIES = 512
MAX_MESSAGE_CHARS = 400

# mcp_types.version, duplicated so that this module stays import-light (checked by a test).
MODERN_PROTOCOL_VERSIONS = ("2026-07-28",)
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

# JSON-RPC / MCP error codes (mcp_types), for the same reason.
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022

_UNSUPPORTED_VERSION = re.compile(r"Unsupported protocol version from the server: (\S+)")
_SCOPE = re.compile(r'scope="([^"]*)"')


def era_of(protocol_version: str | None) -> Era | None:
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "modern"
    if protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
        return "legacy"
    return None


def client_mode_for(cached: str | None) -> str:
    """The SDK ``Client(mode=...)`` for a server whose cached era is ``cached``.

    Never a pinned modern version: without ``prior_discover`` the SDK would synthesize empty
    capabilities, and a modern server answers the probe at once anyway.
    """
    return "legacy" if cached == "legacy" else "auto"


def discover_timeout_for(cached: str | None) -> float | None:
    """How long a stdio transport lets ``server/discover`` go unanswered; None: no probe is sent."""
    return None if cached == "legacy" else DISCOVER_PROBE_TIMEOUT_S


def should_retry_with_auto(exc: BaseException) -> bool:
    """After a ``mode="legacy"`` connect failed with ``exc``: might the server now be modern-only?

    True for answers a modern-only server gives to ``initialize`` (unsupported version, unknown
    method, invalid request, or a modern version in the result); False for a dead or slow server,
    where a retry in another mode would only fail again.
    """
    leaf = unwrap_exception(exc)
    code = _mcp_error_code(leaf)
    if code is not None:
        return code in (UNSUPPORTED_PROTOCOL_VERSION, METHOD_NOT_FOUND, INVALID_REQUEST)
    if isinstance(leaf, RuntimeError) and (match := _UNSUPPORTED_VERSION.search(str(leaf))):
        return match.group(1) in MODERN_PROTOCOL_VERSIONS
    return False


class EraCache:
    """``<definition hash> -> era`` on disk: 0600, atomic replace, a corrupt file reads as empty.

    Concurrent writers may lose each other's update; the cost is one bounded probe next time.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, key: str) -> Era | None:
        entry = self._load().get(key)
        return era_of(entry.get("protocolVersion")) if isinstance(entry, dict) else None

    def entry(self, key: str) -> Mapping[str, Any] | None:
        entry = self._load().get(key)
        return entry if isinstance(entry, dict) else None

    def transport(self, key: str) -> str | None:
        """The transport a URL server was last reached over, when it was not the configured one
        (``"sse"``: it refused Streamable HTTP); None otherwise."""
        entry = self._load().get(key)
        value = entry.get("transport") if isinstance(entry, dict) else None
        return value if value == "sse" else None

    def record(self, key: str, protocol_version: str | None, *, transport: str | None = None) -> None:
        """Remember the version a connection negotiated (and a fallback transport it needed).
        Unknown versions are not recorded."""
        era = era_of(protocol_version)
        if era is None:
            return
        entries = self._load()
        old = entries.get(key)
        if (
            isinstance(old, dict)
            and old.get("protocolVersion") == protocol_version
            and old.get("transport") == transport
        ):
            return  # unchanged: spare the write on every connect
        entry: dict[str, Any] = {"era": era, "protocolVersion": protocol_version, "at": time.time()}
        if transport is not None:
            entry["transport"] = transport
        entries[key] = entry
        self._store(entries)

    def forget(self, key: str) -> None:
        entries = self._load()
        if entries.pop(key, None) is not None:
            self._store(entries)

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict) or data.get("format") != CACHE_FORMAT:
            return {}
        return {k: v for k, v in servers.items() if isinstance(k, str) and isinstance(v, dict)}

    def _store(self, entries: dict[str, Any]) -> None:
        if len(entries) > MAX_CACHE_ENTRIES:
            newest = sorted(entries.items(), key=lambda kv: _timestamp(kv[1]), reverse=True)
            entries = dict(newest[:MAX_CACHE_ENTRIES])
        payload = json.dumps({"format": CACHE_FORMAT, "servers": entries}, indent=1, sort_keys=True)
        # A cache is an optimisation: failing to write it must never fail a connection.
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    os.fchmod(f.fileno(), 0o600)
                    f.write(payload)
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise


def _timestamp(entry: Any) -> float:
    at = entry.get("at") if isinstance(entry, dict) else None
    return float(at) if isinstance(at, int | float) else 0.0


# --- errors ------------------------------------------------------------------------------------


def unwrap_exception(exc: BaseException) -> BaseException:
    """Dig through single-exception groups (``async with Client`` nests them several deep)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


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
    code = _mcp_error_code(leaf)
    if code is not None:
        return _from_mcp_error(leaf, code, who, status)
    if _is_httpx(leaf, "HTTPStatusError"):
        return ConnectionFailed(f"{who} answered HTTP {status}", hint=_status_hint(status))
    if _is_httpx(leaf, "SSEError"):
        return ProtocolError(f"{who} did not answer with an event stream: {leaf}")
    if _is_httpx(leaf, "ConnectError"):
        return ConnectionFailed(
            f"cannot connect to {who}: {leaf}", hint="is it running, and is the URL right?"
        )
    if _is_httpx(leaf, "TransportError"):
        return ConnectionFailed(f"connection to {who} failed: {leaf or type(leaf).__name__}")
    if type(leaf).__name__ == "EndpointOriginMismatch":
        return ProtocolError(f"{who} refused: {leaf}", hint="the server is misconfigured or not trustworthy")
    os_error = _from_os_error(leaf, who)
    if os_error is not None:
        return os_error
    if type(leaf).__name__ in ("EndOfStream", "BrokenResourceError", "ClosedResourceError"):
        return ConnectionFailed(f"{who} closed the connection")
    if isinstance(leaf, RuntimeError):
        match = _UNSUPPORTED_VERSION.search(str(leaf))
        if match is not None:
            return ProtocolError(
                f"{who} answered with protocol version '{match.group(1)}', which orbmcp does not support "
                f"(orbmcp offered {HANDSHAKE_PROTOCOL_VERSIONS[-1]}; it speaks "
                f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS + MODERN_PROTOCOL_VERSIONS)})"
            )
        if _raised_by_sdk(leaf):
            # The SDK raises RuntimeError for what the server did wrong (no mutual version,
            # structured content not matching the tool's schema, ...).
            return ProtocolError(f"{who}: {leaf}")
    if type(leaf).__name__ == "ValidationError" and type(leaf).__module__.startswith("pydantic"):
        return ProtocolError(f"{who} sent a message that does not match the MCP schema: {_first_line(leaf)}")
    return InternalError(f"unexpected {type(leaf).__name__} while talking to {who}: {leaf}")


def _timeout_error(leaf: BaseException, who: str) -> OrbError | None:
    if _is_httpx(leaf, "ConnectTimeout"):
        return TimeoutFailed(f"could not connect to {who} in time")
    if isinstance(leaf, TimeoutError) or _is_httpx(leaf, "TimeoutException"):
        return TimeoutFailed(f"{who} did not answer in time")
    if _mcp_error_code(leaf) == REQUEST_TIMEOUT:
        return TimeoutFailed(f"{who} did not answer in time ({getattr(leaf, 'message', leaf)})")
    return None


def _auth_error(server: str, status: int, challenge: str | None) -> AuthError:
    hint = f"run: orbmcp auth {server}"
    if status == 401:
        return AuthError(f"server '{server}' requires authorization (HTTP 401)", hint=hint)
    if challenge and "insufficient_scope" in challenge:
        scope = _SCOPE.search(challenge)
        needs = f"; it needs scope '{scope.group(1)}'" if scope else ""
        return AuthError(
            f"server '{server}' refused the token for insufficient scope (HTTP 403{needs})", hint=hint
        )
    return AuthError(
        f"server '{server}' refused access (HTTP 403)",
        hint=f"check the credentials in its headers, or run: orbmcp auth {server}",
    )


def _from_mcp_error(leaf: BaseException, code: int, who: str, status: int | None) -> OrbError:
    message = str(getattr(leaf, "message", "") or "")
    if code == CONNECTION_CLOSED:
        detail = "" if message.lower() == "connection closed" else f" ({message})"
        return ConnectionFailed(f"{who} closed the connection{detail}")
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        data = getattr(leaf, "data", None)
        supported = data.get("supported") if isinstance(data, dict) else None
        theirs = ", ".join(map(str, supported)) if isinstance(supported, list) else "unknown"
        return ProtocolError(
            f"{who} supports protocol versions {theirs}; orbmcp speaks "
            f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS + MODERN_PROTOCOL_VERSIONS)}"
        )
    if code == INTERNAL_ERROR and status is not None and status >= 400:
        return ConnectionFailed(f"{who} answered HTTP {status}", hint=_status_hint(status))
    if code == METHOD_NOT_FOUND and status == 404:
        # The SDK turns a 404 without a session into MCPError(-32601, "Not Found").
        return ConnectionFailed(f"{who} answered HTTP 404 ({message})", hint=_status_hint(status))
    return ProtocolError(f"{who} answered with error {code}: {message}")


def _from_os_error(leaf: BaseException, who: str) -> OrbError | None:
    if not isinstance(leaf, OSError):
        return None
    if isinstance(leaf, FileNotFoundError) and leaf.filename is not None:
        return ConnectionFailed(f"cannot start {who}: command not found: {leaf.filename}")
    if isinstance(leaf, PermissionError):
        return ConnectionFailed(f"cannot start {who}: permission denied: {leaf.filename or leaf}")
    if isinstance(leaf, ConnectionRefusedError):
        return ConnectionFailed(f"cannot connect to {who}: connection refused", hint="is it running?")
    if isinstance(leaf, BrokenPipeError | ConnectionResetError | ConnectionAbortedError):
        return ConnectionFailed(f"{who} closed the connection")
    return ConnectionFailed(f"connection to {who} failed: {leaf.strerror or leaf}")


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
    for candidate in leaves:
        if isinstance(candidate, OrbError):
            return candidate
    for candidate in leaves:
        if not _is_cancellation(candidate):
            return candidate
    return leaves[0] if leaves else leaf


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _is_cancellation(exc: BaseException) -> bool:
    import asyncio

    return isinstance(exc, asyncio.CancelledError) or type(exc).__name__ == "Cancelled"


def _mcp_error_code(exc: BaseException) -> int | None:
    """``MCPError.code``, matched by name so this module never imports mcp."""
    for cls in type(exc).__mro__:
        if cls.__name__ == "MCPError" and cls.__module__.startswith("mcp."):
            code = getattr(exc, "code", None)
            return code if isinstance(code, int) else None
    return None


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
    line = " ".join(_redactor()(text).split())
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 1] + "…"


def _redactor() -> Callable[[str], str]:
    try:
        module = importlib.import_module("orbmcp.redact")
    except ImportError:
        return _identity
    redact = getattr(module, "redact", None)
    return cast(Callable[[str], str], redact) if callable(redact) else _identity


def _identity(text: str) -> str:
    return text
