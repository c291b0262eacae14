"""Tasks, resources and completions against real servers in-process (tests/servers/tasks.py and
tests/servers/asks.py over stdio)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from orbmcp.commands.handlers import resources as resource_handlers
from orbmcp.commands.handlers import tools as tool_handlers
from orbmcp.commands.live_completion import answer, live_candidates
from orbmcp.commands.live_query import LiveQuery
from orbmcp.commands.results.base import Result
from orbmcp.commands.results.tools import ResourceContents
from orbmcp.core.capabilities import Interaction
from orbmcp.core.capabilities.elicitation import ElicitationAnswer
from orbmcp.core.tooling.calls import call_tool
from orbmcp.errors import ProtocolError, TimeoutFailed, UsageError
from orbmcp.render.plain import render_plain
from tests.core.capabilities.test_live import (
    BOUND_S,
    Scripted,
    World,
    asks,
    ctx_for,
    session,
    text_of,
    wait_for,
)
from tests.core.live import stdio_entry
from tests.servers.asks import BLOB
from tests.servers.tasks import MARKER_ENV as TASK_MARKERS

pytestmark = pytest.mark.usefixtures("anyio_backend")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def world(tmp_path: Path) -> World:
    project, markers = tmp_path / "project", tmp_path / "markers"
    project.mkdir()
    markers.mkdir()
    w = World(tmp_path, project, markers, tmp_path / "mcp.json")
    w.write({"asks": asks(markers), "tasks": stdio_entry("tasks", env={TASK_MARKERS: str(markers)})})
    return w


# -- tasks ---------------------------------------------------------------------------------------


async def test_a_task_required_tool_runs_as_a_task_with_its_status_as_progress(world: World) -> None:
    person = Scripted(answers=[ElicitationAnswer("accept", {"interpretation": "historical"})])
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("tasks")
            assert manager.tools.get("tasks", "research").task_support == "required"  # type: ignore[union-attr]
            done = await call_tool(
                sup,
                "research",
                {"topic": "py"},
                progress=lambda v, t, m: person.progress("tasks", "research", v, t, m),
            )
            assert text_of(done) == "Report on py: 4 stages"
            assert "working: Gathering sources..." in person.progress_events
            record: list[Interaction] = []
            done = await call_tool(
                sup, "research", {"topic": "py", "ambiguous": True}, asker=person, record=record
            )
            assert text_of(done) == "Report on py (historical): 4 stages"
            assert done.meta == {"io.modelcontextprotocol/related-task": {"taskId": "task-2"}}
            (asked,) = person.asked
            assert asked.message == "Which py?" and asked.fields[0].choices[1].title == "Historical"
            assert record == [Interaction("elicitation", "tasks", "accept", "Which py?")]


async def test_optional_tasks_only_when_asked_and_plain_tools_refuse_them(world: World) -> None:
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("tasks")
            assert text_of(await call_tool(sup, "count", {"n": 2})) == "count done: 2"
            assert text_of(await call_tool(sup, "count", {"n": 2}, as_task=True)) == "count done: 2"
            ctx = ctx_for(manager, Scripted())
            with pytest.raises(UsageError, match="cannot run as a task"):
                await tool_handlers.call(ctx, "tasks", "plain", task=True)
            outcome = await tool_handlers.call(
                ctx, "tasks", "count", arguments=["n=1"], task=True, timeout=20
            )
            assert text_of(outcome.result) == "count done: 1"
            with pytest.raises(UsageError, match="--log-level: unknown log level 'loud'"):
                await tool_handlers.call(ctx, "tasks", "count", log_level="loud")


async def test_a_cancelled_caller_cancels_the_task_on_the_server(world: World) -> None:
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("tasks")
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call_tool, sup, "forever", {})
                    await wait_for(world.markers / "task-started")
                    scope.cancel()
            await wait_for(world.markers / "task-cancelled")
            assert sup.connected  # the session goes on
            assert text_of(await call_tool(sup, "count", {"n": 1})) == "count done: 1"


async def test_a_timeout_bounds_the_whole_task_and_cancels_it(world: World) -> None:
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            ctx = ctx_for(manager, Scripted())
            with pytest.raises(TimeoutFailed, match=r"did not answer within 0\.5 s"):
                await tool_handlers.call(ctx, "tasks", "forever", timeout=0.5)
            await wait_for(world.markers / "task-cancelled")


# -- resources -----------------------------------------------------------------------------------


async def test_templates_with_parameters_and_read_output(world: World, tmp_path: Path) -> None:
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            ctx = ctx_for(manager, Scripted())
            listing = await resource_handlers.resources(ctx, "asks")
            (template,) = listing.templates
            assert template["uriTemplate"] == "mem://items/{item_id}" and template["parameters"] == [
                "item_id"
            ]
            assert (
                "mem://items/{item_id}  item  (text/plain)                (template: item_id)"
                in render_plain(listing)
            )
            blob = await resource_handlers.read(ctx, "asks", "mem://blob")
            assert isinstance(blob, ResourceContents)
            assert render_plain(blob).endswith("[binary content: --output FILE saves it]")
            target = tmp_path / "out.bin"
            saved = await resource_handlers.read(ctx, "asks", "mem://blob", output=target)
            assert target.read_bytes() == BLOB
            assert isinstance(saved, ResourceContents)
            assert saved.to_json()["saved"] == [
                {"uri": "mem://blob", "path": str(target), "bytes": len(BLOB)}
            ]
            assert render_plain(saved) == f"[saved mem://blob: 1.0 KB to {target}]"
            folder = tmp_path / "dir"
            folder.mkdir()
            for _ in range(2):
                await resource_handlers.read(ctx, "asks", "mem://note", output=folder)
            assert sorted(p.name for p in folder.iterdir()) == ["resource-1-1.txt", "resource-1.txt"]
            assert (folder / "resource-1.txt").read_text() == "a note"
            with pytest.raises(UsageError, match=r"directory .* does not exist"):
                await resource_handlers.read(ctx, "asks", "mem://note", output=tmp_path / "no" / "x")
            with pytest.raises(UsageError, match="has no resource 'mem://nope'"):
                await resource_handlers.read(ctx, "asks", "mem://nope")
            with pytest.raises(UsageError, match="--follow prints updates"):
                await resource_handlers.read(ctx, "asks", "mem://note", follow=True)  # no emit here


async def test_follow_prints_the_resource_again_on_every_update(world: World) -> None:
    shown: list[Result] = []
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            ctx = ctx_for(manager, Scripted(), emit=shown.append)
            sup = await manager.ready("asks")
            async with anyio.create_task_group() as tg:
                tg.start_soon(resource_handlers.read, ctx, "asks", "mem://note", None, True)
                await wait_for(world.markers / "subscribed")
                for n in (1, 2):
                    await call_tool(sup, "touch", {})
                    with anyio.fail_after(BOUND_S):
                        while len(shown) <= n:
                            await anyio.sleep(0.02)
                tg.cancel_scope.cancel()
    assert [r.update for r in shown if isinstance(r, ResourceContents)] == [0, 1, 2]
    assert render_plain(shown[1]) == "[updated (1): mem://note]\na note"
    assert shown[2].to_json() == {
        "contents": [{"uri": "mem://note", "mimeType": "text/plain", "text": "a note"}],
        "uri": "mem://note",
        "update": 2,
    }
    assert sup.client_side.resource_listeners == []  # unsubscribed on the way out


# -- completions ---------------------------------------------------------------------------------


async def test_prompt_arguments_and_template_values_come_from_the_server(world: World) -> None:
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:

            async def values(query: LiveQuery) -> list[str]:
                return [c.value for c in await answer(manager, query)]

            found = await answer(manager, LiveQuery("prompt_argument", "asks", "", "completable"))
            assert [(c.value, c.kind) for c in found] == [("department=", "argument"), ("role=", "argument")]
            department = await answer(
                manager, LiveQuery("prompt_argument", "asks", "department=E", "completable")
            )
            assert [(c.value, c.kind) for c in department] == [("department=Engineering", "value")]
            given = LiveQuery("prompt_argument", "asks", "", "completable", (("department", "Sales"),))
            assert await values(given) == ["role="]
            uris = await answer(manager, LiveQuery("resource_uri", "asks", "mem://"))
            assert [c.value for c in uris] == ["mem://note", "mem://blob", "mem://items/"]
            assert {c.kind for c in uris} == {"resource"}
            assert await values(LiveQuery("resource_uri", "asks", "mem://items/g")) == ["mem://items/gamma"]
            # a tool's arguments: names from its schema, then values; MCP has no server completion for them
            assert await values(LiveQuery("tool_argument", "asks", "", "form")) == ["message="]
            assert await values(LiveQuery("tool_argument", "asks", "message=", "form")) == []
            assert await values(LiveQuery("tool_argument", "asks", "", "form", (("message", "x"),))) == []
            assert await values(LiveQuery("tool_argument", "asks", "", "no-such-tool")) == []
            nothing = await live_candidates(
                manager,
                [LiveQuery("prompt_argument", "asks", "x=", "nope"), LiveQuery("resource_uri", "ghost", "")],
            )
            assert list(nothing.values()) == [[], []]


async def test_follow_on_a_2026_server_uses_a_listen_stream(world: World) -> None:
    world.write({"m": stdio_entry("asks", "--modern")})
    shown: list[Result] = []
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            ctx = ctx_for(manager, Scripted(), emit=shown.append)
            sup = await manager.ready("m")
            assert sup.snap.protocol_version == "2026-07-28"
            async with anyio.create_task_group() as tg:
                tg.start_soon(resource_handlers.read, ctx, "m", "mem://note", None, True)
                while not shown:
                    await anyio.sleep(0.02)
                # The stream may still be opening: touch until an update arrives.
                while len(shown) < 2:
                    await call_tool(sup, "touch", {})
                    with anyio.move_on_after(0.5):
                        while len(shown) < 2:
                            await anyio.sleep(0.02)
                tg.cancel_scope.cancel()
    assert isinstance(shown[1], ResourceContents) and shown[1].update == 1


async def test_tasks_that_end_otherwise_are_errors_never_hangs(world: World) -> None:
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("tasks")
            done = await call_tool(sup, "count", {"instant": True}, as_task=True)
            assert text_of(done) == "count done at once"
            with pytest.raises(
                ProtocolError, match="the server cancelled the task: the server gave up"
            ) as err:
                await call_tool(sup, "count", {"give_up": True}, as_task=True)
            assert err.value.reason == "task_failed"
            with pytest.raises(ProtocolError, match="ended failed"):
                await call_tool(sup, "count", {"fail": True}, as_task=True)
            with pytest.raises(ProtocolError, match="unknown task status 'sleeping'"):
                await call_tool(sup, "count", {"bogus": True}, as_task=True)
            assert sup.connected
