"""Plain text of the tool lock's results: each added, removed or changed tool with its diff."""

from __future__ import annotations

from collections.abc import Iterable

from orbmcp.commands.results.lock import LockReport, ToolDiff
from orbmcp.commands.toollock import ToolChange
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import one_line


def change_lines(changes: Iterable[ToolChange], *, indent: str = "  ") -> list[str]:
    """Every change: ``changed: server/tool (description, inputSchema)`` then its diff."""
    lines: list[str] = []
    for c in changes:
        what = f" ({', '.join(c.fields)})" if c.fields else ""
        lines.append(f"{indent}{c.kind}: {one_line(c.server)}/{one_line(c.tool)}{what}")
        # A diff line's first character (" ", "+", "-") is its meaning: kept outside the escaping.
        lines += [f"{indent}    {d[:1]}{one_line(d[1:], max_len=400)}" for d in c.description_diff]
        lines += [f"{indent}    {one_line(p, max_len=400)}" for p in c.schema_changes]
    return lines


@renders
def lock_report(result: LockReport) -> str:
    servers = ", ".join(one_line(s) for s in result.servers) or "no server"
    if result.created:
        head = f"wrote {one_line(result.file)}: {servers}"
    elif not result.changes:
        head = f"{one_line(result.file)}: {servers} unchanged"
    else:
        verb = "updated" if result.written else "would update"
        head = f"{verb} {one_line(result.file)}: {len(result.changes)} tool(s) changed since the lock"
    lines = [head, *change_lines(result.changes)]
    if result.changes and not result.written:
        lines.append(f"nothing written: review the diff, then `{result.update_command}` writes it")
    return "\n".join(lines)


@renders
def tool_diff(result: ToolDiff) -> str:
    if not result.changes:
        return f"{one_line(result.before)} and {one_line(result.after)}: the same tools"
    head = f"{one_line(result.before)} -> {one_line(result.after)}: {len(result.changes)} tool(s) differ"
    return "\n".join([head, *change_lines(result.changes)])
