"""Plain text of the small results: sentences, lists, help, completion scripts, nested JSON."""

from __future__ import annotations

import json

from orbmcp.commands.results.base import CommandHelp, CommandIndex, JsonText, Lines, ShellExit, Statement
from orbmcp.commands.results.completion import CompletionScript
from orbmcp.text import one_line, safe_text


def statement(result: Statement) -> str:
    return safe_text(result.message, multiline=True)


def lines(result: Lines) -> str:
    return "\n".join(one_line(x) for x in result.items)


def command_help(result: CommandHelp) -> str:
    text = [f"usage: {result.usage}", "", result.help]
    if result.params:
        text.append("")
    text += [f"  {p.name:<18} {p.help}" for p in result.params]
    return safe_text("\n".join(text), multiline=True)


def command_index(result: CommandIndex) -> str:
    width = min(44, max((len(usage) for usage, _ in result.entries), default=0))
    text = [result.title, *(f"  {usage:<{width}}  {summary}" for usage, summary in result.entries)]
    text += result.notes
    return safe_text("\n".join(text), multiline=True)


def completion_script(result: CompletionScript) -> str:
    return safe_text(result.script, multiline=True)


def shell_exit(result: ShellExit) -> str:
    return ""  # the REPL already showed everything; only its status is left


def json_text(result: JsonText) -> str:
    # The line asked for JSON itself; it gets JSON even where the outer output is text.
    return json.dumps(result.data, indent=2, ensure_ascii=False)
