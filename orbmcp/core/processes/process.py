"""A running stdio server process that orbmcp owns, and the stop that ends its whole tree.

Every server leads its own session and process group (``spawn`` starts it so), so a stop reaches
the whole tree: launchers such as ``npx``/``uvx``/``sh -c`` included, also when the leader exited
first, and descendants that left the group too. The pipes are plain fds closed exactly once
(``pipes``); the tree is read and signalled by ``proctree``; stderr goes to a ``StderrTail``.
Nothing here imports ``mcp``.
"""

from __future__ import annotations

import signal
import subprocess
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from orbmcp.core.processes.detached_stop import HandedOff
from orbmcp.core.processes.pipes import PipeReceiveStream, PipeSendStream, close_fd, discard_until_eof
from orbmcp.core.processes.proctree import (
    GROUP_POLL_INTERVAL,
    KILL_REAP_TIMEOUT,
    GroupProbe,
    escaped_descendants,
    open_pidfd,
    signal_group,
    stop_escaped,
    tagged_processes,
)
from orbmcp.log import get_logger
from orbmcp.processes import proc_state

if TYPE_CHECKING:
    from orbmcp.core.processes.reaper import GroupRegistry
    from orbmcp.core.processes.stderr_tail import StderrTail

_log = get_logger(__name__)

# Exit-watcher poll where pidfds are unavailable (macOS, Linux < 5.3).
_WATCH_POLL_INTERVAL = 0.05
# wait() re-polls this often in case the exit watcher was cancelled with its task group.
_WAIT_BACKSTOP_INTERVAL = 0.5
# Leftover stderr read synchronously at release; bounded because a member that escaped the
# group (setsid) can keep writing forever.
_FINAL_STDERR_LIMIT = 1 << 20


def exit_reason(returncode: int) -> str:
    """How a process ended, for one-line errors: ``exited with code 1`` / ``killed by SIGKILL``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exited with code {returncode}"


class ManagedProcess:
    """A spawned stdio server: its pipes, its stderr tail, and the stop that ends its whole tree.

    ``returncode`` follows ``subprocess``: negative for a signal. ``pgid`` is the leader pid,
    captured at spawn: ``getpgid`` fails once the leader is reaped while members live on.
    """

    def __init__(
        self,
        *,
        name: str,
        popen: subprocess.Popen[bytes],
        stdin_fd: int,
        stdout_fd: int,
        stderr_fd: int,
        stderr_tail: StderrTail,
        registry: GroupRegistry | None,
        tag: str | None = None,
    ) -> None:
        self.name = name
        self.pid = popen.pid
        self.pgid = popen.pid
        # What tells the server's descendants apart once they left its tree (``proctree``).
        self.tag = tag
        state = proc_state(popen.pid)
        self.start_ticks = state[2] if state is not None else 0
        self._group = GroupProbe(popen.pid)
        self.stderr_tail = stderr_tail
        self._popen = popen
        self._stdin = PipeSendStream(stdin_fd)
        self._stdout = PipeReceiveStream(stdout_fd)
        self._stderr = PipeReceiveStream(stderr_fd)
        self._pidfd = open_pidfd(popen.pid)
        self._registry = registry
        self._record: Path | None = None
        self._exited = anyio.Event()
        self._stderr_closed = anyio.Event()
        self._stopped = anyio.Event()
        self._stopping = False
        self._escalated = False
        self._released = False

    @property
    def stdin(self) -> ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def returncode(self) -> int | None:
        return self._reap()

    @property
    def stopping(self) -> bool:
        """True from the first ``stop()`` call on."""
        return self._stopping

    async def wait(self) -> int:
        """Wait for the leader to exit and return its code (members of its group may live on)."""
        while (code := self._reap()) is None:
            with anyio.move_on_after(_WAIT_BACKSTOP_INTERVAL):
                await self._exited.wait()
        return code

    async def stderr_closed(self) -> None:
        """Wait until everything the process wrote to stderr is in its tail (EOF, or released)."""
        await self._stderr_closed.wait()

    async def stop(self, *, stdin_grace: float = 2.0, term_grace: float = 2.0) -> None:
        """Close stdin, wait, SIGTERM the group, wait, SIGKILL the group; release every fd.

        Idempotent. A second ``stop()`` while one runs sends SIGKILL to the group at once and
        returns when the first has finished. Shielded: cancelling the caller cannot skip it,
        and every wait inside is bounded.
        """
        with anyio.CancelScope(shield=True):
            if self._stopped.is_set():
                return
            if self._stopping:
                self._escalated = True
                if self._group.alive():
                    signal_group(self.pgid, signal.SIGKILL)
                await self._stopped.wait()
                return
            self._stopping = True
            try:
                await self._shutdown(stdin_grace, term_grace)
            finally:
                self.release()
                self._stopped.set()

    def hand_off(self) -> HandedOff | None:
        """Close stdin and every fd, and return the still-running tree for a detached stop
        (``core.processes.detached_stop``): the orbmcp program is about to exit and nobody waits for the
        stop. Its registry record stays until that stop removes it. None when nothing runs any
        more (then released as by ``stop``) or a stop already began."""
        if self._stopping:
            return None
        self._stopping = True
        running = self._reap() is None
        if not running and not self._group.alive():
            self.release()
            self._stopped.set()
            return None
        # Found while the tree is intact: once orbmcp exits, the leader's children belong to init.
        escaped = escaped_descendants(self.pid, self.pgid) if running else []
        record, self._record = self._record, None
        self.release()  # stdin EOF: most servers exit on it before the detached stop even starts
        self._stopped.set()
        return HandedOff(
            self.name,
            self.pgid,
            escaped,
            None if record is None else str(record),
            self.tag,
            self.start_ticks,
        )

    def start_tasks(self, task_group: TaskGroup, record: Path | None) -> None:
        """Start the stderr drain and the exit watcher (``spawn`` does, once); ``record`` is the
        registry entry ``stop`` removes."""
        self._record = record
        task_group.start_soon(self._drain_stderr, name=f"orbmcp stderr drain: {self.name}")
        task_group.start_soon(self._watch_exit, name=f"orbmcp exit watcher: {self.name}")

    def _reap(self) -> int | None:
        code = self._popen.poll()
        if code is not None and not self._exited.is_set():
            self._exited.set()
        return code

    async def _shutdown(self, stdin_grace: float, term_grace: float) -> None:
        # Take stdout from its reader and discard it while stopping: a server blocked writing
        # to a full stdout pipe would never see stdin EOF.
        stdout_fd = self._stdout.detach()
        # Descendants that left the group, looked for whenever the tree may have grown: now, right
        # before SIGTERM and right before SIGKILL (a helper started on stdin EOF or on SIGTERM),
        # and by tag once the group is gone (a helper whose parent exited belongs to init).
        escaped = self._escapees()
        async with anyio.create_task_group() as discard:
            if stdout_fd >= 0:
                discard.start_soon(discard_until_eof, stdout_fd)
            self._stdin.close_now()
            exited = await self._wait_leader(stdin_grace)
            if not (exited and not self._group.alive()):
                escaped.update(self._escapees())
                await self._terminate_group(term_grace, escaped)
            # A /proc scan (~10 ms with a hundred processes): off the event loop.
            escaped.update(await anyio.to_thread.run_sync(self._tagged))
            if escaped:
                await stop_escaped(self.name, sorted(escaped.items()), term_grace)
            discard.cancel_scope.cancel()
        close_fd(stdout_fd)

    def _escapees(self) -> dict[int, int]:
        """Descendants outside the group, by walking down from the leader while it lives."""
        if self._reap() is not None:
            return {}
        return dict(escaped_descendants(self.pid, self.pgid))

    def _tagged(self) -> dict[int, int]:
        if self.tag is None:
            return {}
        return dict(tagged_processes(self.tag, self.start_ticks, outside_group=self.pgid))

    async def _terminate_group(self, term_grace: float, escaped: dict[int, int]) -> None:
        # Also when the leader already exited: its children (npx/uvx launchers, forked helpers)
        # keep the group alive, and the SDK skips exactly this case.
        if not self._escalated:
            signal_group(self.pgid, signal.SIGTERM)
            if await self._wait_group_gone(term_grace):
                return
        escaped.update(self._escapees())
        signal_group(self.pgid, signal.SIGKILL)
        if not await self._wait_group_gone(KILL_REAP_TIMEOUT):
            _log.warning(
                "server %r: process group %d still alive %.1fs after SIGKILL; abandoning it",
                self.name,
                self.pgid,
                KILL_REAP_TIMEOUT,
            )

    async def _wait_leader(self, timeout: float) -> bool:
        deadline = anyio.current_time() + timeout
        while self._reap() is None:
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                return False
            with anyio.move_on_after(min(GROUP_POLL_INTERVAL, remaining)):
                await self._exited.wait()
        return True

    async def _wait_group_gone(self, timeout: float) -> bool:
        deadline = anyio.current_time() + timeout
        # Reaping first matters: an unreaped leader is a zombie member of its own group.
        while self._reap() is None or self._group.alive():
            if anyio.current_time() >= deadline:
                return False
            await anyio.sleep(GROUP_POLL_INTERVAL)
        return True

    def release(self) -> None:
        """Close every fd and drop the registry record; the tree must be gone (``stop`` ends it
        first, ``spawn`` after a failed start). Idempotent."""
        if self._released:
            return
        self._released = True
        self._stdin.close_now()
        self._stdout.close_now()
        # The group is dead, so what is left in the stderr pipe is the final output (a crash
        # traceback): read it here rather than wait for the drain task, which may be gone.
        self.stderr_tail.feed(self._stderr.read_nowait(_FINAL_STDERR_LIMIT))
        self.stderr_tail.flush()
        self._stderr.close_now()
        self._stderr_closed.set()
        pidfd, self._pidfd = self._pidfd, -1
        if pidfd >= 0:
            anyio.notify_closing(pidfd)
            close_fd(pidfd)
        if self._registry is not None and self._record is not None:
            self._registry.remove(self._record)
            self._record = None

    async def _drain_stderr(self) -> None:
        # Without a reader the child blocks once the 64 KiB pipe is full and stops answering.
        try:
            with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                while True:
                    self.stderr_tail.feed(await self._stderr.receive())
        finally:
            self.stderr_tail.flush()
            self._stderr_closed.set()

    async def _watch_exit(self) -> None:
        pidfd = self._pidfd
        if pidfd >= 0:
            # A pidfd turns readable when the process exits: no polling while it runs.
            with suppress(anyio.ClosedResourceError):
                await anyio.wait_readable(pidfd)
        while self._reap() is None and not self._released:
            await anyio.sleep(_WATCH_POLL_INTERVAL)


__all__ = ["ManagedProcess", "exit_reason"]
