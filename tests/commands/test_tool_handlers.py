"""tools/call/resources/read/prompts/prompt handlers: listings over servers in every state, option
and output errors, stdin arguments, and servers that lack a feature. Real stdlib servers (raw.py)
in one in-process session, so the module stays fast."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers import resources as resource_handlers
from orbmcp.commands.handlers import tools as handlers
from orbmcp.commands.results.tools import ToolListing
from orbmcp.core.session.manager import Manager
from orbmcp.core.session.state import State
from orbmcp.core.tooling.results import ImageBlock, ToolResult
from orbmcp.errors import ConnectionFailed, OrbError, ProtocolError, TimeoutFailed, UsageError, cmd
from orbmcp.render.plain import render_plain
from tests.core.live import FAST_GRACE_S, raw_entry, wait_until
from tests.timeouts import HANG_GUARD_S
from tests.ui import RecordingUI

DEAD = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Sessions:
    manager_: Manager
    persistent: bool = True
    daemon_pid: int | None = None

    async def manager(self, ctx: CommandContext) -> Manager:
        return self.manager_


@dataclass
class Session:
    manager: Manager

    def ctx(self, *, persistent: bool = True, json_output: bool = False) -> CommandContext:
        ctx = CommandContext(ui=RecordingUI(), sessions=Sessions(self.manager, persistent), json=json_output)
        ctx.set_config(self.manager.config)
        return ctx


@pytest.fixture(scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    from orbmcp.config.loader import load_config

    home = tmp_path_factory.mktemp("handlers")
    servers: dict[str, Any] = {
        # Answers unknown methods with -32601 at once, so resources/prompts errors come back fast.
        "r": raw_entry("--no-ignore-unknown"),
        "lz": raw_entry(lifecycle="lazy"),
        "dead": {**DEAD, "lifecycle": "lazy"},
        "hang": raw_entry("--hang", lifecycle="lazy", timeoutMs=20000),
    }
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    config = load_config(config_file=path, global_dir=home / "agent")
    manager = Manager(config, retries=False)
    manager.runtime.stdin_grace_s = FAST_GRACE_S
    manager.runtime.term_grace_s = FAST_GRACE_S
    async with manager:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
        yield Session(manager)


def ui_of(ctx: CommandContext) -> RecordingUI:
    assert isinstance(ctx.ui, RecordingUI)
    return ctx.ui


# -- listings over servers in every state ---------------------------------------------------------


async def test_listing_every_server_names_the_ones_left_out(session: Session) -> None:
    ctx = session.ctx()
    listing = await handlers.tools(ctx)
    assert listing.servers == ("r",) and {t.name for t in listing.tools} == {"echo", "never"}
    assert "lz: lazy, not connected (`orbmcp tools lz` connects it)" in listing.notices
    assert render_plain(listing).splitlines()[:2] == ["r (2 tools)", "  echo(text: string)"]
    assert "lz: lazy, not connected (`orbmcp tools lz` connects it)" in render_plain(listing).splitlines()
    assert ui_of(ctx).notes == []


async def test_a_failed_server_is_a_warning_beside_a_ready_one(session: Session) -> None:
    manager = session.manager
    with anyio.fail_after(HANG_GUARD_S):
        await manager.start("dead")
    assert manager.get("dead").state == State.FAILED
    ctx = session.ctx()
    listing = await handlers.prompts(ctx)
    # raw.py offers tools only: the listing says so instead of failing.
    assert listing.servers == () and listing.notices[-1] == "r: offers no prompts"
    [(level, note)] = ui_of(ctx).notes
    assert level == "warning" and note.startswith("server 'dead' is failed: ")
    resources = await resource_handlers.resources(session.ctx())
    assert resources.to_json() == [] and "r: offers no resources" in render_plain(resources)


async def test_a_fresh_sessions_listing_waits_for_first_attempts(session: Session) -> None:
    manager = session.manager
    listings: list[ToolListing] = []

    async def list_tools() -> None:
        listings.append(await handlers.tools(session.ctx()))

    async with anyio.create_task_group() as tg:
        tg.start_soon(manager.start, "hang")
        await wait_until(lambda: manager.get("hang").state == State.STARTING, what="hang connecting")
        tg.start_soon(list_tools)
        await anyio.wait_all_tasks_blocked()
        assert listings == []  # waiting for hang's first attempt to settle
        await manager.stop("hang")
    assert manager.get("hang").state == State.STOPPED
    assert any(n.startswith("hang:") and "not connected" in n for n in listings[0].notices)


async def test_with_several_servers_a_broken_one_is_a_warning_even_when_nothing_else_is_listed(
    session: Session,
) -> None:
    manager = session.manager
    with anyio.fail_after(HANG_GUARD_S):
        await manager.start("dead")
    await manager.stop("r")
    try:
        ctx = session.ctx()
        listing = await handlers.tools(ctx)
        assert listing.tools == () and listing.servers == ()
        warnings = [text for level, text in ui_of(ctx).notes if level == "warning"]
        assert len(warnings) == 1 and warnings[0].startswith("server 'dead' is failed: ")
        # Naming the broken server still makes its failure the error.
        with pytest.raises(OrbError) as info:
            await handlers.tools(session.ctx(), "dead")
        assert info.value.server == "dead" and info.value.code == "connection"
    finally:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start("r")
    assert manager.get("r").state == State.READY


async def test_a_one_shot_command_connects_the_eager_servers_first(session: Session) -> None:
    listing = await handlers.tools(session.ctx(persistent=False), None)
    assert listing.servers == ("r",)


# -- call: options, outputs, stdin ---------------------------------------------------------------


async def test_arguments_from_stdin(session: Session) -> None:
    async def stdin() -> str | None:
        return '{"text": "from stdin"}'

    outcome = await handlers.call(replace(session.ctx(), read_stdin=stdin), "r", "echo", arguments=["-"])
    assert render_plain(outcome) == "from stdin"
    with pytest.raises(UsageError, match="there is no stdin"):  # a front without stdin
        await handlers.call(session.ctx(), "r", "echo", arguments=["-"])


async def test_option_errors_before_anything_connects(session: Session, tmp_path: Path) -> None:
    ctx = session.ctx()
    with pytest.raises(UsageError, match="--max-output: expected a number of bytes >= 0, got -1"):
        await handlers.call(ctx, "r", "echo", arguments=["text=x"], max_output=-1)
    with pytest.raises(UsageError, match=r"--timeout: expected a positive number of seconds, got nan"):
        await handlers.call(ctx, "r", "echo", arguments=["text=x"], timeout=float("nan"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UsageError, match="cannot create the directory"):
        await handlers.call(ctx, "r", "echo", arguments=["text=x"], save_images=blocker / "media")
    with pytest.raises(UsageError, match="is a directory"):
        await handlers.call(ctx, "r", "echo", arguments=["text=x"], output=tmp_path)
    # "~user" naming nobody is a usage error (exit 2), not an internal crash.
    nobody = Path("~no-such-user-x9/o")
    with pytest.raises(UsageError, match="--output ~no-such-user-x9/o: cannot expand '~'") as info:
        await handlers.call(ctx, "r", "echo", arguments=["text=x"], output=nobody)
    assert info.value.code == "usage"
    with pytest.raises(UsageError, match="--save-images ~no-such-user-x9/o: cannot expand '~'"):
        await handlers.call(ctx, "r", "echo", arguments=["text=x"], save_images=nobody)


async def test_output_that_cannot_be_written_is_a_usage_error(session: Session) -> None:
    full = Path("/dev/full")
    if not full.exists():
        pytest.skip("no /dev/full")
    with pytest.raises(UsageError, match="--output /dev/full: cannot write"):
        await handlers.call(session.ctx(), "r", "echo", arguments=["text=x"], output=full)


async def test_unknown_tool_and_timeout(session: Session) -> None:
    with pytest.raises(UsageError) as info:
        await handlers.call(session.ctx(), "r", "ecoh")
    assert "did you mean 'echo'" in (info.value.hint or "")
    with anyio.fail_after(HANG_GUARD_S), pytest.raises(TimeoutFailed, match=r"did not answer within 0\.2 s"):
        await handlers.call(session.ctx(), "r", "never", timeout=0.2)
    # The session survives a timed-out call.
    again = await handlers.call(session.ctx(), "r", "echo", arguments=["text=still here"])
    assert render_plain(again) == "still here"


async def test_a_stopped_server_is_not_restarted_by_a_call(session: Session) -> None:
    manager = session.manager
    with anyio.fail_after(HANG_GUARD_S):
        await manager.start("lz")
    await manager.stop("lz")
    try:
        with pytest.raises(ConnectionFailed, match="was stopped in this session") as info:
            await handlers.call(session.ctx(), "lz", "echo", arguments=["text=x"])
        assert cmd("start", "lz") in (info.value.hint_template or "")
    finally:
        manager.user_stopped.discard("lz")


def test_saving_media_never_overwrites_and_reports_unwritable_dirs(tmp_path: Path) -> None:
    ctx = CommandContext(ui=RecordingUI())
    png = ToolResult([ImageBlock("AAEC", "image/png")])
    for n in range(1000):
        (tmp_path / ("shot-1.png" if n == 0 else f"shot-1-{n}.png")).touch()
    with pytest.raises(UsageError, match="too many files named shot-1-"):
        handlers.save_media(ctx, png, tmp_path, "shot")
    with pytest.raises(UsageError, match="cannot write"):
        handlers.save_media(ctx, png, tmp_path / "gone", "shot")


# -- resources and prompts on a server without them ---------------------------------------------


async def test_read_and_prompt_on_a_server_without_them(session: Session) -> None:
    with pytest.raises(ProtocolError) as info:
        await resource_handlers.read(session.ctx(), "r", "mem://x")
    assert info.value.server == "r" and "-32601" in info.value.message
    with pytest.raises(UsageError, match="server 'r' offers no prompts"):
        await handlers.prompt(session.ctx(), "r", "greet")


def test_prompt_schema_marks_only_required_arguments() -> None:
    schema = handlers.prompt_schema({"arguments": [{"name": "tone"}, {"name": "who", "required": True}]})
    assert schema == {
        "type": "object",
        "properties": {"tone": {"type": "string"}, "who": {"type": "string"}},
        "required": ["who"],
        "additionalProperties": False,
    }
