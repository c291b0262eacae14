"""Protocol eras (2025 handshake vs 2026-07-28 discover): which one to try, and the cache of them.

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

The module is light at import (no mcp/httpx2), so reading the cache costs nothing extra. What a
failure means for the user is ``classify``'s business; the helpers both need live here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from orbmcp import fs
from orbmcp.core.session import cache_writes

Era = Literal["modern", "legacy"]

# A stdio server that answers nothing in this long is treated as legacy (see module docstring).
DISCOVER_PROBE_TIMEOUT_S = 2.0
CACHE_FORMAT = 1
MAX_CACHE_ENTRIES = 512
# 512 entries of ~150 bytes; a file far larger than that is not one orbmcp wrote.
MAX_CACHE_BYTES = 1 << 20

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

# The SDK's RuntimeError when a server answers initialize with a version it does not speak.
UNSUPPORTED_VERSION_RE = re.compile(r"Unsupported protocol version from the server: (\S+)")


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
    code = mcp_error_code(leaf)
    if code is not None:
        return code in (UNSUPPORTED_PROTOCOL_VERSION, METHOD_NOT_FOUND, INVALID_REQUEST)
    if isinstance(leaf, RuntimeError) and (match := UNSUPPORTED_VERSION_RE.search(str(leaf))):
        return match.group(1) in MODERN_PROTOCOL_VERSIONS
    return False


class EraCache:
    """``<definition hash> -> era`` on disk, a private file (``orbmcp.fs``); a corrupt file reads
    as empty. Updates are read-modify-writes under the file's lock, so concurrent orbmcp processes
    keep each other's entries. A cache is an optimisation: failing to write it never fails a
    connection.
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
        (its kind's ``fallback``: it refused the configured transport); None otherwise. The file is
        untrusted: the caller uses the name only where it is the configured kind's fallback."""
        entry = self._load().get(key)
        value = entry.get("transport") if isinstance(entry, dict) else None
        return value if isinstance(value, str) else None

    def record(self, key: str, protocol_version: str | None, *, transport: str | None = None) -> None:
        """Remember the version a connection negotiated (and a fallback transport it needed).
        Unknown versions are not recorded."""
        era = era_of(protocol_version)
        if era is None:
            return

        def unchanged(entries: Mapping[str, Any]) -> bool:
            old = entries.get(key)
            return (
                isinstance(old, dict)
                and old.get("protocolVersion") == protocol_version
                and old.get("transport") == transport
            )

        if unchanged(self._load()):
            return  # spare the lock and the write on every connect

        def change(entries: dict[str, Any]) -> bool:
            if unchanged(entries):
                return False
            entry: dict[str, Any] = {"era": era, "protocolVersion": protocol_version, "at": time.time()}
            if transport is not None:
                entry["transport"] = transport
            entries[key] = entry
            return True

        self._update(change)

    def forget(self, key: str) -> None:
        if key not in self._load():
            return

        def change(entries: dict[str, Any]) -> bool:
            return entries.pop(key, None) is not None

        self._update(change)

    def _load(self) -> dict[str, Any]:
        return _entries(fs.read_json_object(self.path, max_bytes=MAX_CACHE_BYTES))

    def _update(self, change: Callable[[dict[str, Any]], bool]) -> None:
        def apply(data: dict[str, object]) -> dict[str, object] | None:
            entries = _entries(data)
            if not change(entries):
                return None
            if len(entries) > MAX_CACHE_ENTRIES:
                newest = sorted(entries.items(), key=lambda kv: _timestamp(kv[1]), reverse=True)
                entries = dict(newest[:MAX_CACHE_ENTRIES])
            return {"format": CACHE_FORMAT, "servers": entries}

        cache_writes.update(self.path, apply, max_bytes=MAX_CACHE_BYTES)


def _entries(data: Mapping[str, object] | None) -> dict[str, Any]:
    servers = data.get("servers") if data is not None else None
    if not isinstance(servers, dict) or data is None or data.get("format") != CACHE_FORMAT:
        return {}
    return {k: v for k, v in servers.items() if isinstance(k, str) and isinstance(v, dict)}


def _timestamp(entry: Any) -> float:
    at = entry.get("at") if isinstance(entry, dict) else None
    return float(at) if isinstance(at, int | float) else 0.0


def unwrap_exception(exc: BaseException) -> BaseException:
    """Dig through single-exception groups (``async with Client`` nests them several deep)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def mcp_error_code(exc: BaseException) -> int | None:
    """``MCPError.code``, matched by name so this module never imports mcp."""
    for cls in type(exc).__mro__:
        if cls.__name__ == "MCPError" and cls.__module__.startswith("mcp."):
            code = getattr(exc, "code", None)
            return code if isinstance(code, int) else None
    return None
