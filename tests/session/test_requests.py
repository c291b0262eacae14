"""The daemon takes other fronts' requests by registration (``session/requests.py``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.daemon.control import ask
from orbmcp.fastpath.argv import ProgramLine
from orbmcp.session import requests
from tests.daemon.test_wire import serving

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")


async def test_a_registered_request_is_answered_by_its_handler(tmp_path: Path) -> None:
    seen: list[tuple[bool, str]] = []

    async def echo(conn: requests.DaemonRequest, request: Mapping[str, Any]) -> None:
        seen.append((conn.in_scope(ProgramLine(["status"]), request), conn.global_dir))
        conn.served()
        conn.writer.send_nowait({"t": "echoed", "said": request.get("said")})

    async def refuse(conn: requests.DaemonRequest, request: Mapping[str, Any]) -> None:
        raise requests.BadRequest("not today")

    env = {"ORB_AGENT_DIR": str(tmp_path / "agent")}
    async with serving(tmp_path) as daemon:
        unknown = await anyio.to_thread.run_sync(lambda: ask(daemon.socket_file, {"t": "test-echo"}))
        assert unknown == {"t": "error", "message": "unknown request type 'test-echo'"}
        requests.register("test-echo", echo)
        requests.register("test-refuse", refuse)
        try:
            answer = await anyio.to_thread.run_sync(
                lambda: ask(
                    daemon.socket_file, {"t": "test-echo", "said": "hi", "cwd": str(tmp_path), "env": env}
                )
            )
            refused = await anyio.to_thread.run_sync(lambda: ask(daemon.socket_file, {"t": "test-refuse"}))
        finally:
            requests._HANDLERS.pop("test-echo")
            requests._HANDLERS.pop("test-refuse")
        assert answer == {"t": "echoed", "said": "hi"}
        assert refused == {"t": "error", "message": "not today"}
        assert seen == [(True, daemon.scope.global_dir)]
        assert daemon.clients_served == 1


def test_the_program_wires_serve_into_the_daemon() -> None:
    from orbmcp.__main__ import wire

    wire()
    assert requests.handler_for("serve") is not None
