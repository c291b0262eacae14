"""orbmcp: a reliable MCP client manager.

Only the version and a few names live here; everything heavier is imported lazily so that
``orbmcp --help`` and ``--version`` stay fast (ARCHITECTURE.md, "Layers").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from orbmcp._version import __version__

__all__ = ["OrbError", "__version__", "register_server"]

if TYPE_CHECKING:
    from orbmcp.config.registry import register_server
    from orbmcp.errors import OrbError


def __getattr__(name: str) -> Any:
    # Lazy public API: importing `orbmcp` costs nothing beyond this module.
    if name == "OrbError":
        from orbmcp.errors import OrbError

        return OrbError
    if name == "register_server":
        from orbmcp.config.registry import register_server

        return register_server
    raise AttributeError(name)
