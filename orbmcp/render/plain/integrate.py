"""Plain text of ``integrate``: the diff (a dry run), each file's outcome, and the commands it gives."""

from __future__ import annotations

from orbmcp.commands.results.integrate import AgentList, IntegratePlan
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import one_line, safe_text

_OUTCOMES = {
    "created": "written",
    "updated": "updated",
    "unchanged": "already up to date",
    "removed": "removed",
    "absent": "not there",
    "kept": "left alone",
}
_WOULD = {"created": "would be written", "updated": "would be updated", "removed": "would be removed"}


@renders
def integrate_plan(plan: IntegratePlan) -> str:
    lines: list[str] = []
    if plan.dry_run:
        for f in plan.files:
            if f.diff:
                lines += [safe_text(line) for line in f.diff.splitlines()]
                lines.append("")
    for f in plan.files:
        outcome = (_WOULD.get(f.outcome) if plan.dry_run else None) or _OUTCOMES[f.outcome]
        what = f" [{one_line(f.entry)}]" if f.entry else ""
        why = f": {one_line(f.reason)}" if f.reason else ""
        lines.append(f"{one_line(f.path)}{what}  {outcome}{why}")
    label = one_line(plan.label)
    if not plan.changed:
        lines.append(f"{label}: already up to date." if not plan.remove else f"{label}: nothing to remove.")
    elif plan.dry_run:
        lines.append("Dry run: nothing was changed.")
    elif plan.remove:
        lines.append(f"{label}: orbmcp's files removed.")
    elif plan.commands:
        lines.append(f"{label} now has: {', '.join(one_line(c) for c in plan.commands)}")
    lines += [f"note: {one_line(n)}" for n in plan.notes]
    return "\n".join(lines)


@renders
def agent_list(result: AgentList) -> str:
    lines = []
    for row in result.agents:
        found = f"installed ({one_line(row.installed)})" if row.installed else "not found"
        lines.append(f"{one_line(row.name)}  {found}\n  {one_line(row.gets)}")
    return "\n".join(lines)
