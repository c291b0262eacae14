"""The manager: every supervisor of one session, and the task group that owns them.

Used as ``async with Manager(config, ...) as m``. Leaving the block stops every server, the ones
still connecting included, with their process trees (shielded, so Ctrl-C cannot skip it).
``apply_config`` moves a running session to a new configuration, touching only what changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp import log
from orbmcp.core.capabilities import ClientFeatures
from orbmcp.core.processes.reaper import GroupRegistry
from orbmcp.core.session.hints import failure_error
from orbmcp.core.session.runtime import Runtime
from orbmcp.core.session.supervisor import Supervisor
from orbmcp.core.tooling.registry import ToolRegistry
from orbmcp.errors import ConnectionFailed, cmd
from orbmcp.suggest import unknown_server

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from orbmcp.config.model import ResolvedConfig, ServerConfig

# What a request cut short by a config change says happened to its server.
RESTARTED = "restarted because its definition changed"
REMOVED = "stopped because it was removed from the configuration"


def _secrets_of(servers: Iterable[ServerConfig]) -> tuple[str, ...]:
    """Configured header and env values: masked wherever they might be echoed back."""
    out: set[str] = set()
    for s in servers:
        for value in [*s.headers.values(), *s.env.values()]:
            if len(value) >= 4:
                out.add(value)
                if " " in value:  # "Bearer xyz": the credential part alone too
                    out.add(value.split(" ", 1)[1])
        if s.auth and s.auth.client_secret:
            out.add(s.auth.client_secret)
    return tuple(sorted(out, key=len, reverse=True))


@dataclass(frozen=True)
class ConfigChange:
    """What ``Manager.apply_config`` did, by server name (each tuple in configuration order)."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()  # its entry differs: the old supervisor stopped, a new one replaced it
    removed: tuple[str, ...] = ()
    started: tuple[str, ...] = ()  # connecting now: new or changed, and eager or running before

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


class Manager:
    def __init__(
        self,
        config: ResolvedConfig,
        *,
        retries: bool = True,
        interactive: bool = False,
        auth_ui: Any = None,
        tools: ToolRegistry | None = None,
        asker: Any = None,
        features: ClientFeatures | None = None,
        project_roots: bool = False,
    ) -> None:
        """``asker`` answers servers' questions when no command waits on them (the session's own
        front; see ``orbmcp.core.capabilities.askers``). ``features`` are the client capabilities
        to advertise; by default those the shell fronts honour: elicitation (asked, or declined
        saying so), roots, and sampling when a sampling command is configured.
        ``hand_off_at_exit`` (set before leaving): leaving the manager closes the servers' stdin
        and collects their still-running trees in ``runtime.handed_off`` for a detached stop (only
        the orbmcp program itself, about to exit). ``project_roots``: the project directory is the
        servers' root when nothing else is (an embedder that set its project explicitly)."""
        self.config = config
        log.configure_default(config.global_dir)
        self.runtime = Runtime(
            global_dir=config.global_dir,
            tools=tools
            or ToolRegistry(prefix=config.settings.tool_prefix, naming=config.settings.tool_naming),
            retries_enabled=retries,
            interactive=interactive,
            extra_secrets=_secrets_of(config.servers.values()),
            auth_ui=auth_ui,
            features=features or ClientFeatures(sampling=config.settings.sampling is not None),
            asker=asker,
            project_roots=project_roots,
        )
        self._apply_client_settings(config)
        self.supervisors: dict[str, Supervisor] = {
            name: Supervisor(cfg, config.settings, self.runtime) for name, cfg in config.servers.items()
        }
        self._tg: TaskGroup | None = None
        self.user_stopped: set[str] = set()
        self._stack: AsyncExitStack | None = None
        self._applying = anyio.Lock()
        self.hand_off_at_exit = False

    @property
    def tools(self) -> ToolRegistry:
        return self.runtime.tools

    async def __aenter__(self) -> Manager:
        stack = AsyncExitStack()
        self._tg = await stack.enter_async_context(anyio.create_task_group())
        self.runtime.tg = self._tg
        self._stack = stack
        if any(s.is_stdio for s in self.config.servers.values()):
            # Off the critical path: reaping only touches groups whose owner process is dead, so
            # it can run beside this session's own spawns (psutil's import and a /proc scan).
            self._tg.start_soon(anyio.to_thread.run_sync, self._reap_stale)
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        if self.hand_off_at_exit:
            self.runtime.handed_off = []
        with anyio.CancelScope(shield=True):
            await self.stop_all()
        stack, self._stack, self._tg = self._stack, None, None
        self.runtime.tg = None
        assert stack is not None
        return await stack.__aexit__(et, ev, tb)

    def _apply_client_settings(self, config: ResolvedConfig) -> None:
        runtime = self.runtime
        runtime.sampling = config.settings.sampling
        runtime.project_dir = config.project.dir
        runtime.default_roots = config.settings.roots

    def _reap_stale(self) -> None:
        """Kill process groups that a crashed orbmcp run left behind (verified to be ours)."""
        with suppress(OSError):
            GroupRegistry(self.config.global_dir).reap_stale()

    # -- lookup ----------------------------------------------------------------------------------

    def get(self, name: str) -> Supervisor:
        sup = self.supervisors.get(name)
        if sup is None:
            raise unknown_server(name, list(self.supervisors))
        return sup

    # -- control ---------------------------------------------------------------------------------

    async def start_eager(self) -> None:
        """Connect every eager server concurrently; return once each has settled its first try."""
        await self.start_many([s.name for s in self.config.eager_servers()])

    async def start_many(self, names: Iterable[str]) -> None:
        sups = [self.get(n) for n in names]
        tg = self._require_tg()
        for sup in sups:
            sup.start(tg)
        async with anyio.create_task_group() as waits:
            for sup in sups:
                waits.start_soon(sup.wait_settled)

    async def start(self, name: str) -> Supervisor:
        sup = self.get(name)
        self.user_stopped.discard(name)
        if sup.connected and sup.running:
            return sup
        if sup.running:  # connecting: join that attempt; waiting for a retry: try now
            sup.retry_now()
            await sup.wait_settled()
            return sup
        sup.start(self._require_tg())
        await sup.wait_settled()
        return sup

    async def stop(self, name: str) -> Supervisor:
        """A person's stop: it sticks until they start the server again (calls do not revive it)."""
        sup = self.get(name)
        self.user_stopped.add(name)
        await sup.stop()
        return sup

    async def reconnect(self, name: str | None = None) -> list[Supervisor]:
        names = [name] if name else [n for n, s in self.supervisors.items() if s.running or s.cfg.eager]
        sups = [self.get(n) for n in names]
        async with anyio.create_task_group() as tg:
            for sup in sups:
                tg.start_soon(sup.stop)
        await self.start_many(names)
        return sups

    async def stop_all(self) -> None:
        async with anyio.create_task_group() as tg:
            for sup in self.supervisors.values():
                if sup.running:
                    tg.start_soon(sup.stop)

    async def apply_config(self, config: ResolvedConfig) -> ConfigChange:
        """Make the running session match ``config``; servers whose entry is unchanged are untouched.

        Removed servers are stopped and their tools deactivated and marked gone. A changed entry
        stops its supervisor and gets a fresh one, which connects if the server was running or is
        eager (and not stopped by the person in this session). New eager servers start connecting.
        Returns without waiting for the new connections; ``ConfigChange.started`` names them.
        Settings (tool prefix, retries) stay those the session started with for servers that kept
        their supervisor. Calls are serialised: a second one waits for the first.
        """
        async with self._applying:
            new = config.servers
            removed = tuple(name for name in self.supervisors if name not in new)
            changed = tuple(n for n in new if n in self.supervisors and self.supervisors[n].cfg != new[n])
            added = tuple(name for name in new if name not in self.supervisors)
            was_running = {name for name in changed if self.supervisors[name].running}
            kept = [s for n, s in self.supervisors.items() if n in new and n not in changed]
            roots_before = {s.name: self.runtime.roots_for(s.cfg) for s in kept}
            async with anyio.create_task_group() as tg:
                for name in removed:
                    tg.start_soon(partial(self.supervisors[name].stop, because=REMOVED))
                for name in changed:
                    tg.start_soon(partial(self.supervisors[name].stop, because=RESTARTED))
            for name in removed:
                del self.supervisors[name]
                self.user_stopped.discard(name)
                self.tools.sync(name, (), active=False)  # its tools: gone, not merely inactive
            self.config = config
            self._apply_client_settings(config)
            renew = [  # the project or the roots settings changed under a live connection
                sup
                for sup in kept
                if self.runtime.roots_for(sup.cfg) != roots_before[sup.name] and sup.roots_changed()
            ]
            for sup in renew:  # offered roots now, or no longer: only a new connection says so
                await sup.stop()
                sup.start(self._require_tg())
            self.runtime.add_secrets(_secrets_of(new[name] for name in (*added, *changed)))
            for name in (*changed, *added):
                self.supervisors[name] = Supervisor(new[name], config.settings, self.runtime)
            enabled = {s.name for s in config.enabled_servers()}
            eager = {s.name for s in config.eager_servers()}
            started = tuple(
                name
                for name in new
                if name in (*added, *changed)
                and name in enabled
                and (name in was_running or (name in eager and name not in self.user_stopped))
            )
            tg_owner = self._require_tg()
            for name in started:
                self.supervisors[name].start(tg_owner)
            log.log_event(
                "session.config_applied",
                message=f"added {list(added)}, changed {list(changed)}, removed {list(removed)}",
                count=len(started),
            )
            return ConfigChange(added=added, changed=changed, removed=removed, started=started)

    async def ready(self, name: str) -> Supervisor:
        """The supervisor of a connected server, connecting it (lazy ones too) if needed.

        A server the person stopped in this session is not started behind their back.
        """
        if name in self.user_stopped:
            raise ConnectionFailed(
                f"server '{name}' was stopped in this session",
                server=name,
                hint=f"start it again with {cmd('start', name)}",
                reason="server_stopped",
            )
        sup = await self.start(name)
        if not sup.connected:
            raise failure_error(sup)
        return sup

    def _require_tg(self) -> TaskGroup:
        if self._tg is None:
            raise ConnectionFailed("the session is closed", reason="session_closed")
        return self._tg
