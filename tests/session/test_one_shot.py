"""A one-shot command that may find nothing to connect runs without an event loop first."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import anyio

from orbmcp.session.one_shot import OneShotSessions, run_connecting


def _ctx() -> Any:
    return SimpleNamespace(sessions=OneShotSessions(), ui=None)


def test_a_handler_that_needs_no_session_finishes_without_a_loop() -> None:
    loops: list[object] = []

    async def handler(ctx: Any) -> str:
        loops.append(asyncio._get_running_loop())
        return "done"

    ctx = _ctx()
    assert run_connecting(handler, ctx, ctx, offline_first=True) == "done"
    assert loops == [None]


def test_a_handler_that_asks_for_the_session_runs_again_under_the_loop() -> None:
    loops: list[object] = []

    async def handler(ctx: Any) -> str:
        loops.append(asyncio._get_running_loop())
        if len(loops) == 1:
            await ctx.sessions.manager(ctx)  # the loop-free attempt stops here
        return "done"

    ctx = _ctx()
    assert run_connecting(handler, ctx, ctx, offline_first=True) == "done"
    assert loops[0] is None and loops[1] is not None
    assert ctx.sessions.loop_free is False


def test_a_handler_that_awaits_something_real_first_runs_under_the_loop() -> None:
    loops: list[object] = []

    async def handler(ctx: Any) -> str:
        loops.append(asyncio._get_running_loop())
        await anyio.sleep(0)
        return "done"

    ctx = _ctx()
    assert run_connecting(handler, ctx, ctx, offline_first=True) == "done"
    assert loops[0] is None and loops[1] is not None


def test_without_offline_first_the_loop_runs_from_the_start() -> None:
    loops: list[object] = []

    async def handler(ctx: Any) -> str:
        loops.append(asyncio._get_running_loop())
        return "done"

    ctx = _ctx()
    assert run_connecting(handler, ctx, ctx, offline_first=False) == "done"
    assert len(loops) == 1 and loops[0] is not None


def test_a_handler_that_uses_anyio_first_runs_under_the_loop() -> None:
    loops: list[object] = []

    async def handler(ctx: Any) -> str:
        loops.append(asyncio._get_running_loop())
        async with anyio.create_task_group():
            pass
        return "done"

    ctx = _ctx()
    assert run_connecting(handler, ctx, ctx, offline_first=True) == "done"
    assert loops[0] is None and loops[1] is not None
