"""A one-shot shell command's session: connect what the handler asks for, run it, stop everything.

A command that may find nothing to connect (an empty ``status``) is first run without an event
loop: the handler finishes before asking for the session, so neither asyncio nor anyio is
imported. When it does ask (``ctx.manager()``), it is run again from the start under the loop;
such commands do nothing before that they could not do twice (``CommandSpec.offline_first``).
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any

from orbmcp.errors import Interrupted
from orbmcp.session.terminal import TerminalUI

if TYPE_CHECKING:
    import anyio
    from anyio.abc import TaskGroup, TaskStatus

    from orbmcp.commands.context import CommandContext
    from orbmcp.core.processes.detached_stop import HandedOff
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.runtime import Runtime


class NeedsEventLoop(BaseException):  # a signal to the runner, never an error
    """Raised by a loop-free run's session when the handler asks for it. A BaseException, so a
    handler's ``except Exception`` cannot swallow it."""


def run_connecting(
    handler: Callable[..., Coroutine[Any, Any, Any]], ctx: CommandContext, *args: Any, offline_first: bool
) -> Any:
    """Run a connecting handler coroutine function for the shell: without a loop when it can
    finish that way, else under anyio with signal handling."""
    sessions = ctx.sessions
    if offline_first and isinstance(sessions, OneShotSessions):
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


class OneShotSessions:
    """A Manager that lives for one shell command; closing stops every server it started.

    With an ``owner`` task group (``run_with_signals`` gives one), the Manager lives in a task of
    its own there, outside the handler's cancel scope: a Ctrl-C cancels the handler while its
    connections still stand, so what it sends on the way out (``tasks/cancel``,
    ``notifications/cancelled``) reaches the server before everything stops."""

    persistent = False
    daemon_pid: int | None = None

    def __init__(self, *, hand_off_at_exit: bool = False) -> None:
        """``hand_off_at_exit``: this is the orbmcp program, which exits right after the command;
        its servers' stop is handed to a detached process (``launch_detached_stop``)."""
        self.hand_off_at_exit = hand_off_at_exit
        self.handed_off: list[HandedOff] = []
        self._exited: Runtime | None = None  # the runtime of the manager that handed off
        self.loop_free = False  # a loop-free attempt (run_connecting): asking for the session stops it
        self._manager: Manager | None = None
        self.owner: TaskGroup | None = None
        self._closing: anyio.Event | None = None
        self._closed: anyio.Event | None = None

    async def manager(self, ctx: CommandContext) -> Manager:
        if self.loop_free:
            raise NeedsEventLoop
        if self._manager is None:
            import anyio

            from orbmcp.core.session.manager import Manager

            m = Manager(
                ctx.config(),
                retries=False,
                interactive=ctx.ui.interactive,
                auth_ui=ctx.ui,
                asker=ctx.ui,
            )
            if self.owner is not None:
                self._closing, self._closed = anyio.Event(), anyio.Event()
                await self.owner.start(self._own, m)
            else:
                await m.__aenter__()
            self._manager = m
        return self._manager

    async def _own(self, m: Manager, *, task_status: TaskStatus[None]) -> None:
        assert self._closing is not None and self._closed is not None
        try:
            async with m:
                task_status.started()
                await self._closing.wait()
        finally:
            self._closed.set()

    async def __aenter__(self) -> OneShotSessions:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        m, self._manager = self._manager, None
        if m is None:
            return
        m.hand_off_at_exit = self.hand_off_at_exit  # off again after a signal: stop it all now
        if self._closing is not None and self._closed is not None:
            import anyio

            self._closing.set()
            with anyio.CancelScope(shield=True):
                await self._closed.wait()
        else:
            # Manager.__aexit__ shields the stopping itself; its task group must be left in the
            # same cancel scope it was entered in, so no extra shield here.
            await m.__aexit__(None, None, None)
        self.handed_off.extend(m.runtime.handed_off or ())
        self._exited = m.runtime

    def launch_detached_stop(self) -> None:
        """After the command's output: start the detached stop of what was handed off."""
        groups, self.handed_off = self.handed_off, []
        runtime = self._exited
        if groups and runtime is not None:
            from orbmcp.core.processes.detached_stop import launch

            # The same log and grace periods as the session's own stop.
            launch(
                groups,
                global_dir=runtime.global_dir,
                stdin_grace=runtime.stdin_grace_s,
                term_grace=runtime.term_grace_s,
            )


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
        if isinstance(sessions, OneShotSessions):
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
            if isinstance(sessions, OneShotSessions):
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
