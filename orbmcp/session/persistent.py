"""A session that outlives commands: one Manager for the REPL, the daemon and agent hosts.

Servers stay connected between commands, reconnect on the retry schedule, and eager servers start
when the session opens. The Manager's task group belongs to a task of this session (never to the
command that first needed it), so any command task may come and go, or be cancelled by Ctrl-C,
without touching the connections. Leaving the ``async with`` block stops every server.

    async with PersistentSessions(config, ui=ui) as sessions:
        ctx = CommandContext(ui=ui, sessions=sessions, front="host")
        reply = await run_slash("/mcp:start github", ctx)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING

import anyio

from orbmcp.errors import ConnectionFailed

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus

    from orbmcp.commands.context import UI, CommandContext
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.session.manager import Manager


class PersistentSessions:
    """SessionProvider whose Manager lives as long as the ``async with`` block."""

    persistent = True
    daemon_pid: int | None = None  # set by the session daemon that owns this session

    def __init__(
        self,
        config: ResolvedConfig,
        *,
        ui: UI | None = None,
        interactive: bool | None = None,
        start_eager: bool = True,
        retries: bool = True,
    ) -> None:
        self._config = config
        self._ui = ui
        self._interactive = (
            bool(ui.interactive if ui is not None else False) if interactive is None else interactive
        )
        self._start_eager = start_eager
        self._retries = retries
        self._manager: Manager | None = None
        self._tg: TaskGroup | None = None
        self._closing = anyio.Event()
        self._lock = anyio.Lock()
        self._eager_done = anyio.Event()

    @property
    def config(self) -> ResolvedConfig:
        """The configuration the servers run with: the Manager's once it exists (a command such
        as ``enable`` or ``add`` may have moved the session to a new one)."""
        return self._manager.config if self._manager is not None else self._config

    @config.setter
    def config(self, value: ResolvedConfig) -> None:
        self._config = value

    # -- SessionProvider ---------------------------------------------------------------------------

    async def manager(self, ctx: CommandContext | None = None) -> Manager:
        async with self._lock:
            if self._manager is None:
                if self._tg is None:
                    raise ConnectionFailed("the session is closed")
                self._manager = await self._tg.start(self._own_manager)
        return self._manager

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> PersistentSessions:
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        try:
            if self._start_eager and self.config.eager_servers():
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
        tg, self._tg = self._tg, None
        self._closing.set()
        if tg is None:
            return None
        # The task group's own scope must be the innermost one here; Manager.__aexit__ shields the
        # stopping of servers itself.
        return await tg.__aexit__(et, ev, tb)

    async def _own_manager(self, *, task_status: TaskStatus[Manager]) -> None:
        from orbmcp.core.session.manager import Manager

        # The session's own UI answers servers that ask between commands (the REPL's terminal); a
        # daemon has none: a question with no command waiting on its server is declined.
        manager = Manager(
            self.config,
            retries=self._retries,
            interactive=self._interactive,
            auth_ui=self._ui,
            asker=self._ui,
        )
        async with manager:
            task_status.started(manager)
            await self._closing.wait()
        self._manager = None

    async def _connect_eager(self, manager: Manager) -> None:
        try:
            await manager.start_eager()
        except Exception as exc:
            # Each server's failure is in its own status; this only guards the session itself.
            if self._ui is not None:
                self._ui.notify(f"starting eager servers failed: {exc}", level="warning")
        finally:
            self._eager_done.set()

    async def wait_eager(self) -> None:
        """Until every eager server has settled its first attempt (each bounded by its timeoutMs)."""
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
