"""``McpExtension``: orbmcp inside an agent host, from start-up to shutdown.

It loads the configuration (asking the host about project trust), connects the eager servers,
bridges their tools into the host's tool table, follows the server registry while it runs, and
answers slash commands with this session's connections. See ``orbmcp.host`` for a guide.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp.commands.context import CommandContext
from orbmcp.core.capabilities import ClientFeatures
from orbmcp.core.session.auth_prompt import AuthPrompter
from orbmcp.core.session.hints import hint_for
from orbmcp.core.session.startup import first_attempts
from orbmcp.core.session.state import State
from orbmcp.core.session.supervisor import Supervisor
from orbmcp.core.tooling.registry import ToolRegistry
from orbmcp.errors import ConfigError, OrbError, UsageError, cmd
from orbmcp.host.agent_tools import CONNECT_TOOL, STATUS_TOOL, agent_tools, connect_server, status_rows
from orbmcp.host.configuration import ConfigSource, unless_stopped
from orbmcp.host.follow import RegistryWatch
from orbmcp.host.protocol import Elicits, Samples
from orbmcp.host.spelling import agent_message, agent_text
from orbmcp.host.table import ToolTable
from orbmcp.host.tools import HostTool, bridged_host_tool, text_result
from orbmcp.host.ui import HostUI
from orbmcp.host.views import ServerInfo, SessionConfig, SlashReply, server_info, session_config
from orbmcp.session.holder import PERSISTENT, Sessions
from orbmcp.session.slash import run_slash

if TYPE_CHECKING:
    from anyio.abc import TaskStatus

    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.runtime import Watched
    from orbmcp.core.tooling.results import ToolResult
    from orbmcp.host.protocol import Host


class McpExtension:
    """orbmcp inside an agent host: MCP servers, their tools in the host, ``/mcp`` commands.

    Use it as ``async with McpExtension(host) as ext:`` (any anyio backend), or ``await ext.start()``
    ... ``await ext.shutdown()`` (asyncio; the two may come from different tasks).

    ``project`` and ``config_file`` choose the configuration as ``--project`` and ``--config`` do.
    ``enabled=False`` (``--no-extensions``) makes the
    extension inert. ``retries=False`` reports a server's first failure instead of retrying it.
    ``normalize_schemas=True`` gives the host tools' input schemas without ``$ref``, ``allOf`` and
    nullable unions, for model providers that reject them (``orbmcp.host.normalize_schema``).
    """

    def __init__(
        self,
        host: Host,
        *,
        project: Path | None = None,
        config_file: Path | None = None,
        enabled: bool = True,
        retries: bool = True,
        normalize_schemas: bool = False,
    ) -> None:
        self._ui = HostUI(host)
        self.enabled = enabled
        self.retries = retries
        self.config_error: OrbError | None = None
        """The configuration error that left the extension inert, if any."""
        self._source = ConfigSource(project, config_file, self._ui.notify)
        # orbmcp's own callers (benchmarks, tests) may set a resolved configuration here before
        # start; the extension then does not follow the server registry: that config is theirs.
        self._config: ResolvedConfig | None = None
        self._follows_registry = True
        self._manager: Manager | None = None
        self._sessions = _NOT_RUNNING  # while servers are managed, the session that holds them
        self._table = ToolTable(
            host, lambda tool: bridged_host_tool(tool, lambda: self._manager, normalize=normalize_schemas)
        )
        self._stop: anyio.Event | None = None  # created on the loop, by __aenter__/start
        self._stack: AsyncExitStack | None = None
        self._task: Any = None  # the asyncio.Task of start()
        self._starting = True  # auth prompts at startup are collected, then asked one by one
        self._prompter = AuthPrompter()

    # -- queries ---------------------------------------------------------------------------------

    @property
    def host(self) -> Host:
        """The host the extension talks to (the latest one given to ``register_into``)."""
        return self._table.host

    @property
    def project(self) -> Path | None:
        """The project directory asked for (None: the current directory)."""
        return self._source.project

    @property
    def config_file(self) -> Path | None:
        """The ``--config`` file asked for, replacing every config file layer."""
        return self._source.config_file

    @property
    def config(self) -> SessionConfig | None:
        """The configuration in effect, with each server's state; None before start, when inert
        by choice, or broken. While servers are managed, the session's own (a command such as
        ``/mcp:disable`` changes it)."""
        config = self._resolved()
        return session_config(config, self._manager) if config is not None else None

    def server(self, name: str) -> ServerInfo | None:
        """One configured server as the session sees it now; None when no entry has that name."""
        config = self._resolved()
        if config is None or name not in config.servers:
            return None
        return server_info(config, self._manager, name)

    def _resolved(self) -> ResolvedConfig | None:
        return self._manager.config if self._manager is not None else self._config

    @property
    def active(self) -> bool:
        """True once servers are managed (False with no enabled server: the zero-work path)."""
        return self._manager is not None

    @property
    def tools(self) -> list[HostTool]:
        """Every tool given to the host so far (active or not), in registration order."""
        return self._table.tools()

    def tool(self, name: str) -> HostTool | None:
        """The tool registered under ``name``, or None."""
        return self._table.get(name)

    def instructions(self) -> dict[str, str]:
        """The instructions connected servers gave (``initialize``), by server: raw text a server
        wrote, for the agent's system prompt (treat it as untrusted input, like tool descriptions)."""
        manager = self._manager
        if manager is None:
            return {}
        return {
            name: sup.snap.instructions
            for name, sup in manager.supervisors.items()
            if sup.snap.instructions and sup.connected
        }

    # -- lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> McpExtension:
        """Start (see ``start``), with the servers owned by this task's task group."""
        if not self._prepare():
            return self
        self._stop = anyio.Event()
        stack = AsyncExitStack()
        tg = await stack.enter_async_context(anyio.create_task_group())
        self._stack = stack
        try:
            await tg.start(self._run)
        except BaseException as exc:
            self._stop.set()
            self._stack = None
            await stack.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        """Shut down (see ``shutdown``)."""
        if self._stop is not None:
            self._stop.set()
        stack, self._stack = self._stack, None
        if stack is None:
            return None
        return await stack.__aexit__(et, ev, tb)

    async def start(self) -> None:
        """Load the configuration and connect the eager servers; servers run in an asyncio task of
        their own, so ``shutdown`` may come from any task.

        Returns once each eager server has had its first attempt (bounded by its ``timeoutMs``):
        the host then holds their tools. Failures are notified, not raised; a broken configuration
        is notified and leaves the extension inert (``config_error``). With no enabled server nothing
        heavy is imported and nothing connects until a server is registered; a light task waits for
        that, so call ``shutdown`` in every case.
        """

        if not self._prepare():
            return
        self._stop = anyio.Event()
        started = anyio.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            try:
                async with anyio.create_task_group() as tg:
                    await tg.start(self._run)
                    started.set()
            except Exception as exc:
                failure.append(exc)
            finally:
                started.set()

        self._task = asyncio.get_running_loop().create_task(main(), name="orbmcp-extension")
        await started.wait()
        if failure:
            raise failure[0]

    async def shutdown(self) -> None:
        """Stop every server (process trees included) and deactivate every tool; returns when done."""
        if self._stop is not None:
            self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            with anyio.CancelScope(shield=True):
                await task

    def register_into(self, host: Host) -> None:
        """Give a fresh host tool table every tool discovered so far, without reconnecting.

        For an agent that rebuilds its tool registry (re-running its extension factory) while this
        session lives on: ``host`` gets ``register_tool`` for every tool and ``set_tool_active`` for
        the active ones, and from now on every callback goes to ``host`` instead of the previous
        one. Call it on the event loop.
        """
        self._ui.use(host)
        self._table.register_into(host)
        if self._manager is not None:
            self._manager.runtime.interactive = self._ui.interactive

    def _prepare(self) -> bool:
        """Load the config; False (and nothing built) when there is nothing to run or follow."""
        if not self.enabled:
            return False
        if self._config is None:
            try:
                self._config = self._source.resolve(self.host)
            except ConfigError as err:
                self.config_error = err
                self._source.config_error(err)
                return False
            for warning in self._config.warnings:
                self._ui.notify(f"MCP config: {warning}", "warning")
        if not self._config.settings.extension_enabled:
            return False
        return bool(self._config.enabled_servers()) or self._follows_registry

    async def _run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The lifecycle task: wait (inert) until a server is enabled, then serve until stopped."""
        with self._registry_watch() as watch:
            config = self._config
            assert config is not None
            while not config.enabled_servers():
                task_status.started()
                task_status = anyio.TASK_STATUS_IGNORED
                next_config = await self._next_config(watch)
                if next_config is None:
                    return
                config = self._config = next_config
            await self._serve(config, watch, task_status)

    @contextmanager
    def _registry_watch(self) -> Iterator[RegistryWatch | None]:
        if not self._follows_registry:
            yield None
            return

        watch = RegistryWatch()
        try:
            yield watch
        finally:
            watch.close()

    async def _serve(
        self, config: ResolvedConfig, watch: RegistryWatch | None, task_status: TaskStatus[None]
    ) -> None:
        registry = ToolRegistry(prefix=config.settings.tool_prefix, naming=config.settings.tool_naming)
        registry.external_active = self._table.externally_active
        registry.add_listener(self._table)
        # Persistent, without eager start: the extension starts its eager servers itself below
        # (first_attempts), reporting each in the agent's words.
        sessions = Sessions(
            replace(PERSISTENT, retries=self.retries, start_eager=False),
            config,
            ui=self._ui,
            closed=_not_running,
            tools=registry,
            features=host_features(self.host, config),
            # The project is the servers' root only when the agent named it (never a bare cwd).
            project_roots=self.project is not None,
        )
        try:
            async with sessions:
                manager = await sessions.manager()
                manager.runtime.state_listeners.append(self._state_changed)
                self._manager, self._sessions = manager, sessions
                for tool in agent_tools(self):
                    if tool.name not in self._table:
                        self._table.add(tool)
                    self._table.set_active(tool.name, True)
                eager = [s.name for s in config.eager_servers()]
                await self._unless_stopped(lambda: first_attempts(manager, eager, self._notify_spelled))
                self._starting = False
                await self._unless_stopped(lambda: self._prompter.offer(manager, self._ui))
                task_status.started()
                while (next_config := await self._next_config(watch)) is not None:
                    try:
                        change = await manager.apply_config(next_config)
                    except OrbError as err:  # the session goes on with the servers it has
                        self._ui.notify(f"MCP servers could not be updated: {agent_message(err)}", "error")
                        continue
                    self._config = next_config
                    await first_attempts(manager, change.started, self._notify_spelled, start=False)
        finally:
            self._manager, self._sessions = None, _NOT_RUNNING
            for name in (STATUS_TOOL, CONNECT_TOOL):
                if name in self._table:
                    self._table.set_active(name, False)

    async def _unless_stopped(self, work: Callable[[], Awaitable[object]]) -> None:
        """Run a start-up step, cut short by ``shutdown``: a login waiting for the browser's
        callback (300 s) or a slow eager server must not hold the agent's exit (seed 003:
        shutdown cancels pending authorization; the callback server closes as it unwinds)."""
        assert self._stop is not None
        await unless_stopped(self._stop, work)

    async def _next_config(self, watch: RegistryWatch | None) -> ResolvedConfig | None:
        """The configuration after the next registry change; None once the extension stops."""
        assert self._stop is not None and self._config is not None
        return await self._source.next(self.host, self._config, watch, self._stop)

    def _notify_spelled(self, message: str, level: str) -> None:
        self._ui.notify(agent_text(message), level)

    async def set_project(self, project: Path) -> None:
        """The agent moved to another project directory: load its configuration (asking the host
        about its trust) and apply it to the running session. Servers whose entry is unchanged keep
        their connection and are told their roots changed (``notifications/roots/list_changed``);
        the project's own servers come and go. A broken configuration is notified and the session
        stays as it was. Call it on the event loop."""

        self._source.move_to(project)
        manager = self._manager
        try:
            config = self._source.resolve(self.host)
        except ConfigError as err:
            self._source.config_error(err)
            return
        if manager is None:
            self._config = config
            return

        manager.runtime.project_roots = True
        change = await manager.apply_config(config)
        self._config = config
        await first_attempts(manager, change.started, self._notify_spelled, start=False)

    # -- server state -----------------------------------------------------------------------------

    def _state_changed(self, sup: Watched, old: State, new: State) -> None:
        assert isinstance(sup, Supervisor)  # the only servers a Manager's runtime watches
        if new == State.NEEDS_AUTH:
            if self._starting and self._ui.interactive:
                return  # asked after startup, one server at a time
            if sup.name not in self._prompter.declined:
                run = agent_text(cmd("auth", sup.name))
                self._ui.notify(f"MCP server '{sup.name}' needs authorization: run {run}", "warning")
        elif new == State.FAILED:
            hint = hint_for(sup)
            error = agent_text(sup.snap.last_error or "failed")
            self._ui.notify(
                f"MCP server '{sup.name}' failed: {error}" + (f" — {agent_text(hint)}" if hint else ""),
                "warning",
            )

    # -- tools -----------------------------------------------------------------------------------

    def status_rows(self) -> list[dict[str, Any]]:
        """``mcp_status``'s rows: every configured server (the JSON of ``orbmcp status --json``)."""
        return status_rows(self._resolved(), self._manager)

    async def connect(self, server: str) -> ToolResult:
        """``mcp_connect``: connect a configured server (lazy ones too) and report honestly when
        some of its tools are inactive. Failures come back as ``is_error`` results."""
        manager, config = self._manager, self._resolved()
        if manager is None or config is None:
            return text_result("MCP is not running in this session.", error=True)
        return await connect_server(manager, config, server, self._table.externally_active)

    # -- slash commands --------------------------------------------------------------------------

    def _command_context(self, *, json_output: bool = False) -> CommandContext:
        """A command context on this session's connections, for running commands directly."""

        ctx = CommandContext(
            ui=self._ui,
            sessions=self._sessions,
            project=self.project,
            config_file=self.config_file,
            json=json_output,
            front="slash",
        )
        config = self._resolved()
        if config is not None:
            ctx.set_config(config)
        return ctx

    async def slash_reply(self, line: str, *, json_output: bool | None = None) -> SlashReply:
        """Run one ``/mcp...`` line with this session's servers: text, exit code and error."""

        reply = await run_slash(
            line, self._command_context(json_output=bool(json_output)), json_output=json_output
        )
        return SlashReply(reply.text, reply.exit_code, reply.error)

    async def slash(self, line: str, *, json_output: bool | None = None) -> str:
        """Run one ``/mcp...`` line with this session's servers; the text to show the user."""
        return (await self.slash_reply(line, json_output=json_output)).text


def host_features(host: Host, config: ResolvedConfig) -> ClientFeatures:
    """What a host's session advertises: elicitation when the host can ask (``Elicits``), sampling
    when it has a model (``Samples``) or a sampling command is configured, and roots (to a server
    that has some: configured, or the project the agent named)."""

    return ClientFeatures(
        elicitation=isinstance(host, Elicits),
        sampling=isinstance(host, Samples) or config.settings.sampling is not None,
        roots=True,
    )


def _not_running() -> OrbError:
    return UsageError(
        "MCP is not running in this session: no enabled server is configured",
        hint="add a server to mcpServers (or enable one) and start a new session",
    )


# What slash commands get while no server is managed: a session that is not open.
_NOT_RUNNING = Sessions(PERSISTENT, closed=_not_running)
