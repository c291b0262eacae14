"""The one holder of a front's Manager, under a policy: one-shot or persistent.

Every front gets its connections from a ``Sessions``; what differs between them is its
``SessionPolicy``:

- one-shot (``ONE_SHOT``, the shell's commands): the Manager is made for the command that first asks,
  from that command's config and UI, with no retries, and closing stops every server. Run by
  ``session.one_shot.run_with_signals``, the Manager lives in a task of the runner's task group
  (``owner``), outside the handler's cancel scope, so what a Ctrl-C'd handler sends on its way out
  (``tasks/cancel``) reaches the server before the stop. ``hand_off_at_exit``: the orbmcp program,
  about to exit, hands its servers' stop to a detached process (``launch_detached_stop``).
- persistent (``PERSISTENT``: the REPL, the daemon, ``serve``, agent hosts, the pytest plugin): the
  servers outlive commands, reconnect on the retry schedule, and the eager ones start when the
  ``async with`` block opens. The Manager lives in a task of the holder's own task group (never the
  command that first needed it), so command tasks may come and go, or be cancelled, without touching
  the connections. Leaving the block stops every server; a closed holder refuses to connect.

    async with Sessions(PERSISTENT, config, ui=ui) as sessions:
        ctx = CommandContext(ui=ui, sessions=sessions, front="host")
        reply = await run_slash("/mcp:start github", ctx)

anyio is imported where it is used, not at the top: an empty ``status`` makes a one-shot holder and
finishes without an event loop (``session.one_shot``), and pinned import sets keep anyio out of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from orbmcp.errors import ConnectionFailed, OrbError

if TYPE_CHECKING:
    import anyio
    from anyio.abc import TaskGroup, TaskStatus

    from orbmcp.commands.context import UI, CommandContext
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.capabilities import ClientFeatures
    from orbmcp.core.processes.detached_stop import HandedOff
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.runtime import Runtime
    from orbmcp.core.tooling.registry import ToolRegistry


@dataclass(frozen=True)
class SessionPolicy:
    """What differs between a one-shot and a persistent session."""

    persistent: bool  # servers stay connected after the command; the holder owns its task group
    retries: bool  # a failed server reconnects on the retry schedule (else: its first failure)
    start_eager: bool  # eager servers start when the holder opens
    hand_off_at_exit: bool = False  # the orbmcp program: a detached process stops the servers


ONE_SHOT = SessionPolicy(persistent=False, retries=False, start_eager=False)
ONE_SHOT_PROGRAM = SessionPolicy(persistent=False, retries=False, start_eager=False, hand_off_at_exit=True)
PERSISTENT = SessionPolicy(persistent=True, retries=True, start_eager=True)


class NeedsEventLoop(BaseException):  # a signal to the runner, never an error
    """Raised by a loop-free run's session when the handler asks for it. A BaseException, so a
    handler's ``except Exception`` cannot swallow it."""


def _closed() -> OrbError:
    return ConnectionFailed("the session is closed")


class Sessions:
    """The SessionProvider of every front: one Manager, held as ``policy`` says."""

    def __init__(
        self,
        policy: SessionPolicy,
        config: ResolvedConfig | None = None,
        *,
        ui: UI | None = None,
        interactive: bool | None = None,
        daemon_pid: int | None = None,
        closed: Callable[[], OrbError] = _closed,
        tools: ToolRegistry | None = None,
        features: ClientFeatures | None = None,
        project_roots: bool = False,
    ) -> None:
        """``config``/``ui``: the session's own; None for a one-shot session takes the asking
        command's. A persistent session's ``ui`` answers servers that ask between commands (the
        REPL's terminal); without one (a daemon) such a question is declined. ``closed``: the error
        a persistent session that is not open answers with. ``tools``, ``features`` and
        ``project_roots`` go to the Manager (an agent host's)."""
        self.policy = policy
        self.daemon_pid = daemon_pid  # the session daemon that owns this session
        self.hand_off_at_exit = policy.hand_off_at_exit  # off again after a signal: stop it all now
        self.handed_off: list[HandedOff] = []
        self.loop_free = False  # a loop-free attempt (run_connecting): asking for the session stops it
        self.owner: TaskGroup | None = None  # the task group the Manager's task runs in
        self._config = config
        self._ui = ui
        self._interactive = interactive
        self._closed_error = closed
        self._tools, self._features, self._project_roots = tools, features, project_roots
        self._manager: Manager | None = None
        self._exited: Runtime | None = None  # the runtime of the manager that handed off
        self._tg: TaskGroup | None = None  # the holder's own (persistent, while open)
        self._lock: anyio.Lock | None = None
        self._closing: anyio.Event | None = None
        self._stopped: anyio.Event | None = None
        self._eager_done: anyio.Event | None = None

    @property
    def persistent(self) -> bool:
        return self.policy.persistent

    @property
    def config(self) -> ResolvedConfig:
        """The configuration the servers run with: the Manager's once it exists (a command such
        as ``enable`` or ``add`` may have moved the session to a new one)."""
        if self._manager is not None:
            return self._manager.config
        assert self._config is not None, "a persistent session is given its configuration"
        return self._config

    @config.setter
    def config(self, value: ResolvedConfig) -> None:
        self._config = value

    # -- SessionProvider ---------------------------------------------------------------------------

    async def manager(self, ctx: CommandContext | None = None) -> Manager:
        if self.loop_free:
            raise NeedsEventLoop
        if self._manager is None and self.policy.persistent and self.owner is None:
            raise self._closed_error()  # before the lock: a holder that never opened has no loop
        import anyio

        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._manager is None:
                self._manager = await self._open_manager(ctx)
        return self._manager

    async def _open_manager(self, ctx: CommandContext | None) -> Manager:
        import anyio

        from orbmcp.core.session.manager import Manager

        if self.policy.persistent and self.owner is None:
            raise self._closed_error()
        config, ui = self._config, self._ui
        if not self.policy.persistent and ctx is not None:  # the command is the session
            config, ui = config or ctx.config(), ctx.ui
        assert config is not None, "a one-shot session is asked for by a command"
        interactive = self._interactive
        if interactive is None:
            interactive = bool(ui.interactive) if ui is not None else False
        m = Manager(
            config,
            retries=self.policy.retries,
            interactive=interactive,
            auth_ui=ui,
            asker=ui,
            tools=self._tools,
            features=self._features,
            project_roots=self._project_roots,
        )
        if self.owner is not None:
            self._closing, self._stopped = anyio.Event(), anyio.Event()
            await self.owner.start(self._own, m, self._closing, self._stopped)
        else:
            await m.__aenter__()  # a one-shot session outside a runner: the caller's task holds it
        return m

    async def _own(
        self, m: Manager, closing: anyio.Event, stopped: anyio.Event, *, task_status: TaskStatus[None]
    ) -> None:
        try:
            async with m:
                task_status.started()
                await closing.wait()
        finally:
            self._manager = None
            stopped.set()

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> Sessions:
        import anyio

        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = self.owner = tg
        self._eager_done = anyio.Event()
        try:
            if self.policy.start_eager and self.config.eager_servers():
                manager = await self.manager()
                tg.start_soon(self._connect_eager, manager)
            else:
                self._eager_done.set()
        except BaseException as exc:
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        """Stop every server. A one-shot runner's owner is left to its runner; the holder's own
        task group ends here, its scope the innermost one (Manager.__aexit__ shields the stop)."""
        tg, self._tg = self._tg, None
        m = self._manager
        if m is not None:
            m.hand_off_at_exit = self.hand_off_at_exit
        closing, stopped = self._closing, self._stopped
        self._closing = self._stopped = None
        self.owner = None
        if closing is not None:
            closing.set()
        try:
            if tg is not None:
                return await tg.__aexit__(et, ev, tb)
            if stopped is not None:
                import anyio

                with anyio.CancelScope(shield=True):
                    await stopped.wait()
            elif m is not None:
                self._manager = None
                await m.__aexit__(None, None, None)
            return None
        finally:
            if m is not None:
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

    async def _connect_eager(self, manager: Manager) -> None:
        try:
            await manager.start_eager()
        except Exception as exc:
            # Each server's failure is in its own status; this only guards the session itself.
            if self._ui is not None:
                self._ui.notify(f"starting eager servers failed: {exc}", level="warning")
        finally:
            assert self._eager_done is not None
            self._eager_done.set()

    async def wait_eager(self) -> None:
        """Until every eager server has settled its first attempt (each bounded by its timeoutMs)."""
        if self._eager_done is not None:
            await self._eager_done.wait()

    # -- what completion may ask ------------------------------------------------------------------

    def running_names(self) -> set[str]:
        """Servers this session runs (connecting, ready or waiting to retry)."""
        m = self._manager
        if m is None:
            return set()
        return {name for name, sup in list(m.supervisors.items()) if sup.running}

    def tool_names(self) -> Mapping[str, list[str]]:
        m = self._manager
        if m is None:
            return {}
        out: dict[str, list[str]] = {}
        for tool in m.tools.all():
            out.setdefault(tool.server, []).append(tool.name)
        return out

    def snapshot(self) -> tuple[set[str], Mapping[str, list[str]]]:
        return self.running_names(), self.tool_names()

    @property
    def started(self) -> bool:
        return self._manager is not None
