"""The pytest plugin (entry point ``pytest11``): fixtures only, nothing runs until one is used.

Which configuration a test gets: the ``mcp_server`` marker nearest to it (a server's command line
or URL: that one server, named from the command or host, or ``name=``), else the ``mcp_config``
marker nearest to it (a path relative to the test's file), else ``--mcp-config FILE`` (relative
to the directory pytest runs in) or the ``mcp_config`` ini option (relative to the ini file), else
the configuration orbmcp itself would use there. One ``McpSession`` per configuration, shared by
every test that uses it and closed when the pytest session ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from orbmcp.testing.values import AdhocServer

# The session (anyio, the SDK) is imported when a fixture is first used: pytest loads this plugin
# in every run of every project that installed orbmcp.

if TYPE_CHECKING:
    from orbmcp.core.tooling.results import ToolResult
    from orbmcp.testing.session import McpSession

MARKER = "mcp_config"
SERVER_MARKER = "mcp_server"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("orbmcp", "MCP server smoke tests (orbmcp)")
    group.addoption(
        "--mcp-config",
        metavar="FILE",
        default=None,
        help="MCP config file (mcpServers) for the mcp_servers and mcp_call fixtures.",
    )
    parser.addini(MARKER, "MCP config file for the mcp_servers and mcp_call fixtures.", type="paths")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(path): the MCP config file of mcp_servers/mcp_call, relative to the test file"
    )
    config.addinivalue_line(
        "markers",
        f"{SERVER_MARKER}(command_or_url, name=None, env=None, headers=None, transport=None): one server "
        "for mcp_servers/mcp_call, without a config file (a command line runs over stdio; a URL is "
        'Streamable HTTP, or SSE with transport="sse")',
    )


# One McpSession per config file (None: orbmcp's own configuration), or per ad-hoc server.
_Open = dict[tuple[Path | None, object], "McpSession"]


@pytest.fixture(scope="session")
def _orbmcp_sessions() -> Iterator[_Open]:
    sessions: _Open = {}
    try:
        yield sessions
    finally:
        for session in sessions.values():
            session.close()
        sessions.clear()


def _session(sessions: _Open, config_file: Path | None, server: AdhocServer | None) -> McpSession:
    key = (config_file, None if server is None else server.key())
    session = sessions.get(key)
    if session is None:
        from orbmcp.errors import OrbError
        from orbmcp.testing.session import McpSession

        try:
            session = McpSession(config_file, server=server)
        except OrbError as exc:
            if server is None:
                raise
            raise pytest.UsageError(f"@pytest.mark.{SERVER_MARKER}: {exc.message}") from None
        sessions[key] = session
    return session


def _config_file(request: pytest.FixtureRequest) -> Path | None:
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        if not marker.args or not isinstance(marker.args[0], str | Path):
            raise pytest.UsageError(f"@pytest.mark.{MARKER} needs the config file's path")
        path = Path(marker.args[0])
        return path if path.is_absolute() else (request.path.parent / path).resolve()
    option = request.config.getoption("--mcp-config")
    if option:
        path = Path(option)
        return path if path.is_absolute() else (request.config.invocation_params.dir / path).resolve()
    ini: list[Path] = request.config.getini(MARKER)
    return ini[0] if ini else None


def _adhoc_server(request: pytest.FixtureRequest) -> AdhocServer | None:
    """The ``mcp_server`` marker's server (checked when its session is made)."""
    marker = request.node.get_closest_marker(SERVER_MARKER)
    if marker is None:
        return None
    target = marker.args[0] if marker.args else None
    if not isinstance(target, str) or not target.strip():
        raise pytest.UsageError(f"@pytest.mark.{SERVER_MARKER} needs the server's command line or URL")
    options: dict[str, Any] = dict(marker.kwargs)
    return AdhocServer(
        target,
        name=options.get("name"),
        env=dict(options.get("env") or {}),
        headers=dict(options.get("headers") or {}),
        transport=options["transport"] if isinstance(options.get("transport"), str) else None,
        cwd=request.path.parent,
    )


@pytest.fixture
def mcp_servers(request: pytest.FixtureRequest, _orbmcp_sessions: _Open) -> McpSession:
    """The MCP servers of this test's config file or ``mcp_server`` marker (see the module
    docstring), connected on use."""
    server = _adhoc_server(request)
    return _session(_orbmcp_sessions, None if server is not None else _config_file(request), server)


@pytest.fixture
def mcp_call(mcp_servers: McpSession) -> Callable[..., ToolResult]:
    """``mcp_call(server, tool, **arguments)``: the tool's result; an error result raises."""

    def call(server: str, tool: str, /, **arguments: Any) -> ToolResult:
        return mcp_servers.call(server, tool, arguments)

    return call
