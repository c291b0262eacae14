"""``McpSession``: one orbmcp session (a Manager) for synchronous test code.

The servers live on an event loop in a thread of their own (an anyio blocking portal); each method
runs there and waits for the answer, so a plain ``def test_...`` can call tools. Servers connect on
first use, with their configured ``timeoutMs``; a server that fails raises the same error
``orbmcp call`` reports (its message names the server and why).
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orbmcp.core.tooling.results import ToolResult
from orbmcp.testing.values import AdhocServer, ToolInfo

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig, ServerConfig
    from orbmcp.core.session.manager import Manager


class ToolCallFailed(AssertionError):
    """The tool answered with an error result (``isError``); ``result`` holds it."""

    def __init__(self, server: str, tool: str, result: ToolResult) -> None:
        from orbmcp.text import safe_text, shown_name

        # pytest prints this message on the terminal: the server's text must not drive it.
        text = safe_text(result.text(), multiline=True)
        super().__init__(f"{shown_name(server)}/{shown_name(tool)} returned an error: {text}")
        self.result = result


class McpSession:
    """The servers of one configuration, connected on demand, for synchronous callers."""

    def __init__(
        self,
        config_file: Path | None = None,
        *,
        project: Path | None = None,
        server: AdhocServer | None = None,
    ) -> None:
        """``server``: this session's only server, without a config file. Raises ``OrbError``
        (``UsageError``) for a server that cannot be run as given, ``ConfigError`` for a broken
        config file."""
        from orbmcp.config.loader import load_config

        self._config: ResolvedConfig = load_config(config_file=config_file, project=project)
        if server is not None:
            self._config = self._config.only(_adhoc_entry(server))
        self._stack = ExitStack()
        self._manager: Manager | None = None

    def _open(self) -> Manager:
        if self._manager is None:
            from anyio.from_thread import start_blocking_portal

            from orbmcp.core.session.manager import Manager

            portal = self._stack.enter_context(start_blocking_portal())
            self._portal = portal
            # retries off: a test wants a server's first failure, not the retry schedule
            manager = Manager(self._config, retries=False)
            self._manager = self._stack.enter_context(portal.wrap_async_context_manager(manager))
        return self._manager

    @property
    def servers(self) -> list[str]:
        """Every configured server's name."""
        return list(self._config.servers)

    def start(self, server: str) -> str:
        """Connect ``server`` (if it is not connected yet); its state, e.g. ``ready``."""
        manager = self._open()
        sup = self._portal.call(manager.ready, server)
        return str(sup.state)

    def tools(self, server: str) -> list[ToolInfo]:
        """The tools ``server`` offers (it connects first)."""
        self.start(server)
        return [
            ToolInfo(
                name=t.name,
                description=t.raw_description,
                title=t.title,
                input_schema=t.input_schema,
                output_schema=t.output_schema,
                annotations=t.annotations,
            )
            for t in self._open().tools.for_server(server)
            if t.present
        ]

    def call(
        self, server: str, tool: str, arguments: dict[str, Any] | None = None, *, allow_error: bool = False
    ) -> ToolResult:
        """Call ``tool`` of ``server`` with ``arguments``; raises ``ToolCallFailed`` on an error
        result unless ``allow_error``."""
        from orbmcp.commands.handlers.tools import find_tool
        from orbmcp.core.tooling.calls import call_tool

        manager = self._open()

        async def run() -> ToolResult:
            sup = await manager.ready(server)
            bridged = find_tool(manager, server, tool)
            return await call_tool(sup, bridged.name, arguments or {})

        result = self._portal.call(run)
        if result.is_error and not allow_error:
            raise ToolCallFailed(server, tool, result)
        return result

    def close(self) -> None:
        """Stop every server this session started (their process trees too)."""
        self._manager = None
        self._stack.close()

    def __enter__(self) -> McpSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _adhoc_entry(server: AdhocServer) -> ServerConfig:
    """The server entry of ``server``, as ``orbmcp call --stdio/--http/--sse`` builds it."""
    from orbmcp.commands.adhoc import entry, is_url
    from orbmcp.config.transports import STDIO, STREAMABLE_HTTP, from_spelling

    kind = from_spelling(server.transport) if server.transport else None
    if kind is None:  # unstated (or unknown): what the target looks like
        kind = STREAMABLE_HTTP if is_url(server.target) else STDIO
    env = [f"{k}={v}" for k, v in server.env.items()]
    headers = [f"{k}={v}" for k, v in server.headers.items()]
    return entry([(kind.option, server.target)], env, headers, server.name, cwd=server.cwd or Path.cwd())
