"""Smoke tests of MCP servers with pytest: the ``mcp_servers`` and ``mcp_call`` fixtures.

Installing orbmcp registers the plugin (``orbmcp.testing.plugin``, entry point ``pytest11``); it
adds nothing to a test session until a test asks for one of its fixtures. A server author's whole
smoke test::

    @pytest.mark.mcp_config("mcp.json")  # next to the test file; or --mcp-config FILE
    def test_echo(mcp_call):
        assert mcp_call("my-server", "echo", text="hi").text() == "hi"

``mcp_servers`` is an ``McpSession`` on the servers of that config file (without one: the servers
orbmcp is configured with, as ``orbmcp status`` sees them). Servers connect when first used and stay
connected for the rest of the test session; the session stops them, process trees included, when
pytest ends. ``mcp_call(server, tool, **arguments)`` returns the tool's ``ToolResult`` and raises
``ToolCallFailed`` when the tool reports an error (``mcp_servers.call(..., allow_error=True)``
returns that result instead).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orbmcp.core.tooling.results import ToolResult
    from orbmcp.testing.session import McpSession, ToolCallFailed
    from orbmcp.testing.values import AdhocServer, ToolInfo

# The public API (README, "Stability"); ToolResult is orbmcp.host's, exported here too.
__all__ = ["AdhocServer", "McpSession", "ToolCallFailed", "ToolInfo", "ToolResult"]


def __getattr__(name: str) -> Any:
    # Lazy: the plugin module loads in every pytest session of an environment with orbmcp.
    if name in ("AdhocServer", "ToolInfo"):
        from orbmcp.testing import values

        return getattr(values, name)
    if name == "ToolResult":
        from orbmcp.core.tooling.results import ToolResult

        return ToolResult
    if name in __all__:
        from orbmcp.testing import session

        return getattr(session, name)
    raise AttributeError(name)
