"""Saying how a stdio server ended: its exit code and the last lines it wrote to stderr.

A server that dies (``fatal: missing API_KEY``, exit code 3) must not be reported as a vague
"closed the connection" with the cause only in ``status NAME``: connect and call errors name the
exit code and the last stderr lines (masked like the detail view's recent output).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from orbmcp.core.processes.process import exit_reason

if TYPE_CHECKING:
    from orbmcp.core.processes.process import ManagedProcess

TAIL_LINES = 3
TAIL_CHARS = 300
# After stdout closed: how long to wait for the process to be reaped, then for its stderr to end.
EXIT_WAIT_S = 2.0
STDERR_WAIT_S = 0.5


def exit_text(name: str, code: int, tail: Sequence[str], *, during: str = "") -> str:
    """``server 'x' exited with code 3 during tools/call boom; last stderr: fatal: missing API_KEY``."""
    said = " | ".join(line for line in tail[-TAIL_LINES:] if line)
    if len(said) > TAIL_CHARS:
        said = "…" + said[-(TAIL_CHARS - 1) :]
    where = f" {during}" if during else ""
    return f"server '{name}' {exit_reason(code)}{where}" + (f"; last stderr: {said}" if said else "")


async def settle_exit(process: ManagedProcess) -> int | None:
    """The exit code of a server whose connection just died, once its stderr is in the tail;
    None when it is still running after a short wait (it closed stdout but lives on)."""
    code = process.returncode
    if code is None:
        with anyio.move_on_after(EXIT_WAIT_S):
            code = await process.wait()
    if code is not None:
        with anyio.move_on_after(STDERR_WAIT_S):
            await process.stderr_closed()
    return code


class ExitRace:
    """Races one connection attempt against the exit of the stdio server it started.

    A server that exits before it is ready is an event, reported at once with its exit code and
    stderr tail: not a handshake that waits for an EOF (which a loaded machine delivers late, and a
    descendant that inherited stdout never delivers) until the connect deadline. ``begin`` takes the
    attempt's cancel scope; each process the attempt spawns is watched (``spawned``); an exit of its
    own (not orbmcp's stop) before ``ready`` sets ``code`` and cancels the attempt; ``end`` stops
    the watching.
    """

    def __init__(self) -> None:
        self.code: int | None = None
        self._attempt: anyio.CancelScope | None = None
        self._watchers: list[anyio.CancelScope] = []

    def begin(self, attempt: anyio.CancelScope) -> None:
        self.code = None
        self._attempt = attempt

    def spawned(self, process: ManagedProcess, task_group: TaskGroup) -> None:
        watcher = anyio.CancelScope()
        self._watchers.append(watcher)
        task_group.start_soon(self._watch, process, self._attempt, watcher)

    def ready(self) -> None:
        self._attempt = None  # from here on an exit is a lost connection (the serve loop's)

    def end(self) -> None:
        self._attempt = None
        for watcher in self._watchers:
            watcher.cancel()
        self._watchers.clear()

    async def _watch(
        self, process: ManagedProcess, attempt: anyio.CancelScope | None, watcher: anyio.CancelScope
    ) -> None:
        with watcher:
            code = await process.wait()
            if attempt is None or attempt is not self._attempt or process.stopping:
                return
            with anyio.move_on_after(STDERR_WAIT_S):
                await process.stderr_closed()  # its last words belong in the report
            if attempt is self._attempt and not process.stopping:
                self.code = code
                attempt.cancel()
