"""``orbmcp slash "<line>"`` and ``orbmcp complete "<partial line>"``: the slash front for agents
written in any language, one process per line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from orbmcp.commands.context import CommandContext
from orbmcp.commands.results import Lines


@dataclass(frozen=True)
class JsonText:
    """A slash line that asked for ``--json`` itself: JSON whatever the outer output mode."""

    data: Any
    exit_code: int = 0

    def to_json(self) -> Any:
        return self.data

    def text(self) -> str:
        return json.dumps(self.data, indent=2, ensure_ascii=False)


async def slash(ctx: CommandContext, line: str) -> Any:
    """Run one slash line with the handler the shell command would run; return its result model."""
    from orbmcp.frontends.slash import parse_slash, run_invocation

    inv = parse_slash(line, servers=lambda: list(ctx.config().servers))
    result, code = await run_invocation(inv, ctx)
    if inv.json and not ctx.json and hasattr(result, "to_json"):
        return JsonText(result.to_json(), code)
    return result


def complete(ctx: CommandContext, line: str) -> Lines:
    """Candidates for the word being typed at the end of ``line``; never connects anything."""
    from orbmcp.commands.complete import complete_line

    return Lines(tuple(complete_line(line, project=ctx.project, config_file=ctx.config_file)))
