"""Terminal rendering with rich: tables and colour, only when stdout is a terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from orbmcp.commands.results import ServerAction, StatusReport
from orbmcp.render.plain import warning_summary
from orbmcp.text import one_line

STATE_STYLE = {
    "ready": "green",
    "starting": "yellow",
    "stopped": "dim",
    "failed": "red",
    "needs-auth": "magenta",
}


def _state(state: str) -> str:
    return f"[{STATE_STYLE.get(state, 'white')}]{escape(state)}[/]"


def render_rich(result: Any, console: Console | None = None) -> None:
    console = console or Console(highlight=False)
    if isinstance(result, StatusReport) and result.rows:
        table = Table(box=None, pad_edge=False, header_style="bold")
        for col in ("server", "state", "lifecycle", "tools", "auth", "source"):
            table.add_column(col)
        for r in result.rows:
            table.add_row(
                escape(one_line(r.name)),
                _state(r.state),
                r.lifecycle,
                f"{r.tools.active}/{r.tools.discovered}",
                escape(r.auth),
                r.source,
            )
        console.print(table)
        for r in result.rows:
            if r.error and r.state in ("failed", "needs-auth"):
                console.print(f"[red]{escape(one_line(r.name))}[/]: {escape(one_line(r.error, max_len=300))}")
            elif r.warning:
                console.print(f"[yellow]{escape(one_line(r.name))}[/]: {escape(warning_summary(r))}")
        for n in result.notices:
            console.print(f"[yellow]{escape(one_line(n))}[/]")
        return
    from orbmcp.render.plain import render_plain

    if isinstance(result, ServerAction) and len(result.details) > 1:
        render_rich(StatusReport(tuple(d.row() for d in result.details)), console)
        return
    text = render_plain(result)
    # Plain text is already escaped for the terminal; markup=False keeps server text from styling.
    console.print(text, markup=False, highlight=False, soft_wrap=True)
