"""Results of ``orbmcp lock`` and ``orbmcp tools --diff``: what changed against the tool lock."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.results.base import Result
from orbmcp.commands.toollock import ToolChange


@dataclass(frozen=True)
class LockReport(Result):
    """``orbmcp lock``: the file, the servers pinned, and what changed against the file before."""

    file: str
    servers: tuple[str, ...]
    changes: tuple[ToolChange, ...] = ()
    written: bool = True
    created: bool = False  # there was no lock file before
    update_command: str = "orbmcp lock --update"  # spelled for the front that shows it

    @property
    def exit_code(self) -> int:
        """1 when tools changed and the file was left as it was (``--update`` writes it)."""
        return int(ExitCode.TOOL_ERROR if self.changes and not self.written else ExitCode.OK)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.exit_code == 0,
            "file": self.file,
            "servers": list(self.servers),
            "written": self.written,
            "created": self.created,
            "changes": [c.to_json() for c in self.changes],
        }


@dataclass(frozen=True)
class ToolDiff(Result):
    """``orbmcp tools --diff A B``: B's tools against A's (two servers, or two versions of one).
    Exit 1 when they differ, as ``diff`` does."""

    before: str
    after: str
    changes: tuple[ToolChange, ...] = ()

    @property
    def exit_code(self) -> int:
        return int(ExitCode.TOOL_ERROR if self.changes else ExitCode.OK)

    def to_json(self) -> dict[str, Any]:
        return {
            "same": not self.changes,
            "before": self.before,
            "after": self.after,
            "changes": [c.to_json() for c in self.changes],
        }
