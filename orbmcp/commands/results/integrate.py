"""Results of ``integrate``: what was (or would be) written for an agent, and the ``--list`` table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orbmcp.commands.results.base import Result


@dataclass(frozen=True)
class IntegrateFile:
    path: str
    kind: str  # file | entry
    outcome: str  # created | updated | unchanged | removed | absent | kept
    diff: str  # unified diff of the change ("" when none)
    reason: str | None = None
    entry: str | None = None  # the config key of an entry: mcpServers.orbmcp

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "outcome": self.outcome,
            "entry": self.entry,
            "reason": self.reason,
            "diff": self.diff,
        }


@dataclass(frozen=True)
class IntegratePlan(Result):
    """``integrate AGENT``: the agent's files, each with what became of it."""

    agent: str
    label: str
    scope: str
    remove: bool
    dry_run: bool
    files: tuple[IntegrateFile, ...]
    commands: tuple[str, ...]  # the slash commands the agent now has
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return any(f.outcome in ("created", "updated", "removed") for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "scope": self.scope,
            "action": "remove" if self.remove else "install",
            "dryRun": self.dry_run,
            "changed": self.changed,
            "written": self.changed and not self.dry_run,
            "files": [f.to_json() for f in self.files],
            "commands": list(self.commands),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class AgentRow:
    name: str
    label: str
    gets: str
    installed: str | None  # where it was found

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "gets": self.gets,
            "installed": self.installed is not None,
            "foundAt": self.installed,
        }


@dataclass(frozen=True)
class AgentList(Result):
    """``integrate --list``."""

    agents: tuple[AgentRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {"agents": [a.to_json() for a in self.agents]}
