"""Embedding orbmcp in an agent: bridged MCP tools, the ``mcp_*`` agent tools and slash commands.

An agent implements ``Host`` and runs an ``McpExtension``::

    async with McpExtension(host) as ext:      # or: await ext.start() ... await ext.shutdown()
        ...                                   # the host now holds HostTools; call them
        print(await ext.slash("/mcp"))

Tools are registered with the host once (``register_tool``) and then only toggled
(``set_tool_active``) as servers connect, disconnect, die, or change their tool lists, so a
reconnect never churns the host's tool table. With no enabled server (or MCP turned off) the
extension builds nothing and imports nothing heavy: no ``mcp``, no connections (seed 000).

Calls: ``HostTool.call`` returns a ``ToolResult`` (``is_error`` set when the tool itself failed:
route it through the agent's ordinary error path) and raises ``OrbError`` subclasses for failures
around the tool (connection lost, protocol, auth, timeout). Cancelling the calling task cancels
the call on the server (``notifications/cancelled``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from orbmcp.commands.context import CommandContext
from orbmcp.core.auth_prompt import AuthPrompter
from orbmcp.core.results import TextBlock, ToolResult
from orbmcp.errors import ConfigError, ConnectionFailed, OrbError, UsageError

if TYPE_CHECKING:
    from anyio.abc import TaskStatus

    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.manager import Manager
    from orbmcp.core.state import State
    from orbmcp.core.supervisor import Supervisor
    from orbmcp.core.tools import BridgedTool
    from orbmcp.frontends.slash import SlashReply

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]

STATUS_TOOL = "mcp_status"
CONNECT_TOOL = "mcp_connect"
FIRST_ATTEMPT_SLACK_S = 5.0  # beyond timeoutMs: a stdio child that ignores shutdown gets killed
FIRST_ATTEMPT_POLL_S = 0.05


class Host(Protocol):
    """What an agent provides. Every method is called on the event loop, never concurrently.

    Optional extras, looked up with ``getattr``: ``active_tool_names() -> set[str] | None`` (the
    bridged names the host really has active, when another extension may restrict them),
    ``open_url(url) -> bool`` and ``prompt(message) -> str | None`` (headless OAuth paste-back).
    """

    interactive: bool

    def register_tool(self, tool: HostTool) -> None: ...

    def set_tool_active(self, bridged_name: str, active: bool) -> None: ...

    def notify(self, message: str, level: str) -> None: ...

    def choose(self, question: str, options: list[str]) -> str | None: ...

    def is_project_trusted(self, project_dir: Path) -> bool | None: ...


def _log(event: str, **fields: Any) -> None:
    from orbmcp.log import log_event

    log_event(event, **fields)


class HostTool:
    """One tool as the host sees it. For a bridged tool, ``description`` and ``input_schema``
    follow the server: a ``list_changed`` re-discovery updates them in place."""

    def __init__(
        self,
        name: str,
        run: Callable[[dict[str, Any], ProgressCallback | None, float | None], Awaitable[ToolResult]],
        *,
        bridged: BridgedTool | None = None,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self._run = run
        self._bridged = bridged
        self._description = description
        self._schema: Mapping[str, Any] = input_schema or {"type": "object"}

    @property
    def description(self) -> str:
        return self._bridged.description if self._bridged is not None else self._description

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return self._bridged.input_schema if self._bridged is not None else self._schema

    @property
    def annotations(self) -> Mapping[str, Any] | None:
        return self._bridged.annotations if self._bridged is not None else None

    @property
    def server(self) -> str | None:
        """The MCP server behind this tool; None for the extension's own ``mcp_*`` tools."""
        return self._bridged.server if self._bridged is not None else None

    @property
    def tool_name(self) -> str | None:
        """The server's own name of the tool."""
        return self._bridged.name if self._bridged is not None else None

    @property
    def active(self) -> bool:
        return self._bridged.active if self._bridged is not None else True

    async def call(
        self,
        args: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
        timeout_s: float | None = None,
    ) -> ToolResult:
        return await self._run(dict(args or {}), progress, timeout_s)

    def __repr__(self) -> str:
        return f"HostTool({self.name!r})"


def text_result(text: str, *, error: bool = False, structured: object | None = None) -> ToolResult:
    return ToolResult([TextBlock(text)], structured=structured, is_error=error)


def error_result(err: OrbError) -> ToolResult:
    """An OrbError as an ``is_error`` result, for hosts that want every failure as a result."""
    text = err.message + (f" (hint: {err.hint})" if err.hint else "")
    return text_result(text, error=True)


class HostUI:
    """The command layer's UI (and the OAuth flow's) on top of a Host."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.interactive = bool(getattr(host, "interactive", False))

    def confirm(self, question: str, *, default: bool = False) -> bool:
        if not self.interactive:
            return False
        answer = self.choose(question, ["Yes", "No"])
        return default if answer is None else answer == "Yes"

    def choose(self, question: str, options: list[str]) -> str | None:
        if not self.interactive:
            return None
        try:
            answer = self.host.choose(question, options)
        except Exception as exc:
            _log("host.callback_failed", level="warn", message=f"choose: {type(exc).__name__}")
            return None
        return answer if answer in options else None

    def notify(self, message: str, level: str = "info") -> None:
        try:
            self.host.notify(message, level)
        except Exception as exc:
            _log("host.callback_failed", level="warn", message=f"notify: {type(exc).__name__}")

    def open_url(self, url: str) -> bool:
        opener = getattr(self.host, "open_url", None)
        if callable(opener):
            return bool(opener(url))
        from orbmcp.auth.urlpolicy import open_in_browser

        return open_in_browser(url)

    def show_url(self, url: str) -> None:
        self.notify(f"Open this URL to authorize: {url}", "info")

    def prompt_paste(self, message: str = "Paste the final redirect URL") -> str | None:
        prompt = getattr(self.host, "prompt", None)
        if not self.interactive or not callable(prompt):
            return None
        answer = prompt(message)
        return answer if isinstance(answer, str) and answer.strip() else None

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        pass  # per-call progress goes to the callback given to HostTool.call


class _HostSessions:
    """The extension's one long-lived Manager, for slash commands."""

    persistent = True

    def __init__(self, ext: McpExtension) -> None:
        self._ext = ext

    async def manager(self, ctx: CommandContext) -> Manager:
        manager = self._ext.manager
        if manager is None:
            raise UsageError(
                "MCP is not running in this session: no enabled server is configured",
                hint="add a server to mcpServers (or enable one) and start a new session",
            )
        return manager


class McpExtension:
    """orbmcp inside an agent host. See the module docstring."""

    def __init__(
        self,
        host: Host,
        *,
        project: Path | None = None,
        config_file: Path | None = None,
        config: ResolvedConfig | None = None,
        enabled: bool = True,
        retries: bool = True,
    ) -> None:
        self.host = host
        self.ui = HostUI(host)
        self.project = project
        self.config_file = config_file
        self.enabled = enabled  # False: --no-extensions
        self.retries = retries
        self.config_error: OrbError | None = None
        self._config = config
        self._manager: Manager | None = None
        self._tools: dict[str, HostTool] = {}
        self._stop: anyio.Event | None = None  # created on the loop, by __aenter__/start
        self._stack: AsyncExitStack | None = None
        self._task: Any = None  # asyncio.Task of start()
        self._starting = True  # auth prompts at startup are collected, then asked one by one
        self._needs_auth_at_start: list[str] = []
        self._prompter = AuthPrompter()
        self._declined: set[str] = self._prompter.declined

    # -- queries ---------------------------------------------------------------------------------

    @property
    def config(self) -> ResolvedConfig | None:
        return self._config

    @property
    def manager(self) -> Manager | None:
        return self._manager

    @property
    def active(self) -> bool:
        """True once servers are managed (False with no enabled server: the zero-work path)."""
        return self._manager is not None

    @property
    def tools(self) -> list[HostTool]:
        return list(self._tools.values())

    def tool(self, name: str) -> HostTool | None:
        return self._tools.get(name)

    # -- lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> McpExtension:
        if not self._prepare():
            return self
        self._stop = anyio.Event()
        stack = AsyncExitStack()
        tg = await stack.enter_async_context(anyio.create_task_group())
        self._stack = stack
        try:
            await tg.start(self._service)
        except BaseException as exc:
            self._stop.set()
            self._stack = None
            await stack.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        if self._stop is not None:
            self._stop.set()
        stack, self._stack = self._stack, None
        if stack is None:
            return None
        return await stack.__aexit__(et, ev, tb)

    async def start(self) -> None:
        """Start without a context manager (asyncio): servers run in a task of their own, so
        ``shutdown`` may come from any task."""
        import asyncio

        if not self._prepare():
            return
        self._stop = anyio.Event()
        started = anyio.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            try:
                async with anyio.create_task_group() as tg:
                    await tg.start(self._service)
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
        """Stop every server (process trees included) and deactivate every tool."""
        if self._stop is not None:
            self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            with anyio.CancelScope(shield=True):
                await task

    def _prepare(self) -> bool:
        """Load the config; False (and nothing built) when there is nothing to run."""
        if not self.enabled:
            return False
        if self._config is None:
            try:
                self._config = self._load_config()
            except ConfigError as err:
                self.config_error = err
                self.ui.notify(
                    f"MCP config error: {err.message}" + (f" ({err.hint})" if err.hint else ""), "error"
                )
                return False
            for warning in self._config.warnings:
                self.ui.notify(f"MCP config: {warning}", "warning")
        return bool(self._config.enabled_servers())

    def _load_config(self) -> ResolvedConfig:
        from orbmcp.config.loader import load_config
        from orbmcp.config.paths import project_dir

        answer: bool | None = None
        if self.config_file is None:
            pdir = project_dir(self.project)
            if any((pdir / ".orb" / f).is_file() for f in ("settings.json", "mcp.json")):
                try:
                    answer = self.host.is_project_trusted(pdir)
                except Exception:
                    answer = None
        # The host's own answer (yes or no) wins over orbmcp's trust store (seed 003).
        return load_config(project=self.project, config_file=self.config_file, host_trust=answer)

    async def _service(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        from orbmcp.core.manager import Manager
        from orbmcp.core.tools import ToolRegistry

        config = self._config
        assert config is not None
        registry = ToolRegistry(prefix=config.settings.tool_prefix)
        registry.external_active = self._externally_active
        registry.add_listener(_Bridge(self))
        manager = Manager(
            config, retries=self.retries, interactive=self.ui.interactive, auth_ui=self.ui, tools=registry
        )
        manager.runtime.state_listeners.append(self._state_changed)
        try:
            async with manager:
                self._manager = manager
                self._register_agent_tools(config)
                await self._start_eager(manager, config)
                self._starting = False
                await self._startup_authorization()
                task_status.started()
                assert self._stop is not None
                await self._stop.wait()
        finally:
            self._manager = None
            for name in (STATUS_TOOL, CONNECT_TOOL):
                if name in self._tools:
                    self._host_set_active(name, False)

    async def _start_eager(self, manager: Manager, config: ResolvedConfig) -> None:
        """Connect the eager servers concurrently; return once each has had its first attempt.

        ``Manager.start_eager`` settles only when a server is ready or out of retries, which with
        retries on is ~50 s for a dead server. Seed 000: one unavailable server must neither block
        the session's start nor delay the others, so the first attempt (bounded by its own
        ``timeoutMs``) is what startup waits for; retries continue in the background.
        """
        names = [s.name for s in config.eager_servers()]
        sups = [manager.get(n) for n in names]
        if not sups:
            return
        limit = max(s.cfg.timeout_ms for s in sups) / 1000 + FIRST_ATTEMPT_SLACK_S
        async with anyio.create_task_group() as tg:

            async def settle() -> None:
                await manager.start_many(names)
                tg.cancel_scope.cancel()

            tg.start_soon(settle)
            with anyio.move_on_after(limit):
                while not all(_first_attempt_done(s) for s in sups):
                    await anyio.sleep(FIRST_ATTEMPT_POLL_S)  # no supervisor event marks a failed try
            tg.cancel_scope.cancel()  # only the waiting stops: supervisors live in the manager
        for sup in sups:
            if sup.snap.retries >= 1 and sup.running:
                error = sup.snap.last_error or "did not connect"
                self.ui.notify(
                    f"MCP server '{sup.name}' failed to start: {error}; retrying in the background", "warning"
                )

    # -- host callbacks (a faulty host never breaks a connection) ---------------------------------

    def _host_register(self, tool: HostTool) -> None:
        try:
            self.host.register_tool(tool)
        except Exception as exc:
            _log(
                "host.callback_failed",
                level="warn",
                message=f"register_tool {tool.name}: {type(exc).__name__}",
            )

    def _host_set_active(self, name: str, active: bool) -> None:
        try:
            self.host.set_tool_active(name, active)
        except Exception as exc:
            _log(
                "host.callback_failed", level="warn", message=f"set_tool_active {name}: {type(exc).__name__}"
            )

    def _externally_active(self, tool: BridgedTool) -> bool:
        getter = getattr(self.host, "active_tool_names", None)
        if not callable(getter):
            return True
        try:
            names = getter()
        except Exception:
            return True
        return True if names is None else tool.bridged_name in names

    def _state_changed(self, sup: Supervisor, old: State, new: State) -> None:
        from orbmcp.core.hints import hint_for
        from orbmcp.core.state import State

        if new == State.NEEDS_AUTH:
            if self._starting and self.ui.interactive:
                self._needs_auth_at_start.append(sup.name)  # asked after startup, one at a time
                return
            if sup.name not in self._declined:
                self.ui.notify(
                    f"MCP server '{sup.name}' needs authorization: run /mcp:auth {sup.name}", "warning"
                )
        elif new == State.FAILED:
            hint = hint_for(sup, front="host")
            error = sup.snap.last_error or "failed"
            self.ui.notify(
                f"MCP server '{sup.name}' failed: {error}" + (f" — {hint}" if hint else ""), "warning"
            )

    async def _startup_authorization(self) -> None:
        """Seed 003: eager OAuth servers that need a login get a sequential "Authorize now / Not now"."""
        self._needs_auth_at_start = []
        if self._manager is not None:
            await self._prompter.offer(self._manager, self.ui)

    # -- tools -----------------------------------------------------------------------------------

    def _bridged_tool(self, tool: BridgedTool) -> HostTool:
        async def run(
            args: dict[str, Any], progress: ProgressCallback | None, timeout_s: float | None
        ) -> ToolResult:
            from orbmcp.core.calls import call_tool

            manager = self._manager
            if manager is None:
                raise ConnectionFailed(
                    f"the MCP extension is shut down; '{tool.bridged_name}' is unavailable",
                    server=tool.server,
                )
            if not tool.present:
                raise UsageError(
                    f"server '{tool.server}' no longer offers the tool '{tool.name}'", server=tool.server
                )
            sup = manager.get(tool.server)
            return await call_tool(sup, tool.name, args, timeout_s=timeout_s, progress=progress)

        return HostTool(tool.bridged_name, run, bridged=tool)

    def _register_agent_tools(self, config: ResolvedConfig) -> None:
        names = sorted(config.servers)
        status = HostTool(
            STATUS_TOOL,
            self._run_status,
            description=(
                "Show every configured MCP server as a JSON array: name, lifecycle, state, tools "
                "{discovered, active}, auth, source. 'ready' means connected and discovered; it does not "
                "mean every discovered tool is active."
            ),
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        )
        connect = HostTool(
            CONNECT_TOOL,
            self._run_connect,
            description=(
                "Connect a configured MCP server (lazy ones too) so its tools become available. Reports "
                "honestly when the server is connected but some of its tools are not active."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "A configured server name.", "enum": names}
                },
                "required": ["server"],
                "additionalProperties": False,
            },
        )
        for tool in (status, connect):
            self._tools[tool.name] = tool
            self._host_register(tool)
            self._host_set_active(tool.name, True)

    def status_rows(self) -> list[dict[str, Any]]:
        from orbmcp.commands.views import status_report

        config = self._config
        if config is None:
            return []
        return status_report(config, self._manager).to_json()

    async def _run_status(
        self, args: dict[str, Any], progress: ProgressCallback | None, timeout_s: float | None
    ) -> ToolResult:
        return text_result(json.dumps(self.status_rows(), indent=2, ensure_ascii=False))

    async def connect(self, server: str) -> ToolResult:
        """``mcp_connect``: connect a configured server; report inactive tools honestly (seed 003)."""
        from orbmcp.core.hints import hint_for
        from orbmcp.core.state import State
        from orbmcp.suggest import unknown_server

        manager, config = self._manager, self._config
        if manager is None or config is None:
            return text_result("MCP is not running in this session.", error=True)
        if server not in config.servers:
            return error_result(unknown_server(server, list(config.servers)))
        sup = await manager.start(server)
        if sup.state != State.READY:
            hint = hint_for(sup, front="host")
            error = sup.snap.last_error or f"state {sup.state}"
            return text_result(
                f"Server '{server}' is {sup.state}: {error}" + (f" ({hint})" if hint else ""),
                error=True,
                structured=self._connect_details(sup, connected=False),
            )
        details = self._connect_details(sup, connected=True)
        discovered, active = manager.tools.counts(server)
        if discovered == 0:
            text = f"Server '{server}' is connected; it offers no tools."
        elif active < discovered:
            inactive = [
                t.bridged_name
                for t in manager.tools.for_server(server)
                if not (t.active and self._externally_active(t))
            ]
            shown = ", ".join(inactive[:10]) + (
                f" (+{len(inactive) - 10} more)" if len(inactive) > 10 else ""
            )
            text = (
                f"Server '{server}' is connected, but only {active} of {discovered} discovered tools are "
                f"active in this session; inactive: {shown}. Another extension or the active tool policy "
                "keeps them inactive, and mcp_connect does not override it: check the tool policy or the "
                "conflicting extension (reconnecting will not help)."
            )
        else:
            text = f"Server '{server}' is connected: {active} tools active."
        return text_result(text, structured=details)

    def _connect_details(self, sup: Supervisor, *, connected: bool) -> dict[str, Any]:
        discovered, active = sup.runtime.tools.counts(sup.name)
        return {
            "server": sup.name,
            "state": str(sup.state),
            "connected": connected,
            "tools": {"discovered": discovered, "active": active},
            "allToolsActive": connected and active == discovered,
        }

    async def _run_connect(
        self, args: dict[str, Any], progress: ProgressCallback | None, timeout_s: float | None
    ) -> ToolResult:
        server = args.get("server")
        if not isinstance(server, str) or not server:
            names = ", ".join(sorted(self._config.servers)) if self._config else ""
            return text_result(
                f"mcp_connect needs 'server', one of: {names or 'none configured'}", error=True
            )
        return await self.connect(server)

    # -- slash commands --------------------------------------------------------------------------

    def command_context(self, *, json_output: bool = False) -> CommandContext:
        ctx = CommandContext(
            ui=self.ui,
            sessions=_HostSessions(self),
            project=self.project,
            config_file=self.config_file,
            json=json_output,
            front="slash",
        )
        if self._config is not None:
            ctx.set_config(self._config)
        return ctx

    async def slash_reply(self, line: str, *, json_output: bool | None = None) -> SlashReply:
        from orbmcp.frontends.slash import run_slash

        return await run_slash(
            line, self.command_context(json_output=bool(json_output)), json_output=json_output
        )

    async def slash(self, line: str, *, json_output: bool | None = None) -> str:
        """Run one ``/mcp...`` line with this session's servers; the text to show the user."""
        return (await self.slash_reply(line, json_output=json_output)).text


def _first_attempt_done(sup: Supervisor) -> bool:
    from orbmcp.core.state import State

    if sup.state in (State.READY, State.FAILED, State.NEEDS_AUTH):
        return True
    return sup.state == State.STARTING and sup.snap.retries >= 1


class _Bridge:
    """Registry listener: the host learns each tool once, then only sees activation changes."""

    def __init__(self, ext: McpExtension) -> None:
        self.ext = ext

    def tool_registered(self, tool: BridgedTool) -> None:
        if tool.bridged_name in self.ext._tools:
            return  # re-listed after a removal: same HostTool, its description/schema follow
        host_tool = self.ext._bridged_tool(tool)
        self.ext._tools[tool.bridged_name] = host_tool
        self.ext._host_register(host_tool)

    def tool_activation(self, tool: BridgedTool, active: bool) -> None:
        self.ext._host_set_active(tool.bridged_name, active)
