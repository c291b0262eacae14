"""Plain text of ``status`` (overview and detail), ``start``/``stop``/``reconnect`` and ``check``.

The overview is a table aligned in columns even when piped; under a row come what is wrong with
it (its last error, or why its entry did not load) and the one hint.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from orbmcp.commands.results.check import CheckReport
from orbmcp.commands.results.status import (
    ServerAction,
    ServerDetail,
    StatusReport,
    StatusRow,
)
from orbmcp.render.plain.basic import aligned
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import one_line, safe_text

# Sub-capabilities worth naming beside their capability, as the wire spells them.
_FLAGS = ("listChanged", "subscribe", "form", "url")


def capability_names(caps: Mapping[str, Any] | None) -> str:
    """``tools (listChanged), resources (subscribe), ...``: names and their flags, escaped."""
    if caps is None:
        return "(not connected)"
    names = []
    for name, value in caps.items():
        flags = [f for f in _FLAGS if isinstance(value, Mapping) and value.get(f) not in (None, False)]
        names.append(one_line(str(name), max_len=60) + (f" ({', '.join(flags)})" if flags else ""))
    return ", ".join(names) or "none"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


SSE_FALLBACK = (
    'via legacy SSE: the URL refused Streamable HTTP ("transport": "sse" in its entry skips that try)'
)
COLUMNS = ("server", "state", "lifecycle", "tools", "auth", "source")
FIRST_ENTRY = '{"mcpServers": {"NAME": {"command": "PROGRAM", "args": ["ARG"]}}}'


def _cells(r: StatusRow, *, auth: bool = True) -> list[str]:
    cells = [
        one_line(r.name),
        r.shown_state,
        r.lifecycle or "-",
        f"{r.tools.active}/{r.tools.discovered}" if not r.unavailable else "-",
        one_line(r.auth),
        r.source,
    ]
    return cells if auth else [*cells[:4], cells[5]]


def shows_auth(rows: tuple[StatusRow, ...]) -> bool:
    """The auth column, only where some server can use OAuth (a remote one): ``-`` elsewhere."""
    return any(r.auth != "-" for r in rows)


def row_notes(r: StatusRow, indent: str = "    ") -> list[str]:
    """What is wrong with a row, under it: the last error or why it did not load, then the hint."""
    out: list[str] = []
    if r.error and (r.unavailable or r.state in ("failed", "needs-auth", "retrying")):
        label = "why" if r.unavailable else "last error"
        where = f" ({one_line(r.file)})" if r.unavailable and r.file else ""
        out.append(f"{indent}{label}: {one_line(r.error, max_len=300)}{where}")
        if r.hint:
            out.append(f"{indent}fix: {one_line(r.hint, max_len=300)}")
    elif r.warning:
        out.append(f"{indent}{warning_summary(r)}")
    if r.sse_fallback:
        out.append(f"{indent}{SSE_FALLBACK}")
    return out


def status_line(r: StatusRow) -> str:
    """One row on its own (a start or reconnect of several servers uses the table instead)."""
    return "\n".join(["  ".join(_cells(r, auth=shows_auth((r,)))), *row_notes(r)])


def warning_summary(r: StatusRow) -> str:
    more = f" (+{len(r.warnings) - 1} more in its detail view)" if len(r.warnings) > 1 else ""
    return f"warning: {one_line(r.warning or '', max_len=300)}{more}"


def statusaligned(rows: tuple[StatusRow, ...]) -> list[str]:
    auth = shows_auth(rows)
    header = list(COLUMNS) if auth else [c for c in COLUMNS if c != "auth"]
    table = aligned([header, *(_cells(r, auth=auth) for r in rows)])
    lines = [table[0]]
    for r, line in zip(rows, table[1:], strict=True):
        lines.append(line)
        lines += row_notes(r, indent="      ")
    return lines


@renders
def status_report(result: StatusReport) -> str:
    if not result.rows:
        lines = ["No MCP servers configured."]
        if result.config_file:
            if add := result.add_command:
                lines.append(f"Add one with `{add} NAME -- PROGRAM ARG...` or `{add} NAME URL`,")
                lines.append(f"or write it in {one_line(result.config_file)}, for example:")
            else:
                lines.append(f"Add one to {one_line(result.config_file)}, for example:")
            lines.append(f"  {FIRST_ENTRY}")
            if result.import_command:
                lines.append(
                    f"Servers you set up in Claude, Cursor, VS Code, ...: `{result.import_command} CLIENT`"
                )
            lines.append(f"(`{result.paths_command}` lists every file orbmcp reads)")
    else:
        lines = [f"MCP servers ({len(result.rows)}):", *statusaligned(result.rows)]
    lines += [one_line(n) for n in result.notices]
    if result.daemon_pid is not None:
        lines.append(f"(daemon: pid {result.daemon_pid})")
    elif result.stopped_after and any(r.state == "ready" for r in result.rows):
        lines.append("(one-shot: servers started for this report were stopped again)")
    return "\n".join(lines)


def _launch_lines(d: ServerDetail) -> list[str]:
    launch = d.launch
    if launch is None:
        return []
    if launch.url is not None:
        lines = [f"URL: {one_line(launch.url)}"]
        if launch.header_names:
            lines.append(f"Headers: {one_line(', '.join(launch.header_names))}")
        return lines
    lines = [f"Command: {one_line(shlex.join(launch.command), max_len=500)}"]
    if launch.cwd:
        lines.append(f"Cwd: {one_line(launch.cwd)}")
    if launch.env_names:
        lines.append(f"Env: {one_line(', '.join(launch.env_names))}")
    return lines


@renders
def server_detail(d: ServerDetail) -> str:
    if d.unavailable:
        return _unavailable_detail(d)
    lines = [
        f"Server: {one_line(d.name)}",
        f"State:  {d.retry.text if d.retry is not None else d.state}",
        f"Retries: {d.retries}/{d.max_retries}",
        f"Transport: {d.transport}"
        + (" (legacy SSE: the URL refused Streamable HTTP)" if d.sse_fallback else ""),
        *_launch_lines(d),
        f"Lifecycle: {d.lifecycle}",
        f"Source: {d.source}" + (f" ({one_line(d.file)})" if d.file else ""),
        f"Tools: {d.tools.active}/{d.tools.discovered} active",
    ]
    if d.protocol_version:
        info = f" ({one_line(d.server_info, max_len=120)})" if d.server_info else ""
        lines.append(f"Protocol: {one_line(d.protocol_version)}{info}")
    if d.offered is not None or d.advertised is not None:
        lines.append(f"Server offers: {capability_names(d.offered)}")
        lines.append(f"orbmcp offers: {capability_names(d.advertised)}")
    if d.roots is None:
        lines.append("Roots: none offered (the server keeps the directories it was started with)")
    else:
        lines.append(f"Roots: {one_line(', '.join(d.roots), max_len=500) if d.roots else '(an empty list)'}")
    if d.oauth is not None:
        lines.append(f"OAuth: {one_line(d.oauth)}")
    if d.last_error:
        lines.append(f"Last error: {one_line(d.last_error, max_len=500)}")
    if d.hint:
        lines.append(f"Hint: {one_line(d.hint)}")
    lines += [f"Config warning: {one_line(w, max_len=300)}" for w in d.warnings]
    if d.project_not_loaded:
        lines.append(f"Project config: not loaded ({one_line(d.project_not_loaded)})")
    if d.instructions:
        lines += [
            "",
            "Instructions:",
            _indent(safe_text(d.instructions.strip(), max_len=4000, multiline=True)),
        ]
    if d.recent_output or not d.remote:  # a server reached by URL has no stderr to miss
        lines += ["", "Recent output:"]
        lines += ["  " + one_line(x, max_len=500) for x in d.recent_output]
        if not d.recent_output:
            lines.append(f"(no stderr output from {one_line(d.name)})")
    if d.message:
        lines += ["", one_line(d.message)]
    return "\n".join(lines)


def _unavailable_detail(d: ServerDetail) -> str:
    lines = [
        f"Server: {one_line(d.name)}",
        f"State:  {d.state} (not loaded)",
        f"Source: {d.source}" + (f" ({one_line(d.file)})" if d.file else ""),
        f"Why: {one_line(d.last_error or '', max_len=500)}",
    ]
    if d.hint:
        lines.append(f"Fix: {one_line(d.hint)}")
    lines += [f"Config warning: {one_line(w, max_len=300)}" for w in d.warnings]
    return "\n".join(lines)


@renders
def server_action(a: ServerAction) -> str:
    if a.action == "start" and len(a.details) == 1:
        return server_detail(a.details[0])
    if len(a.details) == 1:
        lines = [status_line(a.details[0].row())]
    else:
        lines = statusaligned(tuple(d.row() for d in a.details)) if a.details else []
    if a.message:
        lines.append(one_line(a.message))
    return "\n".join(lines)


# ---- check ---------------------------------------------------------------------------------------


@renders
def check_report(report: CheckReport) -> str:
    """One line per server, the required tools and calls, the problems, a verdict. With
    ``--format github`` the workflow commands come first (GitHub shows them as annotations)."""
    lines: list[str] = []
    if report.format == "github":
        from orbmcp.commands.results.check_formats import github_annotations

        lines += github_annotations(report)
    rows = [[one_line(s.name), s.verdict, _check_detail(s.row)] for s in report.servers]
    if rows:
        lines += aligned(rows)
    for s in report.servers:
        if not s.ok and s.row.hint:
            lines.append(f"    {one_line(s.name)}: fix: {one_line(s.row.hint, max_len=300)}")
    if report.required:
        lines.append("required tools:")
        lines += aligned([[one_line(r.spec), "ok" if r.found else "MISSING"] for r in report.required])
    if report.calls:
        lines.append("calls:")
        for c in report.calls:
            outcome = "ok" if c.ok else f"FAILED: {one_line(c.failure or '', max_len=300)}"
            lines.append(f"  {one_line(c.spec)}  {outcome}")
    if report.lock_changes:
        from orbmcp.render.plain.lock import change_lines

        lines.append(f"changed since the lock ({one_line(report.lock_file or '')}):")
        lines += change_lines(report.lock_changes)
    if report.problems:
        lines.append("problems:")
        lines += [f"  - {one_line(p, max_len=400)}" for p in report.problems]
    if report.junit_file:
        lines.append(f"JUnit report: {one_line(report.junit_file)}")
    lines.append(report.verdict_line)
    return "\n".join(lines)


def _check_detail(row: StatusRow) -> str:
    if row.state == "ready":
        return f"ready, {row.tools.discovered} tools"
    if row.state == "disabled":
        return 'skipped ("enabled": false)'
    return one_line(f"{row.shown_state}: {row.error}" if row.error else row.shown_state, max_len=200)
