"""A long call in a pipe says now and then that it still waits, for CI logs.

On a terminal the live progress line shows a call is alive; in a pipe (a CI job's log) nothing
does, and a call that takes minutes looks hung. A shell front whose stderr is not a terminal sets
``CommandContext.pipe_notes_s``, and ``call`` then writes ``still waiting on SERVER/TOOL (30 s)``
to stderr as a notice. Never in ``--json`` mode (its stderr holds the one-line error envelope a
script parses), never in an agent's front (it has its own progress), and bounded: every
``pipe_notes_s`` for the first minute's worth, then six times less often, at most ``MAX_NOTES``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Iterator
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from orbmcp.commands.context import CommandContext

T = TypeVar("T")

PIPE_NOTE_EVERY_S = 10.0
_FIRST_NOTES = 6  # at the first interval; then the interval is six times as long
MAX_NOTES = 60


def note_times(every: float) -> Iterator[float]:
    """When each note is due, in seconds after the call began: 10, 20, ... 60, 120, 180, ..."""
    due = 0.0
    for n in range(MAX_NOTES):
        due += every if n < _FIRST_NOTES else every * _FIRST_NOTES
        yield due


async def _notes(ctx: CommandContext, what: str, every: float) -> None:
    import anyio  # the config commands import this module and must not load anyio

    began = time.monotonic()
    for due in note_times(every):
        await anyio.sleep(max(0.0, began + due - time.monotonic()))
        ctx.ui.notify(f"still waiting on {what} ({time.monotonic() - began:.0f} s)")


async def noting(ctx: CommandContext, what: str, waiting: Awaitable[T]) -> T:
    """``await waiting``, with a note on stderr now and then when the front asked for them."""
    every = ctx.pipe_notes_s
    if not every or ctx.json:
        return await waiting
    import anyio  # here: the shell front imports this module for PIPE_NOTE_EVERY_S on fast paths

    failed: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(_notes, ctx, what, every)
        try:
            result = await waiting
        except Exception as exc:  # raised as itself below, not inside the task group's group
            failed = exc
        tg.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return result
