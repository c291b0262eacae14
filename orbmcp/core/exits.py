"""Saying how a stdio server ended: its exit code and the last lines it wrote to stderr.

A server that dies (``fatal: missing API_KEY``, exit code 3) must not be reported as a vague
"closed the connection" with the cause only in ``status NAME``: connect and call errors name the
exit code and the last stderr lines (masked like the detail view's recent output).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio

from orbmcp.core.process import exit_reason

if TYPE_CHECKING:
    from orbmcp.core.process import ManagedProcess

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
