"""Cross-process lock ``<hash>.json.lock`` serialising refreshes and interactive logins per server.

The exclusion itself is orbmcp's one lock, ``fs.file_lock`` (filelock's kernel ``flock``, released
by the kernel when the holder dies); this module adds what a login that waits on a person needs.
The file's content names the holder: pid, the process's create time and a heartbeat refreshed
every 30 s. A lock that is still held but whose holder is gone (pid dead, or recycled:
another create time) or silent (heartbeat older than 90 s, e.g. a stopped process or an fd
inherited by a stray child) is reclaimed by unlinking its inode, so new contenders lock a fresh one.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import anyio

from orbmcp import fs, processes
from orbmcp.auth.messages import log_auth_event
from orbmcp.auth.storage import ensure_auth_dir
from orbmcp.errors import AuthError

if TYPE_CHECKING:
    from filelock import FileLock

HEARTBEAT_S = 30.0
STALE_AFTER_S = 90.0
DEFAULT_WAIT_S = 60.0
_POLL_S = 0.05


@dataclass(frozen=True)
class LockHolder:
    pid: int
    create_time: float | None
    heartbeat: float
    host: str | None = None


def _hostname() -> str:
    return os.uname().nodename


def read_holder(fd: int) -> LockHolder | None:
    try:
        raw = os.pread(fd, 4096, 0)
        data = json.loads(raw.decode())
        return LockHolder(
            pid=int(data["pid"]),
            create_time=float(data["create_time"]) if data.get("create_time") is not None else None,
            heartbeat=float(data["heartbeat"]),
            host=data.get("host"),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def holder_is_stale(holder: LockHolder, *, stale_after_s: float, now: float | None = None) -> bool:
    now = time.time() if now is None else now
    if now - holder.heartbeat > stale_after_s:
        return True
    if holder.host not in (None, _hostname()):
        return False  # another machine's pid says nothing here; only the heartbeat counts
    return not processes.same_process(holder.pid, holder.create_time)


class AuthLock:
    """``async with AuthLock(path, server=...)``: bounded wait, an error naming the lock and holder."""

    def __init__(
        self,
        path: Path,
        *,
        server: str,
        wait_s: float = DEFAULT_WAIT_S,
        heartbeat_s: float = HEARTBEAT_S,
        stale_after_s: float = STALE_AFTER_S,
    ) -> None:
        self.path = path
        self.server = server
        self.wait_s = wait_s
        self.heartbeat_s = heartbeat_s
        self.stale_after_s = stale_after_s
        self._lock: FileLock | None = None
        self._fd: int | None = None  # the lock file's, lent by filelock while the lock is held
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self.waited_s = 0.0

    @property
    def held(self) -> bool:
        return self._lock is not None

    async def __aenter__(self) -> AuthLock:
        await self.acquire()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    async def acquire(self, wait_s: float | None = None) -> None:
        wait = self.wait_s if wait_s is None else wait_s
        ensure_auth_dir(self.path.parent)
        start = time.monotonic()
        deadline = start + wait
        last: LockHolder | None = None
        contended = False
        while True:
            holder = self._try_once()
            if self._lock is not None:
                self.waited_s = time.monotonic() - start
                self._start_heartbeat()
                if contended:
                    log_auth_event(
                        "oauth.lock.acquired",
                        server=self.server,
                        message=f"auth lock for '{self.server}' acquired after waiting",
                        ms=int(self.waited_s * 1000),
                        lock=str(self.path),
                    )
                return
            if not contended:
                contended = True
                log_auth_event(
                    "oauth.lock.contention",
                    server=self.server,
                    message=f"waiting for the auth lock of '{self.server}'",
                    holder_pid=holder.pid if holder else None,
                    lock=str(self.path),
                )
            last = holder or last
            if time.monotonic() >= deadline:
                who = f" held by pid {last.pid}" if last else ""
                raise AuthError(
                    f"timed out after {wait:.0f} s waiting for the auth lock {self.path}{who} "
                    f"(server '{self.server}')",
                    server=self.server,
                    hint=f"another orbmcp process is authorizing '{self.server}'; wait for it, or end pid "
                    f"{last.pid if last else '?'} if it is stuck",
                    reason="lock_timeout",
                )
            await anyio.sleep(_POLL_S)

    def _try_once(self) -> LockHolder | None:
        """Take the lock if it is free (``self._lock`` set); else who holds it, after reclaiming it
        from a holder that is gone or silent."""
        try:
            self._lock = fs.try_lock(self.path, on_acquired=self._acquired)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise AuthError(
                    f"refusing to use the auth lock {self.path}: it is a symbolic link",
                    server=self.server,
                    hint="remove the link and retry",
                    reason="unsafe_path",
                ) from None
            raise
        if self._lock is not None:
            return None
        holder, inode = self._inspect()
        if holder is not None and holder_is_stale(holder, stale_after_s=self.stale_after_s):
            self._reclaim(holder, inode)
        return holder

    def _acquired(self, fd: int) -> None:
        self._fd = fd
        os.fchmod(fd, fs.FILE_MODE)  # filelock sets the mode of a file it creates, not of one it finds
        self._write_holder()

    def _inspect(self) -> tuple[LockHolder | None, int | None]:
        """The holder the lock file names, and the inode that said so."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None, None
        try:
            return read_holder(fd), os.fstat(fd).st_ino
        finally:
            os.close(fd)

    def _reclaim(self, holder: LockHolder, inode: int | None) -> None:
        # Unlink only the inode we inspected: if someone already replaced it, theirs is live. New
        # contenders then lock a fresh file; filelock refuses a lock won on an unlinked inode.
        with contextlib.suppress(FileNotFoundError):
            if inode == os.stat(self.path, follow_symlinks=False).st_ino:
                os.unlink(self.path)
                log_auth_event(
                    "oauth.lock.reclaimed",
                    server=self.server,
                    level="warning",
                    message=f"reclaimed a stale auth lock of '{self.server}'",
                    holder_pid=holder.pid,
                    reason=f"heartbeat {int(time.time() - holder.heartbeat)} s old",
                )

    def _write_holder(self) -> None:
        fd = self._fd
        if fd is None:
            return
        body = json.dumps(
            {
                "pid": os.getpid(),
                "create_time": processes.create_time(os.getpid()),
                "heartbeat": time.time(),
                "host": _hostname(),
            }
        ).encode()
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, body, 0)

    def _start_heartbeat(self) -> None:
        self._stop = threading.Event()
        if self.heartbeat_s <= 0:
            return
        stop = self._stop

        def beat() -> None:
            while not stop.wait(self.heartbeat_s):
                self._write_holder()

        # A thread, not a task: the heartbeat must go on while the event loop waits on a person.
        self._beat = threading.Thread(target=beat, name=f"orbmcp-auth-lock-{self.server}", daemon=True)
        self._beat.start()

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=1.0)
            self._beat = None
        lock, self._lock = self._lock, None
        fd, self._fd = self._fd, None
        if lock is None:
            return
        # The file stays (filelock keeps it): waiters must keep contending on the same inode.
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
        with contextlib.suppress(OSError):
            lock.release()

    def holder(self) -> LockHolder | None:
        """Who holds the lock now (from the file), for status and error messages."""
        return self._inspect()[0]
