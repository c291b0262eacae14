"""The one way orbmcp writes a file it owns: private, atomic, durable, optionally under a lock.

Credentials, caches, process records, the trust store and installed scripts all go through
``atomic_write``: a temp file created beside the target with ``O_EXCL|O_NOFOLLOW`` and the final
mode, written whole, fsynced, renamed over the target (a symlink planted there is replaced, never
followed), the directory fsynced; on any failure the temp file is removed.

The one cross-process lock is ``file_lock``: filelock's kernel ``flock`` on a 0600 file in a
private directory, shared by the threads of a process, released by the kernel when its holder
dies. ``locked`` serialises read-modify-write cycles of two processes with it (``<file>.lock``
beside the file); the daemon's one-per-scope lock and the OAuth lock (its holder record and
heartbeat, ``auth/lock.py``) are built on it. The one private directory is ``ensure_private_dir``.
Stdlib only, except the lock, which imports ``filelock`` when first taken.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from filelock import FileLock

FILE_MODE = 0o600
DIR_MODE = 0o700
DEFAULT_LOCK_TIMEOUT_S = 10.0


class UnsafePathError(OSError):
    """A path orbmcp must not use for private state (a symlink, or not a directory/file)."""


class LockTimeout(OSError):
    """Another process held the lock for longer than the timeout."""

    def __init__(self, lock_file: Path) -> None:
        super().__init__(f"another orbmcp holds {lock_file}")
        self.lock_file = lock_file


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) 0700; tighten a looser mode; refuse a symlink or file."""
    if path.is_symlink():
        raise UnsafePathError(f"refusing to use {path}: it is a symbolic link")
    missing: list[Path] = []
    current = path
    while not current.exists() and not current.is_symlink():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)
    try:
        info = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:  # pragma: no cover - removed by someone else meanwhile
        raise UnsafePathError(f"cannot create {path}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePathError(f"refusing to use {path}: not a directory")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, DIR_MODE)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(
    path: Path, data: bytes | str, *, mode: int = FILE_MODE, private_dir: bool = True, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` atomically (see the module docstring).

    ``private_dir`` creates the parent 0700 when missing; files meant for others (a completion
    script, mode 0644) pass ``private_dir=False`` and get ordinary directories. ``durable=False``
    skips the fsyncs, for files that mean nothing once the machine restarts (a record of live
    processes, written on every spawn): still atomic for every process, just not power-loss safe.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    parent = path.parent
    if private_dir:
        ensure_private_dir(parent)
    else:
        parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{path.name}.tmp-{os.getpid()}-{os.urandom(6).hex()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, mode)
    try:
        try:
            os.fchmod(fd, mode)  # the umask can only remove bits; say the mode explicitly
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        with contextlib.suppress(OSError):
            fsync_dir(parent)


def read_private(path: Path, *, max_bytes: int | None = None) -> bytes | None:
    """The bytes of a private file, or None when it does not exist.

    Refuses a symlink or anything but a regular file (``UnsafePathError``), tightens a mode looser
    than 0600 (returning normally), and refuses a file over ``max_bytes`` (``ValueError``).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:
        if path.is_symlink():
            raise UnsafePathError(f"refusing to read {path}: it is a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePathError(f"refusing to read {path}: not a regular file")
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, FILE_MODE)
        if max_bytes is not None and info.st_size > max_bytes:
            raise ValueError(f"{path} is larger than {max_bytes} bytes")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 16):
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:
                raise ValueError(f"{path} is larger than {max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_private(path: Path, *, append: bool = False) -> int:
    """A descriptor writing to a private file that is not replaced whole (a log, a child's stderr):
    created 0600 or truncated (``append`` keeps it), never through a symlink, a FIFO or anything
    but a regular file (``UnsafePathError``), a looser mode tightened."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    # O_NONBLOCK: a FIFO planted at the path fails the check instead of hanging the open.
    flags |= os.O_APPEND | os.O_NONBLOCK if append else os.O_TRUNC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, FILE_MODE)
    except OSError:
        if path.is_symlink():
            raise UnsafePathError(f"refusing to write {path}: it is a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            if stat.S_IMODE(info.st_mode) & 0o077:
                os.fchmod(fd, FILE_MODE)
            os.set_blocking(fd, True)
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    raise UnsafePathError(f"refusing to write {path}: not a regular file")


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def file_lock(lock_file: Path, *, on_acquired: Callable[[int], None] | None = None) -> FileLock:
    """The one cross-process lock (see the module docstring), not taken yet.

    ``on_acquired`` gets the lock file's descriptor each time the lock is taken, to write who holds
    it (the file is never truncated by a contender and stays in place on release). The lock file
    is opened ``O_NOFOLLOW``: a symlink planted there is an ``OSError`` (ELOOP), never followed.
    """
    from filelock import FileLock

    ensure_private_dir(lock_file.parent)
    return FileLock(
        str(lock_file),
        mode=FILE_MODE,
        thread_local=False,  # a heartbeat thread writes while the event loop's thread holds it
        fallback_to_soft=False,  # no flock (some network filesystems): an error, not a weaker lock
        on_acquired=on_acquired,
    )


def try_lock(lock_file: Path, *, on_acquired: Callable[[int], None] | None = None) -> FileLock | None:
    """``file_lock`` taken now, or None when another holds it (nothing waits)."""
    from filelock import Timeout

    lock = file_lock(lock_file, on_acquired=on_acquired)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        return None
    return lock


@contextlib.contextmanager
def locked(path: Path, *, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold ``<path>.lock`` (``file_lock``) for the block; ``LockTimeout`` after ``timeout``."""
    from filelock import Timeout

    lock = file_lock(lock_path(path))
    lock.timeout = timeout
    try:
        lock.acquire()
    except Timeout:
        raise LockTimeout(lock_path(path)) from None
    try:
        yield
    finally:
        lock.release()


def update(
    path: Path,
    change: Callable[[bytes | None], bytes | None],
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT_S,
    max_bytes: int | None = None,
    durable: bool = True,
) -> None:
    """Read-modify-write ``path`` under its lock: ``change(old bytes or None)`` returns the new
    content, or None to leave the file as it is. Concurrent writers never lose each other's change.
    ``durable=False`` skips the fsyncs (a cache: losing it to a power cut costs a rediscovery)."""
    with locked(path, timeout=timeout):
        try:
            old = read_private(path, max_bytes=max_bytes)
        except ValueError:
            old = None  # an oversized cache is treated as empty and rewritten
        new = change(old)
        if new is not None:
            atomic_write(path, new, durable=durable)


def read_json_object(path: Path, *, max_bytes: int) -> dict[str, object] | None:
    """A small JSON object file (a cache), or None when absent, unreadable, oversized or not an object."""
    try:
        raw = read_private(path, max_bytes=max_bytes)
    except (OSError, ValueError):
        return None
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def json_update(
    path: Path,
    change: Callable[[dict[str, object]], dict[str, object] | None],
    *,
    max_bytes: int,
    timeout: float = DEFAULT_LOCK_TIMEOUT_S,
    durable: bool = True,
) -> None:
    """``update`` for a JSON object file: ``change`` gets the current object ({} when absent or
    unreadable) and returns the new one, or None for no change."""

    def apply(old: bytes | None) -> bytes | None:
        current: dict[str, object] = {}
        if old is not None:
            try:
                data = json.loads(old)
            except (ValueError, RecursionError):
                data = None
            if isinstance(data, dict):
                current = data
        new = change(current)
        if new is None:
            return None
        return json.dumps(new, ensure_ascii=False, sort_keys=True, indent=1).encode("utf-8")

    update(path, apply, timeout=timeout, max_bytes=max_bytes, durable=durable)


__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "LockTimeout",
    "UnsafePathError",
    "atomic_write",
    "ensure_private_dir",
    "file_lock",
    "fsync_dir",
    "json_update",
    "lock_path",
    "locked",
    "open_private",
    "read_json_object",
    "read_private",
    "try_lock",
    "update",
]
