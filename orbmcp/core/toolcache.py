"""The discovery cache: tool names per server, written after each discovery, read by completion.

Shell completion must not connect anything, so ``orbmcp call srv <TAB>`` offers the tools that
``srv`` listed the last time any orbmcp process discovered them. Tool names are server-supplied:
only names that are safe to print and to complete (no whitespace, no control characters) are
kept. A missing or corrupt cache is an empty cache; a failed write never breaks discovery.
Stdlib only: completion reads this on every keystroke.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

CACHE_VERSION = 1
MAX_TOOLS_PER_SERVER = 1000
MAX_NAME_LENGTH = 128
# Printable, no whitespace, no C0/C1 controls, no bidi controls: what a shell word can carry.
_SAFE_NAME = re.compile(r"[^\s\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]{1,128}")


def is_safe_name(name: str) -> bool:
    return bool(_SAFE_NAME.fullmatch(name))


def load(path: Path) -> dict[str, list[str]]:
    """``{server: [tool names]}``; empty when the file is missing, unreadable or malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    servers = data.get("servers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}
    out: dict[str, list[str]] = {}
    for server, entry in servers.items():
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if isinstance(server, str) and isinstance(tools, list):
            out[server] = [t for t in tools if isinstance(t, str) and is_safe_name(t)]
    return out


def save(path: Path, server: str, names: Iterable[str]) -> bool:
    """Record ``server``'s tool names (replacing the previous list). Returns False on failure."""
    clean = sorted({n for n in names if isinstance(n, str) and is_safe_name(n)})[:MAX_TOOLS_PER_SERVER]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    servers = data.get("servers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        servers = {}
    servers[server] = {"tools": clean, "updated": int(time.time())}
    body = json.dumps({"version": CACHE_VERSION, "servers": servers}, ensure_ascii=False, sort_keys=True)
    try:
        _atomic_write(path, body)
    except OSError:
        return False
    return True


def forget(path: Path, server: str) -> None:
    """Drop one server's entry (its config was removed or its tools are unknown again)."""
    data = load(path)
    if server not in data:
        return
    del data[server]
    body = json.dumps(
        {"version": CACHE_VERSION, "servers": {s: {"tools": t} for s, t in data.items()}},
        ensure_ascii=False,
        sort_keys=True,
    )
    try:
        _atomic_write(path, body)
    except OSError:
        pass


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=".tools-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
