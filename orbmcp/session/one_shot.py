"""A one-shot shell command's run: connect what the handler asks for, run it, stop everything.

The session is a ``Sessions`` holder under the one-shot policy (``session.holder``).

A command that may find nothing to connect (an empty ``status``) is first run without an event
loop: the handler finishes before asking for the session, so neither asyncio nor anyio is
imported. When it does ask (``ctx.manager()``), it is run again from the start under the loop;
such commands do nothing before that they could not do twice (``CommandSpec.offline_first``).
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeGuard

from orbmcp.errors import Interrupted
from orbmcp.session.holder import NeedsEventLoop, Sessions
from orbmcp.session.terminal import TerminalUI

if TYPE_CHECKING:
    from anyio.abc import TaskStatus

    from orbmcp.commands.context import CommandContext


def run_connecting(
    handler: Callable[..., Coroutine[Any, Any, Any]], ctx: CommandContext, *args: Any, offline_first: bool
) -> Any:
    """Run a connecting handler coroutine function for the shell: without a loop when it can
    finish that way, else under anyio with signal handling."""
    sessions = ctx.sessions
    if offline_first and _one_shot(sessions):
        sessions.loop_free = True
        try:
            finished, result = _without_loop(handler(*args))
        finally:
            sessions.loop_free = False
        if finished:
            return result
    import anyio

    return anyio.run(run_with_signals, handler, *args)


def _without_loop(coro: Coroutine[Any, Any, Any]) -> tuple[bool, Any]:
    """Step the coroutine once: (True, its result) when it finished without suspending."""
    try:
        coro.send(None)
    except StopIteration as done:
        return True, done.value
    except NeedsEventLoop:
        return False, None
    except RuntimeError:
        # "no running event loop" (anyio, asyncio): it reached for the loop before the session.
        # A RuntimeError of its own happens again under the loop, and is reported from there.
        return False, None
    coro.close()  # it awaited something real before asking for the session: run it under the loop
    return False, None


def _one_shot(sessions: object) -> TypeGuard[Sessions]:
    return isinstance(sessions, Sessions) and not sessions.persistent


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


async def run_with_signals(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """Run a connecting handler; SIGINT/SIGTERM/SIGHUP cancel it and every child is stopped."""
    import anyio

    ctx: CommandContext = next(a for a in args if hasattr(a, "sessions"))
    sessions = ctx.sessions
    received: list[int] = []
    result: Any = None
    error: Exception | None = None
    work = anyio.CancelScope()  # the handler's: a signal cancels it, not the servers' owner task
    async with anyio.create_task_group() as tg:
        if _one_shot(sessions):
            sessions.owner = tg

        async def watch(*, task_status: TaskStatus[None]) -> None:
            with anyio.open_signal_receiver(*_SIGNALS) as signals:
                task_status.started()
                async for signum in signals:
                    received.append(signum)
                    work.cancel()
                    return

        # Started, not just scheduled: the signals are orbmcp's before the handler runs (a
        # SIGTERM while it waits on its input in a thread must cancel it, not kill the process).
        await tg.start(watch)
        try:
            with work:
                result = await fn(*args)
        except Exception as exc:  # raised again below, outside the task group: no ExceptionGroup
            error = exc
        finally:
            if _one_shot(sessions):
                if received:  # "every server was stopped" must be true when orbmcp says so
                    sessions.hand_off_at_exit = False
                await sessions.__aexit__(None, None, None)
            if isinstance(ctx.ui, TerminalUI):
                ctx.ui.end_progress()
        tg.cancel_scope.cancel()
    if received:
        raise Interrupted(f"interrupted by {signal.Signals(received[0]).name}; every server was stopped")
    if error is not None:
        raise error
    return result
