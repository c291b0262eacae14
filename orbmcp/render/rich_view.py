"""Terminal rendering with rich: tables and colour, only when stdout is a terminal.

The status overview (and a multi-server start/reconnect) is a table; every other result is its
plain text, printed with markup off so server text can never style the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from orbmcp.commands.results.base import Result
from orbmcp.commands.results.status import ServerAction, StatusReport
from orbmcp.render.plain import render_plain
from orbmcp.render.plain.status import COLUMNS, row_notes, shows_auth
from orbmcp.text import one_line

if TYPE_CHECKING:
    from orbmcp.render import OutputTarget

STATE_STYLE = {
    "ready": "green",
    "starting": "yellow",
    "retrying": "yellow",
    "stopped": "dim",
    "disabled": "dim",
    "failed": "red",
    "needs-auth": "magenta",
    "invalid": "red",
    "skipped": "red",
    "untrusted": "magenta",
}


def _state(state: str, shown: str) -> str:
    return f"[{STATE_STYLE.get(state, 'white')}]{escape(shown)}[/]"


def terminal_console(target: OutputTarget) -> Console:
    """A rich console for another process's terminal (a daemon client's): its stream, its width,
    its environment (TERM, COLORTERM, NO_COLOR decide the colours as they would there)."""
    return Console(
        file=target.out,  # type: ignore[arg-type]
        force_terminal=target.stdout_isatty,
        width=target.columns,
        highlight=False,
        _environ=dict(target.env),
    )


def render_rich(result: Result, console: Console | None = None) -> None:
    console = console or Console(highlight=False)
    if isinstance(result, StatusReport) and result.rows:
        _status_table(result, console)
    elif isinstance(result, ServerAction) and len(result.details) > 1:
        _status_table(StatusReport(tuple(d.row() for d in result.details)), console)
    else:
        # Plain text is already escaped for the terminal; markup=False keeps server text from styling.
        console.print(render_plain(result), markup=False, highlight=False, soft_wrap=True)


def _status_table(result: StatusReport, console: Console) -> None:
    table = Table(box=None, pad_edge=False, header_style="bold")
    auth = shows_auth(result.rows)
    for col in COLUMNS:
        if auth or col != "auth":
            table.add_column(col)
    for r in result.rows:
        cells = [
            escape(one_line(r.name)),
            _state(r.state, r.shown_state),
            r.lifecycle or "-",
            "-" if r.unavailable else f"{r.tools.active}/{r.tools.discovered}",
            *([escape(one_line(r.auth))] if auth else []),
            r.source,
        ]
        table.add_row(*cells)
    console.print(table)
    for r in result.rows:
        notes = row_notes(r, indent="")
        colour = "yellow" if (r.warning or r.sse_fallback) and not r.error else "red"
        for note in notes:
            # Plain text is already escaped for the terminal; rich markup must not see it.
            console.print(f"[{colour}]{escape(one_line(r.name))}[/]: {escape(note)}")
    for n in result.notices:
        console.print(f"[yellow]{escape(one_line(n))}[/]")
    if result.daemon_pid is not None:
        console.print(f"[dim](daemon: pid {result.daemon_pid})[/]")
