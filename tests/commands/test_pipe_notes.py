"""A long call in a pipe notes now and then on stderr that it still waits (for CI logs); never on
a terminal, never in --json mode, and a bounded number of times."""

from __future__ import annotations

import io
import re
from pathlib import Path

import anyio
import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers import tools
from orbmcp.commands.pipe_notes import MAX_NOTES, PIPE_NOTE_EVERY_S, note_times
from orbmcp.session.console import Console
from orbmcp.session.holder import ONE_SHOT, Sessions
from orbmcp.session.runner import shell_context
from tests.core.live import raw_entry
from tests.frontends import everything_entry, write_config
from tests.ui import SilentUI


class CancelAfter(SilentUI):
    """Records notices; the ``count``-th cancels the call (so no test waits on a clock)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.notes: list[str] = []
        self.scope = anyio.CancelScope()

    def notify(self, message: str, *, level: str = "info") -> None:
        self.notes.append(message)
        if len(self.notes) == self.count:
            self.scope.cancel()


async def _call(
    config: Path,
    ui: CancelAfter,
    tool: str,
    arguments: list[str],
    *,
    timeout: float | None = None,
    **fields: object,
) -> object:
    sessions = Sessions(ONE_SHOT)
    ctx = CommandContext(ui=ui, sessions=sessions, config_file=config, **fields)  # type: ignore[arg-type]
    # One scope around the call and the session's end: the session's task group is entered
    # during the call and must be left in the same scope (its stop shields itself).
    with anyio.fail_after(30), ui.scope:
        try:
            return await tools.call(ctx, "ev", tool, arguments=arguments, timeout=timeout)
        finally:
            await sessions.__aexit__(None, None, None)


async def test_a_long_call_notes_that_it_still_waits(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"ev": raw_entry()})  # stdlib only: its `never` never answers
    ui = CancelAfter(3)
    assert await _call(config, ui, "never", [], pipe_notes_s=0.05) is None  # cancelled
    assert len(ui.notes) == 3
    assert all(re.fullmatch(r"still waiting on ev/never \(\d+ s\)", note) for note in ui.notes), ui.notes


@pytest.mark.parametrize("fields", [{"pipe_notes_s": None}, {"pipe_notes_s": 0.05, "json": True}])
async def test_no_notes_without_a_pipe_or_in_json_mode(tmp_path: Path, fields: dict[str, object]) -> None:
    """A terminal (None: its live progress shows) or --json (stderr is the error envelope's)."""
    config = write_config(tmp_path, {"ev": everything_entry()})
    ui = CancelAfter(1)
    # About a second of work with a note due every 0.05 s, were notes asked for.
    outcome = await _call(config, ui, "slow", ["steps=20", "delay=0.05"], **fields)
    assert outcome is not None and ui.notes == []


async def test_a_call_that_fails_raises_its_own_error_through_the_notes(tmp_path: Path) -> None:
    from orbmcp.errors import TimeoutFailed

    config = write_config(tmp_path, {"ev": raw_entry()})
    ui = CancelAfter(1000)
    with pytest.raises(TimeoutFailed, match=r"did not answer within 0\.3 s"):
        await _call(config, ui, "never", [], timeout=0.3, pipe_notes_s=0.05)


def test_notes_are_bounded_and_thin_out() -> None:
    times = list(note_times(10.0))
    assert len(times) == MAX_NOTES
    assert times[:8] == [10, 20, 30, 40, 50, 60, 120, 180]


@pytest.mark.parametrize(
    ("stderr_tty", "json_output", "expected"),
    [
        (False, False, PIPE_NOTE_EVERY_S),
        (True, False, None),
        (False, True, None),
    ],
)
def test_the_shell_front_asks_for_notes_only_in_a_pipe(
    stderr_tty: bool, json_output: bool, expected: float | None
) -> None:
    console = Console(io.StringIO(), io.StringIO(), False, stderr_tty, False, {})
    ctx = shell_context(
        console=console,
        sessions=Sessions(ONE_SHOT),
        project=None,
        config_file=None,
        json_output=json_output,
        no_color=True,
    )
    assert ctx.pipe_notes_s == expected
