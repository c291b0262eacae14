"""orbmcp: a reliable MCP client manager.

Only the version and a few names live here; everything heavier is imported lazily so that
``orbmcp --help`` and ``--version`` stay fast (ARCHITECTURE.md, "Layers").
"""

from __future__ import annotations

from orbmcp import front_handlers as _front_handlers
from orbmcp._version import __version__

# The fronts' own commands (shell, slash, complete, serve, daemon) find their handlers in every
# process that imports orbmcp, an embedding host's too, not only in the program's: binding imports
# no handler module (two small modules of references, standard library only).
_front_handlers.bind()

__all__ = ["OrbError", "__version__", "register_server"]

TYPE_CHECKING = False  # not typing's: every command, the daemon's client's too, imports this
if TYPE_CHECKING:
    from typing import Any

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
