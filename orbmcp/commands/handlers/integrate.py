"""integrate: write an agent's own files so it runs orbmcp (``orbmcp.integrate`` has what and where).

Idempotent: a second run changes nothing and says so. ``--dry-run`` shows the diff of every file
and writes nothing; ``--remove`` deletes exactly what orbmcp wrote (files carrying its marker, an
entry that runs ``orbmcp serve``). Files and entries orbmcp did not write are left alone, and said.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.integrate import AgentList, AgentRow, IntegrateFile, IntegratePlan
from orbmcp.config import paths
from orbmcp.errors import UsageError
from orbmcp.integrate import agents, pieces
from orbmcp.integrate.agents import Agent
from orbmcp.integrate.pieces import Change, ConfigEntry, Piece
from orbmcp.redact import redact


def orbmcp_argv() -> tuple[str, ...]:
    """How an agent runs this orbmcp: this interpreter (absolute) with ``-m orbmcp``."""
    return (str(Path(sys.executable).absolute()), "-m", "orbmcp")


def integrate(
    ctx: CommandContext,
    agent: str | None = None,
    *,
    scope: str | None = None,
    dry_run: bool = False,
    remove: bool = False,
    serve: bool = False,
    list: bool = False,  # the --list flag
) -> IntegratePlan | AgentList:
    if list:
        return AgentList(tuple(AgentRow(a.name, a.label, a.gets, a.installed()) for a in agents.AGENTS))
    if agent is None:
        raise UsageError(
            "name the agent to wire orbmcp into",
            hint=f"one of: {', '.join(agents.names())}; orbmcp integrate --list says which are installed",
            reason="missing_agent",
        )
    chosen = agents.find(agent)
    if scope in (None, "user", "global"):
        where_scope: agents.Scope = "user"
    elif scope == "project":
        where_scope = "project"
    else:
        raise UsageError(f"--scope must be user or project (got {scope!r})", reason="bad_scope")
    where = agents.Where(where_scope, paths.project_dir(ctx.project), None, orbmcp_argv())
    planned = agents.pieces(chosen, where, serve=serve, remove=remove)
    global_dir = paths.global_dir()
    changes = pieces.plan(planned, remove=remove, global_dir=global_dir)
    if not dry_run:
        pieces.write(changes, planned, global_dir=global_dir)
    files = tuple(IntegrateFile(c.path, c.kind, c.outcome, _diff(c), c.reason, c.entry) for c in changes)
    return IntegratePlan(
        agent=chosen.name,
        label=chosen.label,
        scope=where_scope,
        remove=remove,
        dry_run=dry_run,
        files=files,
        commands=() if remove else _commands(chosen, planned),
        notes=_notes(chosen, remove),
    )


def _commands(agent: Agent, planned: list[Piece]) -> tuple[str, ...]:
    out = list(agent.commands) if agent.files is not None else []
    if any(isinstance(p, ConfigEntry) for p in planned):
        out.append("the MCP server orbmcp (orbmcp serve: every server's tools, and the /mcp prompts)")
    return tuple(out)


def _notes(agent: Agent, remove: bool) -> tuple[str, ...]:
    notes = []
    if agent.reserved and agent.files is not None and not remove:
        first = agent.commands[0]
        notes.append(f"{agent.reserved}: orbmcp's is {first} (for example `{first} start NAME`)")
    if agent.name == "pi" and not remove:
        notes.append("pi loads it at its next start (or /reload)")
    return tuple(notes)


def _diff(change: Change) -> str:
    if change.before == change.after:
        return ""
    lines = difflib.unified_diff(
        change.before.splitlines(keepends=True),
        change.after.splitlines(keepends=True),
        fromfile=f"{change.path} (now)",
        tofile=f"{change.path} (after)",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if change.kind == "entry":  # another program's config: its other entries may hold secrets
        text = "".join(redact(line) for line in text.splitlines(keepends=True))
    return text
