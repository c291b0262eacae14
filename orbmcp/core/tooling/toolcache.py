"""The discovery cache: tool names per server, written after each discovery, read by completion.

Shell completion must not connect anything, so ``orbmcp call srv <TAB>`` offers the tools that
``srv`` listed the last time any orbmcp process discovered them. Tool names are server-supplied:
only names that are safe to print and to complete (no whitespace, no control characters) are
kept. The file is private (``orbmcp.fs``) and updated under its lock (``cache_writes``), so orbmcp
processes that discover concurrently keep each other's servers. A missing or corrupt cache is an
empty cache; a failed write never breaks discovery. Stdlib only on the read path: completion reads
this on every keystroke.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from orbmcp import fs

CACHE_VERSION = 1
MAX_TOOLS_PER_SERVER = 1000
MAX_NAME_LENGTH = 128
# Far above what MAX_TOOLS_PER_SERVER names of MAX_NAME_LENGTH for a few hundred servers take.
MAX_CACHE_BYTES = 32 << 20
# Printable, no whitespace, no C0/C1 controls, no bidi controls: what a shell word can carry.
_SAFE_NAME = re.compile(r"[^\s\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]{1,128}")


def is_safe_name(name: str) -> bool:
    return bool(_SAFE_NAME.fullmatch(name))


def load(path: Path) -> dict[str, list[str]]:
    """``{server: [tool names]}``; empty when the file is missing, unreadable or malformed."""
    data = fs.read_json_object(path, max_bytes=MAX_CACHE_BYTES)
    servers = data.get("servers") if data is not None else None
    if not isinstance(servers, dict):
        return {}
    out: dict[str, list[str]] = {}
    for server, entry in servers.items():
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if isinstance(server, str) and isinstance(tools, list):
            out[server] = [t for t in tools if isinstance(t, str) and is_safe_name(t)]
    return out


def save(path: Path, server: str, names: Iterable[str]) -> bool:
    """Record ``server``'s tool names (replacing the previous list; ``updated`` is when the list
    last changed). Returns False on failure. An unchanged list is not written again: a server is
    listed on every connect and re-discovery, and a durable write costs an fsync or two."""
    clean = sorted({n for n in names if isinstance(n, str) and is_safe_name(n)})[:MAX_TOOLS_PER_SERVER]
    if load(path).get(server) == clean:
        return True

    def change(data: dict[str, object]) -> dict[str, object] | None:
        servers = _servers(data)
        entry = servers.get(server)
        if isinstance(entry, dict) and entry.get("tools") == clean:
            return None  # another process wrote the same list meanwhile
        servers[server] = {"tools": clean, "updated": int(time.time())}
        return {"version": CACHE_VERSION, "servers": servers}

    return _update(path, change)


def forget(path: Path, server: str) -> None:
    """Drop one server's entry (its config was removed or its tools are unknown again)."""
    if server not in load(path):
        return

    def change(data: dict[str, object]) -> dict[str, object] | None:
        servers = _servers(data)
        if servers.pop(server, None) is None:
            return None
        return {"version": CACHE_VERSION, "servers": servers}

    _update(path, change)


def _servers(data: dict[str, object]) -> dict[str, object]:
    servers = data.get("servers")
    return dict(servers) if isinstance(servers, dict) else {}


def _update(path: Path, change: Callable[[dict[str, object]], dict[str, object] | None]) -> bool:
    from orbmcp.core.session import cache_writes  # the write path only: completion never writes

    return cache_writes.update(path, change, max_bytes=MAX_CACHE_BYTES)
