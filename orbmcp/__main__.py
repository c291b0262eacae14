"""The orbmcp program: wires the fronts that serve each other, then runs the shell front.

The session daemon answers requests of other fronts by registration (``session/requests.py``):
here ``serve`` registers its ``serve`` request, so that ``daemon`` and ``serve`` never import
each other. The handler's module is imported only when a request comes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orbmcp.fastpath.entry import main as run_shell_front
from orbmcp.session import requests


async def _serve_request(conn: requests.DaemonRequest, request: Mapping[str, Any]) -> None:
    from orbmcp.serve.hosted import serve_request

    await serve_request(conn, request)


def wire() -> None:
    """Register every front's daemon requests (idempotent)."""
    requests.register("serve", _serve_request)


def main(argv: list[str] | None = None) -> None:
    wire()
    run_shell_front(argv)


if __name__ == "__main__":
    main()
