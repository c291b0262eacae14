"""Every slash form orbmcp offers, as an agent registers them: ``slash --list`` and the agent
protocol's ``commands`` answer.

Built from the command table through the slash grammar of ``commands/complete.py``: ``/mcp``
itself, then ``/mcp:<verb>`` for each first word an agent may type after ``/mcp`` (a command, or a
group such as ``config`` whose subcommand follows). Nothing here is a list of its own.
"""

from __future__ import annotations

from typing import Any

from orbmcp.commands.complete import (
    bare_slash_command,
    next_words,
    slash_commands,
)
from orbmcp.commands.results.completion import SlashCommandList
from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.commands.table import GROUPS
from orbmcp.commands.usage import SLASH_ROOT, primary_slash, usage_line

# What an argument's completer completes, in the protocol's kinds.
_ARG_KIND = {
    "tools": "tool",
    "prompt_arguments": "argument",
    "tool_arguments": "argument",
    "resource_uris": "resource",
}


def _arg_kind(p: Param) -> str:
    if p.completer is not None and p.completer.startswith("servers"):
        return "server"
    return _ARG_KIND.get(p.completer or "", "value")


def _args(spec: CommandSpec) -> list[dict[str, Any]]:
    return [
        {"name": p.name, "kind": _arg_kind(p), "required": p.required, "multiple": p.multiple}
        for p in spec.params
        if p.kind == "argument" and not p.hidden
    ]


def _entry(name: str, spec: CommandSpec) -> dict[str, Any]:
    """One command under the name an agent registers (``mcp:start``), its usage spelled that way."""
    rest = usage_line(spec, slash=True)[len(primary_slash(spec)) :]
    return {"name": name, "usage": f"/{name}{rest}", "description": spec.summary, "args": _args(spec)}


def slash_catalog() -> SlashCommandList:
    """``/mcp`` first, then every ``/mcp:<verb>`` in name order."""
    root = SLASH_ROOT.lstrip("/")
    verbs = slash_commands()
    entries: list[dict[str, Any]] = []
    bare = bare_slash_command()
    if bare is not None:
        entry = _entry(root, bare)
        entry["args"] = [{"name": "command", "kind": "subcommand", "required": False, "multiple": False}] + [
            a for a in entry["args"] if a["kind"] == "server"
        ]
        entry["usage"] = f"{SLASH_ROOT} [<command> | <server>]"
        entries.append(entry)
    for word in sorted(next_words(verbs, [])):
        name = f"{root}:{word}"
        spec = verbs.get((word,))
        if spec is not None:
            entries.append(_entry(name, spec))
            continue
        subcommands = sorted(next_words(verbs, [word]))
        entries.append(
            {
                "name": name,
                "usage": f"/{name} {'|'.join(subcommands)} ...",
                "description": GROUPS.get(word, ""),
                "args": [{"name": "command", "kind": "subcommand", "required": True, "multiple": False}],
            }
        )
    return SlashCommandList(tuple(entries))


__all__ = ["slash_catalog"]
