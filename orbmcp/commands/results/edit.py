"""Results of ``add``, ``remove``, ``enable``, ``disable`` and ``config import``.

Entries are held as written but with every env, header and secret value already masked by the
handler: these results are shown, and a config file may hold credentials.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from orbmcp.commands.results.base import Result, Statement

EditAction = Literal["added", "replaced", "removed", "enabled", "disabled", "unchanged"]


@dataclass(frozen=True)
class ServerEdit(Statement):
    """One server entry changed in one file (or left as it was)."""

    action: EditAction
    server: str
    file: str
    scope: str  # global, project or config (the --config file)
    entry: Mapping[str, Any] | None = None  # as written, secrets masked (add)
    notes: tuple[str, ...] = ()  # what the person should know: a ${VAR} suggestion, trust, shadowing
    state: str | None = None  # in a running session: the server's state after the change
    wanted: str | None = None  # for "unchanged": what was asked ("enabled", "disabled", "removed")

    @property
    def message(self) -> str:
        where = f"{self.file} ({self.scope})"
        if self.action == "unchanged":
            return f"'{self.server}' is already {self.wanted or 'as asked'} in {where}; nothing changed"
        preposition = {"added": "to", "removed": "from"}.get(self.action, "in")
        text = f"{self.action.capitalize()} '{self.server}' {preposition} {where}"
        if self.state is not None:
            text += f"; in this session it is {self.state}"
        return text

    def fields(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "server": self.server,
            "file": self.file,
            "scope": self.scope,
            "entry": None if self.entry is None else dict(self.entry),
            "notes": list(self.notes),
            "state": self.state,
        }


@dataclass(frozen=True)
class ServerEdits(Result):
    """Several entries added at once (``add --json`` with a snippet of several servers)."""

    edits: tuple[ServerEdit, ...]

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.edits]


@dataclass(frozen=True)
class ImportItem:
    """One server of another client's file, and what ``config import`` does with it."""

    name: str
    source: str  # import:<client>
    file: str
    outcome: Literal["added", "replaced", "unchanged", "conflict", "skipped"]
    reason: str | None = None  # why a conflict or a skip

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "file": self.file,
            "outcome": self.outcome,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ImportPlan(Result):
    """``config import``: what was (or, with --dry-run, would be) copied, and the diff of the file."""

    file: str  # orbmcp's file the entries go to
    scope: str
    items: tuple[ImportItem, ...]
    diff: str  # unified diff of the file, secrets masked; "" when nothing changes
    written: bool
    dry_run: bool
    read: tuple[str, ...]  # the other clients' files that were read
    notes: tuple[str, ...] = ()

    def count(self, outcome: str) -> int:
        return sum(1 for item in self.items if item.outcome == outcome)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "scope": self.scope,
            "dryRun": self.dry_run,
            "written": self.written,
            "servers": [item.to_json() for item in self.items],
            "diff": self.diff,
            "read": list(self.read),
            "notes": list(self.notes),
        }
