"""Importing the MCP SDK's client without its server stack, in orbmcp's own client processes.

``import mcp`` loads the SDK's whole server side (the low-level server, ``MCPServer``, starlette,
uvicorn's friends): its ``Client`` imports them to connect to in-process servers, which a command
line never does. In the CLI's own process, for a command that only acts as a client, orbmcp puts
placeholders for exactly the three modules ``mcp.client.client`` and ``mcp.client._memory`` take
names from (``mcp.server``, ``mcp.server.mcpserver``, ``mcp.server.runner``) before the import,
which saves ~170 modules and ~20 % of the import's CPU. The placeholder ``mcp.server`` keeps the
real package path, so the light modules the client side does use (``mcp.server.session``,
``mcp.server.stdio``, ...) still load as they are.

Never in an embedder's process and never for ``serve`` or the daemon (they host MCP servers):
``fastpath/entry.py`` decides. ``tests/frontends/test_sdk_trim.py`` pins the SDK's shape this
relies on (the mcp pin in pyproject.toml keeps it a minor version).
"""

from __future__ import annotations

import sys
import types
from importlib.util import find_spec
from pathlib import Path
from typing import Any

# module -> the names the SDK's client side takes from it
PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "mcp.server": ("Server", "MCPServer"),
    "mcp.server.mcpserver": ("MCPServer",),
    "mcp.server.runner": ("modern_on_request",),
}


class _InProcessOnly:
    """Stands for a server class: nothing a command line connects to is an instance of it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("in-process MCP servers are not available in the orbmcp command line")


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("in-process MCP servers are not available in the orbmcp command line")


def install() -> bool:
    """Put the placeholders in place unless the SDK is loaded already; True when installed."""
    if any(name == "mcp" or name.startswith("mcp.") for name in sys.modules):
        return False
    spec = find_spec("mcp")
    if spec is None or spec.origin is None:
        return False
    server_dir = Path(spec.origin).parent / "server"
    for name, attributes in PLACEHOLDERS.items():
        module = types.ModuleType(name, "placeholder: the orbmcp command line hosts no MCP server")
        if name == "mcp.server":
            module.__path__ = [str(server_dir)]  # its real submodules still import
        for attribute in attributes:
            value: Any = type(attribute, (_InProcessOnly,), {}) if attribute[0].isupper() else _refuse
            setattr(module, attribute, value)
        sys.modules[name] = module
    return True


def installed() -> bool:
    module = sys.modules.get("mcp.server")
    return module is not None and (module.__doc__ or "").startswith("placeholder")
