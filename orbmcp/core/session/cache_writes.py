"""The one way a cache file (tool names, protocol eras) is updated: under its lock, every entry kept.

Each update is a read-modify-write under the file's lock (``orbmcp.fs``), so concurrent orbmcp
processes keep each other's entries. Waiting for that lock is bounded, but long enough for any real
contention (``LOCK_WAIT_S``: ten processes discovering at once on a loaded machine take a few
seconds in all); a cache write is not durable (no fsync: losing a cache to a power cut costs one
rediscovery), which keeps each turn under the lock short. An update that still cannot take the lock
is not dropped: it is logged and kept in this process, and the next update of the same file applies
it first, so the next writer merges it. A cache is an optimisation: a failure never fails a caller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from orbmcp import fs
from orbmcp.log import get_logger

LOCK_WAIT_S = 30.0

Change = Callable[[dict[str, object]], dict[str, object] | None]

_log = get_logger(__name__)
_pending: dict[Path, list[Change]] = {}
_pending_lock = threading.Lock()  # caches are written from worker threads (anyio.to_thread)


def update(path: Path, change: Change, *, max_bytes: int) -> bool:
    """Apply ``change`` (and any earlier change of this process that could not be written) to
    the JSON object in ``path``; ``change`` returns the new object or None for no change.
    True once written (or nothing to write); False when it could not be written now (kept for
    the next update when the lock was the reason)."""
    wait_s = LOCK_WAIT_S
    with _pending_lock:
        changes = [*_pending.pop(path, []), change]

    def apply(data: dict[str, object]) -> dict[str, object] | None:
        changed = False
        for one in changes:
            new = one(data)
            if new is not None:
                data, changed = new, True
        return data if changed else None

    try:
        fs.json_update(path, apply, max_bytes=max_bytes, timeout=wait_s, durable=False)
    except fs.LockTimeout:
        with _pending_lock:
            _pending[path] = [*changes, *_pending.get(path, [])]
        _log.warning(
            "cache %s: its lock was held for over %.0f s; %d update(s) kept for the next write",
            path.name,
            wait_s,
            len(changes),
        )
        return False
    except OSError as exc:
        _log.warning("cache %s not written: %s", path.name, exc.strerror or type(exc).__name__)
        return False
    return True


def pending(path: Path) -> int:
    """How many updates of ``path`` wait for the next write (for tests and the debug log)."""
    with _pending_lock:
        return len(_pending.get(path, []))
