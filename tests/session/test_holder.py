"""The session holder's two policies, told apart by what happens to real server processes: one-shot
connects for the asking command and stops everything when it closes; persistent starts the eager
servers when it opens, keeps every server through commands that end or are cancelled, and stops them
only when its block ends."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import anyio

from orbmcp.commands.context import CommandContext
from orbmcp.core.session.manager import Manager
from orbmcp.processes import alive
from orbmcp.session.holder import ONE_SHOT, PERSISTENT, Sessions
from orbmcp.session.terminal import TerminalUI
from tests.core.live import FAST_GRACE_S, load, raw_entry, write_config
from tests.timeouts import HANG_GUARD_S


def _fast_stop(manager: Manager) -> Manager:
    manager.runtime.stdin_grace_s = manager.runtime.term_grace_s = FAST_GRACE_S
    return manager


async def _pid(manager: Manager, server: str) -> int:
    sup = await manager.ready(server)
    assert sup.process is not None
    return sup.process.pid


async def test_one_shot_connects_for_the_command_and_stops_every_server_at_close(tmp_path: Path) -> None:
    config = load(write_config(tmp_path / "mcp.json", {"e": raw_entry(), "lz": raw_entry(lifecycle="lazy")}))
    sessions = Sessions(ONE_SHOT)
    ctx = CommandContext(ui=TerminalUI(interactive=False), sessions=sessions)
    ctx.set_config(config)  # the command's config: a one-shot session has none of its own
    with anyio.fail_after(HANG_GUARD_S):
        async with anyio.create_task_group() as tg:
            sessions.owner = tg  # as the one-shot runner (run_with_signals) gives it
            manager = _fast_stop(await sessions.manager(ctx))
            assert manager.config is config and not manager.runtime.retries_enabled
            assert sessions.running_names() == set()  # nothing eager: only what the command asks
            pid = await _pid(manager, "lz")
            assert alive(pid) and await sessions.manager(ctx) is manager
            await sessions.__aexit__(None, None, None)
    assert not alive(pid) and not sessions.started


async def test_persistent_starts_eager_servers_and_keeps_them_through_commands(tmp_path: Path) -> None:
    config = load(write_config(tmp_path / "mcp.json", {"e": raw_entry(), "lz": raw_entry(lifecycle="lazy")}))
    sessions = Sessions(replace(PERSISTENT, retries=False), config)
    with anyio.fail_after(HANG_GUARD_S):
        async with sessions:
            manager = _fast_stop(await sessions.manager())
            await sessions.wait_eager()
            assert "e" in sessions.running_names()  # started by opening, no command asked

            async def command() -> None:  # a command that connects a lazy server and ends
                await (await sessions.manager()).ready("lz")

            async with anyio.create_task_group() as tg:
                tg.start_soon(command)

            holding = anyio.Event()

            async def cancelled() -> None:  # a command cancelled while it holds the session
                await sessions.manager()
                holding.set()
                await anyio.sleep_forever()

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancelled)
                await holding.wait()
                tg.cancel_scope.cancel()
            pids = [await _pid(manager, "e"), await _pid(manager, "lz")]
            assert all(alive(pid) for pid in pids) and await sessions.manager() is manager
            assert sessions.running_names() == {"e", "lz"}
    assert not any(alive(pid) for pid in pids) and not sessions.started
