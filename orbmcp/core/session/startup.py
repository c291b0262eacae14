"""Waiting for eager servers at a session's start-up: each server's first attempt, not its retries.

``Manager.start_many`` settles only when a server is ready or out of retries, which with retries
on is about 50 s for a dead server. One unavailable server must neither block the session's start
nor delay the others, so start-up waits for each first attempt (bounded by the server's own
``timeoutMs``); retries continue in the background. Used by the agent fronts (the host API,
``orbmcp serve``); their ``notify`` spells the command references of what it is told.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import anyio

from orbmcp.core.session.state import State

if TYPE_CHECKING:
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.supervisor import Supervisor

FIRST_ATTEMPT_SLACK_S = 5.0  # beyond timeoutMs: a stdio child that ignores shutdown gets killed
FIRST_ATTEMPT_POLL_S = 0.05


async def first_attempts(
    manager: Manager, names: Sequence[str], notify: Callable[[str, str], None], *, start: bool = True
) -> None:
    """Connect ``names`` concurrently (``start=False``: they are already connecting) and return once
    each has had its first attempt; ``notify(message, level)`` each that failed it and retries
    (the message names commands with ``cmd`` references, unspelled)."""
    sups = [manager.get(n) for n in names]
    if not sups:
        return
    limit = max(s.cfg.timeout_ms for s in sups) / 1000 + FIRST_ATTEMPT_SLACK_S
    async with anyio.create_task_group() as tg:

        async def settle() -> None:
            if start:
                await manager.start_many(names)
            else:
                for sup in sups:
                    await sup.wait_settled()
            tg.cancel_scope.cancel()

        tg.start_soon(settle)
        with anyio.move_on_after(limit):
            while not all(first_attempt_done(s) for s in sups):
                await anyio.sleep(FIRST_ATTEMPT_POLL_S)  # no supervisor event marks a failed try
        tg.cancel_scope.cancel()  # only the waiting stops: supervisors live in the manager
    for sup in sups:
        if sup.snap.retries >= 1 and sup.running:
            error = sup.snap.last_error or "did not connect"
            notify(f"MCP server '{sup.name}' failed to start: {error}; retrying in the background", "warning")


def first_attempt_done(sup: Supervisor) -> bool:
    """Ready, failed, waiting for authorization, or waiting for its first retry."""
    if sup.state in (State.READY, State.FAILED, State.NEEDS_AUTH):
        return True
    return sup.state == State.STARTING and sup.snap.retries >= 1
