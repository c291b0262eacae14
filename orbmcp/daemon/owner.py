"""``daemon start --owner-pid PID``: the daemon lives as long as that process (an agent's).

Linux: a pidfd, readable once the process has exited (a recycled pid cannot fool it: the pidfd
names the process, not the number). Elsewhere: psutil's wait, in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import anyio
import psutil


class OwnerGone(Exception):
    """The owner process does not exist (any more)."""


class OwnerHandle:
    """A process to outlive by nothing: ``wait`` returns once it has ended."""

    def __init__(self, pid: int, *, pidfd: bool = True) -> None:
        if pid <= 0:
            raise OwnerGone(f"{pid} is not a process id")
        self.pid = pid
        self._fd: int | None = None
        self._process: Any = None
        if pidfd and hasattr(os, "pidfd_open"):
            try:
                self._fd = os.pidfd_open(pid)
            except ProcessLookupError:
                raise OwnerGone(f"no process has pid {pid}") from None
            except OSError:  # ENOSYS on an old kernel, EPERM in some sandboxes: use psutil
                self._fd = None
        if self._fd is None:
            try:
                self._process = psutil.Process(pid)
            except psutil.NoSuchProcess:
                raise OwnerGone(f"no process has pid {pid}") from None

    async def wait(self) -> None:
        if self._fd is not None:
            try:
                await anyio.wait_readable(self._fd)
            finally:
                self.close()
            return

        with contextlib.suppress(psutil.Error):
            await anyio.to_thread.run_sync(self._process.wait, abandon_on_cancel=True)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def check_owner(pid: int) -> None:
    """Raise OwnerGone unless ``pid`` names a running process (before the daemon is spawned)."""
    OwnerHandle(pid).close()
