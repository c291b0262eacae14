"""Plain text of ``add``, ``remove``, ``enable``, ``disable`` and ``config import``.

Names, paths, commands and values come from the command line or from other programs' files: each
is escaped on its own, and the diff line by line, so nothing in them can forge a line or drive the
terminal.
"""

from __future__ import annotations

import shlex

from orbmcp.commands.results.edit import ImportPlan, ServerEdit, ServerEdits
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import one_line, safe_text

_OUTCOMES = {
    "added": "added",
    "replaced": "replaced (--overwrite)",
    "unchanged": "already there, identical",
    "conflict": "not copied, conflict",
    "skipped": "not copied",
}


@renders
def server_edits(result: ServerEdits) -> str:
    return "\n".join(server_edit(e) for e in result.edits)


@renders
def server_edit(result: ServerEdit) -> str:
    lines = [one_line(result.message)]
    entry = result.entry
    if entry is not None:
        if "command" in entry:
            argv = [str(entry["command"]), *(str(a) for a in entry.get("args") or [])]
            lines.append(f"  command: {one_line(shlex.join(argv))}")
        if "url" in entry:
            lines.append(f"  url: {one_line(str(entry['url']))}")
        for key, label in (("env", "env"), ("headers", "header")):
            for name, value in (entry.get(key) or {}).items():
                lines.append(f"  {label} {one_line(str(name))}={one_line(str(value))}")
        if entry.get("lifecycle"):
            lines.append(f"  lifecycle: {one_line(str(entry['lifecycle']))}")
    lines += [f"note: {one_line(note)}" for note in result.notes]
    return "\n".join(lines)


@renders
def import_plan(plan: ImportPlan) -> str:
    lines: list[str] = []
    if plan.diff:
        lines += [safe_text(line) for line in plan.diff.splitlines()]
        lines.append("")
    for item in plan.items:
        why = f": {one_line(item.reason)}" if item.reason else ""
        origin = f"{one_line(item.source)} ({one_line(item.file)})"
        lines.append(f"{one_line(item.name)}  {origin}  {_OUTCOMES[item.outcome]}{why}")
    copied = plan.count("added") + plan.count("replaced")
    if plan.dry_run:
        lines.append(
            f"Dry run: {copied} server(s) would be written to {one_line(plan.file)}; nothing was changed."
        )
    elif plan.written:
        lines.append(f"Wrote {copied} server(s) to {one_line(plan.file)}.")
    else:
        lines.append(f"Nothing to write to {one_line(plan.file)}.")
    lines += [f"note: {one_line(note)}" for note in plan.notes]
    return "\n".join(lines)
