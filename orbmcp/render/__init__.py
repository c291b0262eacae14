"""Renderers, one per output mode: ``json`` (the documented shapes), ``plain`` (agent UIs and
pipes), ``rich_view`` (tables and colour on a terminal; falls back to plain).

``render_to_terminal`` is the only place the shell front writes a result to stdout; it picks the
mode and returns the result's exit status.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from orbmcp.commands.results.base import Result
from orbmcp.render.json import to_json_text
from orbmcp.render.plain import render_plain

if TYPE_CHECKING:
    from orbmcp.text import TextSink


class OutputTarget(Protocol):
    """Where a result is printed and what that terminal is like (a front's ``Console``)."""

    out: TextSink
    stdout_isatty: bool
    env: Mapping[str, str]
    columns: int | None


def exit_code_of(result: Result | None) -> int:
    """The status a front reports for ``result`` (0 for nothing to show)."""
    if result is None:
        return 0
    if not isinstance(result, Result):
        raise TypeError(f"not a result: {type(result).__name__}")
    return int(result.exit_code)


def present(result: Result) -> str:
    """A result as text for the person in front of a terminal (``CommandContext.present``)."""
    return render_plain(result)


def render_to_terminal(
    result: Result | None, *, json_output: bool, no_color: bool, console: OutputTarget | None = None
) -> int:
    """Print ``result`` on ``console`` (default: this process's stdout): JSON, rich tables on a
    terminal, plain text otherwise. Returns the result's exit status."""
    if result is None:
        return 0
    out: TextSink = sys.stdout if console is None else console.out
    tty = out.isatty() if console is None else console.stdout_isatty  # type: ignore[attr-defined]
    if json_output:
        out.write(to_json_text(result, pretty=tty) + "\n")
    elif not no_color and tty:
        # Only a terminal gets rich: the plain and JSON paths never load it (fast paths print them).
        from orbmcp.render.rich_view import render_rich, terminal_console

        render_rich(result, None if console is None else terminal_console(console))
    else:
        text = render_plain(result)
        if text:
            out.write(text if text.endswith("\n") else text + "\n")
    out.flush()
    return exit_code_of(result)


__all__ = ["exit_code_of", "present", "render_to_terminal", "to_json_text"]
