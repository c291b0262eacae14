"""SDK ``MCPServer`` whose tool arguments have values to complete: an enum, a boolean, a number.

    python tests/servers/choices.py

Tool ``paint(color, glossy=False, coats=1)``: ``color`` is one of red, green, blue.
"""

from __future__ import annotations

# ruff: noqa: E402 - the coverage tracer stops before the imports below
import sys

# Started by tests/servers/launch.py with -S: site-packages without their .pth start-ups, so the
# coverage tracer never starts here (~0.08 s of CPU per start); started without, it stops. Under the
# suite, sdk_site.start() hands the start to the worker's fork server (tests/servers/forkserver.py).
if sys.flags.no_site and __name__ == "__main__":
    import sdk_site  # type: ignore[import-not-found]

    sdk_site.start()
_coverage = sys.modules.get("coverage") if __name__ == "__main__" else None
if _coverage is not None and (_running := _coverage.Coverage.current()) is not None:
    _running.stop()

from typing import Literal

from mcp.server.mcpserver import MCPServer

server = MCPServer("choices", version="1.0", log_level="WARNING")


@server.tool()
def paint(color: Literal["red", "green", "blue"], glossy: bool = False, coats: int = 1) -> str:
    """Paint with a color."""
    return f"{coats} {'glossy' if glossy else 'matt'} {color}"


if __name__ == "__main__":
    server.run("stdio")
