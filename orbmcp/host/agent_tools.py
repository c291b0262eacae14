"""The extension's own tools for the model, ``mcp_status`` and ``mcp_connect``, as ``HostTool``s.

What they do is shared with ``orbmcp serve``: ``orbmcp.commands.agent``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from orbmcp.commands.agent import (
    CONNECT_DESCRIPTION,
    CONNECT_TOOL,
    STATUS_DESCRIPTION,
    STATUS_SCHEMA,
    STATUS_TOOL,
    connect_schema,
    connect_server,
    status_rows,
    text_result,
)
from orbmcp.host.tools import HostTool, ProgressCallback

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.tooling.results import ToolResult

__all__ = ["CONNECT_TOOL", "STATUS_TOOL", "agent_tools", "connect_server", "status_rows"]


class Extension(Protocol):
    """What the agent's tools use of ``McpExtension`` (host.extension, which makes them)."""

    def _resolved(self) -> ResolvedConfig | None: ...

    def status_rows(self) -> list[dict[str, Any]]: ...

    async def connect(self, server: str) -> ToolResult: ...


class _ConnectTool(HostTool):
    """``mcp_connect``: its schema lists the servers configured now (they change at run time)."""

    def __init__(self, ext: Extension) -> None:
        async def run(
            args: dict[str, Any], progress: ProgressCallback | None, timeout_s: float | None
        ) -> ToolResult:
            server = args.get("server")
            if not isinstance(server, str) or not server:
                config = ext._resolved()
                names = ", ".join(sorted(config.servers)) if config else ""
                return text_result(
                    f"mcp_connect needs 'server', one of: {names or 'none configured'}", error=True
                )
            return await ext.connect(server)

        super().__init__(CONNECT_TOOL, run, description=CONNECT_DESCRIPTION)
        self._config_of: Callable[[], ResolvedConfig | None] = ext._resolved

    @property
    def input_schema(self) -> Mapping[str, Any]:
        config = self._config_of()
        return connect_schema(config.servers if config is not None else ())


def agent_tools(ext: Extension) -> tuple[HostTool, HostTool]:
    """The ``mcp_status`` and ``mcp_connect`` tools of ``ext``."""

    async def status(
        args: dict[str, Any], progress: ProgressCallback | None, timeout_s: float | None
    ) -> ToolResult:
        return text_result(json.dumps(ext.status_rows(), indent=2, ensure_ascii=False))

    status_tool = HostTool(STATUS_TOOL, status, description=STATUS_DESCRIPTION, input_schema=STATUS_SCHEMA)
    return status_tool, _ConnectTool(ext)
