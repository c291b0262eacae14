"""A daemon session's reloads, in process: the subject is the order of concurrent commands' reloads,
not the socket (the end-to-end form is test_session's twenty concurrent clients)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.daemon.session import DaemonSession
from orbmcp.session.daemon_scope import Scope
from tests.core.live import raw_entry, write_config

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix uids")


@pytest.mark.anyio
async def test_a_command_that_arrives_during_another_s_reload_sees_its_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "orbmcp.json", {})
    scope = Scope(os.getuid(), str(tmp_path / "global"), str(tmp_path), str(config))
    session = DaemonSession(scope, {"PATH": os.environ.get("PATH", "")}, tmp_path)

    async with session.sessions:
        manager = await session.sessions.manager()
        applying, apply = anyio.Event(), manager.apply_config

        async def announced(*args: Any) -> Any:
            applying.set()
            return await apply(*args)

        monkeypatch.setattr(manager, "apply_config", announced)
        write_config(config, {"a": raw_entry(lifecycle="lazy")})
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.refresh)  # the first command's reload
            await applying.wait()
            await session.refresh()  # the second command arrives while it applies
            assert set(manager.supervisors) == {"a"}
