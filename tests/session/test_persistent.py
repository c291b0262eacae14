"""PersistentSessions at its edges: one Manager per session, a closed session, a cancelled opening."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from orbmcp.errors import ConnectionFailed
from orbmcp.session.persistent import PersistentSessions
from tests.core.live import load, raw_entry, write_config
from tests.timeouts import HANG_GUARD_S


async def test_one_manager_per_session_and_none_after_it(tmp_path: Path) -> None:
    config = load(write_config(tmp_path / "mcp.json", {"lz": raw_entry(lifecycle="lazy")}))
    sessions = PersistentSessions(config, retries=False)
    with anyio.fail_after(HANG_GUARD_S):
        async with sessions:
            assert not sessions.started  # nothing eager: no Manager until a command needs one
            await sessions.wait_eager()
            first = await sessions.manager()
            assert await sessions.manager() is first and sessions.started
            await first.start("lz")
            assert sessions.snapshot() == ({"lz"}, {"lz": ["echo", "never"]})
    assert not sessions.started and sessions.snapshot() == (set(), {})
    with pytest.raises(ConnectionFailed, match="the session is closed"):
        await sessions.manager()
    assert await sessions.__aexit__(None, None, None) is None  # leaving twice is harmless


async def test_a_session_cancelled_while_opening_leaves_nothing_running(tmp_path: Path) -> None:
    config = load(write_config(tmp_path / "mcp.json", {"e": raw_entry()}))  # eager
    sessions = PersistentSessions(config, retries=False)
    with anyio.fail_after(HANG_GUARD_S):
        with anyio.move_on_after(0) as scope:
            async with sessions:
                pytest.fail("the session opened although its opener was cancelled")
    assert scope.cancelled_caught and not sessions.started
    with pytest.raises(ConnectionFailed, match="the session is closed"):
        await sessions.manager()
