"""The orbmcp program: wires the fronts that serve each other, then runs the shell front.

The session daemon answers requests of other fronts by registration (``session/requests.py``):
here ``serve`` registers its ``serve`` request, so that ``daemon`` and ``serve`` never import
each other. The handler's module is imported only when a request comes, and the registry only
when the line goes past the fast paths (``fastpath/entry.py`` calls ``wire``): the daemon's client
runs before, on every command, and imports no ``typing``.
"""

from __future__ import annotations

from orbmcp.fastpath.entry import main as run_shell_front

TYPE_CHECKING = False  # not typing's: see the docstring
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from orbmcp.session.requests import DaemonRequest


async def _serve_request(conn: DaemonRequest, request: Mapping[str, Any]) -> None:
    # Budget: every command starts here; serve's module loads the SDK, so only a request does.
    from orbmcp.serve.hosted import serve_request

    await serve_request(conn, request)


def wire() -> None:
    """Register every front's daemon requests (idempotent)."""
    from orbmcp.session import requests  # past the fast paths only (see the docstring)

    requests.register("serve", _serve_request)


def main(argv: list[str] | None = None) -> None:
    run_shell_front(argv, wire=wire)


if __name__ == "__main__":
    main()
