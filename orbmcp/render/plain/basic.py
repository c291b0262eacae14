"""Plain text of the small results: sentences, lists, help, completion scripts, nested JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable

from orbmcp.commands.results.base import CommandHelp, CommandIndex, JsonText, Lines, ShellExit, Statement
from orbmcp.commands.results.completion import Completions, CompletionScript, SlashCommandList
from orbmcp.core.capabilities import Interaction
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import one_line, safe_text

_ASKED = {
    "elicitation": "asked for input",
    "url": "asked you to open a URL",
    "sampling": "asked for a model's answer",
}
_ANSWERED = {
    "accept": "answered",
    "decline": "declined",
    "cancel": "cancelled",
    "result": "answered",
    "reject": "refused",
}


def aligned(rows: list[list[str]], indent: str = "  ", *, cap: int | None = None) -> list[str]:
    """Rows of cells (already escaped) in columns, two spaces apart; trailing blanks stripped.
    ``cap``: no column is padded wider than this, so one long URI does not push every row right."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    if cap is not None:
        widths = [min(w, cap) for w in widths]
    return [
        (indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))).rstrip()
        for row in rows
    ]


@renders
def statement(result: Statement) -> str:
    return safe_text(result.message, multiline=True)


@renders
def lines(result: Lines) -> str:
    return "\n".join(one_line(x) for x in result.items)


@renders
def completions(result: Completions) -> str:
    """One value per line: what a shell's completion function reads."""
    return "\n".join(one_line(c.value) for c in result.items)


@renders
def slash_command_list(result: SlashCommandList) -> str:
    width = min(44, max((len(str(c["usage"])) for c in result.commands), default=0))
    return "\n".join(f"{c['usage']!s:<{width}}  {c['description']}" for c in result.commands)


@renders
def command_help(result: CommandHelp) -> str:
    text = [f"usage: {result.usage}", "", result.help]
    if result.params:
        text.append("")
    text += [f"  {p.name:<18} {p.help}" for p in result.params]
    return safe_text("\n".join(text), multiline=True)


@renders
def command_index(result: CommandIndex) -> str:
    width = min(44, max((len(usage) for usage, _ in result.entries), default=0))
    text = [result.title, *(f"  {usage:<{width}}  {summary}" for usage, summary in result.entries)]
    text += result.notes
    return safe_text("\n".join(text), multiline=True)


@renders
def completion_script(result: CompletionScript) -> str:
    return safe_text(result.script, multiline=True)


@renders
def shell_exit(result: ShellExit) -> str:
    return ""  # the REPL already showed everything; only its status is left


@renders
def json_text(result: JsonText) -> str:
    # The line asked for JSON itself; it gets JSON even where the outer output is text.
    return json.dumps(result.data, indent=2, ensure_ascii=False)


def interaction_notes(interactions: Iterable[Interaction]) -> list[str]:
    """One ``[note: ...]`` line per question a server asked that the person did not answer
    themselves (declined for them, cancelled, refused): what was asked, and why."""
    notes: list[str] = []
    for i in interactions:
        if i.reason is None and i.action in ("accept", "result"):
            continue
        asked = _ASKED.get(i.kind, "asked something")
        quoted = f' ("{one_line(i.message, max_len=120)}")' if i.message else ""
        where = f" {one_line(i.url, max_len=300)}" if i.url else ""
        outcome = _ANSWERED.get(i.action, i.action)
        why = f": {one_line(i.reason, max_len=300)}" if i.reason else ""
        notes.append(f"[note: server '{one_line(i.server)}' {asked}{where}{quoted}; {outcome}{why}]")
    return notes
