"""The result of ``orbmcp check``: every configured server, every required tool, every smoke call.

A CI job must not pass while the server it guards is gone, so every entry a config file names is
counted: ready ones pass; failed, invalid, skipped (a ``${VAR}`` unset) and untrusted ones fail;
disabled ones are reported as skipped, not failures. The exit status is 3 when an entry is
invalid (the config is wrong), 1 for any other failure, 0 otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.results.base import Result
from orbmcp.commands.results.status import StatusRow
from orbmcp.commands.toollock import ToolChange

Verdict = Literal["ok", "failed", "invalid", "skipped", "untrusted", "disabled"]
CheckFormat = Literal["text", "github"]


@dataclass(frozen=True)
class CheckedServer:
    """One server's outcome. ``row`` is its status row (state, last error, hint)."""

    row: StatusRow
    verdict: Verdict
    stderr: tuple[str, ...] = ()  # the last lines it wrote (masked), for reports
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def ok(self) -> bool:
        return self.verdict in ("ok", "disabled")

    @property
    def problem(self) -> str | None:
        """One line naming the server, the file where it matters, and the reason."""
        if self.ok:
            return None
        row = self.row
        where = f" in {row.file}" if row.file and row.unavailable else ""
        why = f": {row.error}" if row.error else ""
        if row.unavailable:
            return f"{row.name}: {row.state}{where}{why}"
        return f"{row.name}: {row.shown_state}" + (f" ({row.error})" if row.error else "")

    def to_json(self) -> dict[str, Any]:
        return self.row.to_json() | {
            "ok": self.ok,
            "verdict": self.verdict,
            "file": self.row.file,
            "recentOutput": list(self.stderr),
        }


@dataclass(frozen=True)
class RequiredTool:
    """``--require-tool server/tool`` (or a bare tool name: any checked server)."""

    spec: str
    found: bool

    @property
    def problem(self) -> str | None:
        return None if self.found else f"required tool missing: {self.spec}"

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.spec, "found": self.found}


@dataclass(frozen=True)
class SmokeCall:
    """One ``--call server/tool k=v ...``: did it answer, without ``isError``, as expected?"""

    spec: str  # as given: "server/tool k=v ..."
    server: str
    tool: str
    ok: bool
    failure: str | None = None  # why not, one line
    output: str = ""  # the start of the tool's text output
    expectations: tuple[str, ...] = ()  # what was checked, as given
    seconds: float = 0.0

    @property
    def problem(self) -> str | None:
        return None if self.ok else f"call {self.spec}: {self.failure}"

    def to_json(self) -> dict[str, Any]:
        return {
            "call": self.spec,
            "server": self.server,
            "tool": self.tool,
            "ok": self.ok,
            "error": self.failure,
            "expect": list(self.expectations),
            "output": self.output,
        }


@dataclass(frozen=True)
class CheckReport(Result):
    servers: tuple[CheckedServer, ...]
    required: tuple[RequiredTool, ...] = ()
    calls: tuple[SmokeCall, ...] = ()
    notes: tuple[str, ...] = ()  # problems that belong to no server ("no server to check")
    format: CheckFormat = "text"
    junit_file: str | None = None  # the JUnit XML report written, if asked for
    summary_file: str | None = None  # the GitHub step summary appended to, if any
    waited: float | None = None  # seconds spent waiting for servers (``--wait``)
    # The directory the CI step runs in (the project): GitHub attaches an annotation to a file
    # named relative to the repository, so config files under it are named that way.
    workdir: str | None = None
    lock_file: str | None = None  # --lock FILE: the tool lock the servers were compared with
    lock_changes: tuple[ToolChange, ...] = ()  # tools added, removed or changed since that lock
    # The whole check's wall time (servers connect concurrently); a measurement, not part of the
    # outcome: two equal checks are equal whatever their times.
    seconds: float = field(default=0.0, compare=False)

    @property
    def problems(self) -> tuple[str, ...]:
        found = [s.problem for s in self.servers] + [r.problem for r in self.required]
        found += [c.problem for c in self.calls]
        found += [f"tool {c.kind} since the lock: {c.server}/{c.tool}" for c in self.lock_changes]
        return tuple(p for p in found if p) + self.notes

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def exit_code(self) -> int:
        if any(s.verdict == "invalid" for s in self.servers):
            return int(ExitCode.CONFIG)
        return int(ExitCode.OK if self.ok else ExitCode.TOOL_ERROR)

    @property
    def verdict_line(self) -> str:
        counts: dict[str, int] = {}
        for s in self.servers:
            counts[s.verdict] = counts.get(s.verdict, 0) + 1
        parts = [f"{counts.pop('ok', 0)} of {_count(len(self.servers), 'server')} ready"]
        parts += [f"{n} {verdict}" for verdict, n in counts.items()]
        if self.required:
            found = sum(1 for r in self.required if r.found)
            parts.append(f"{found}/{len(self.required)} required tools")
        if self.calls:
            passed = sum(1 for c in self.calls if c.ok)
            parts.append(f"{passed}/{len(self.calls)} calls passed")
        head = "check passed" if self.ok else f"check FAILED ({_count(len(self.problems), 'problem')})"
        return f"{head}: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "exitCode": self.exit_code,
            "servers": [s.to_json() for s in self.servers],
            "missingTools": [r.spec for r in self.required if not r.found],
            "requiredTools": [r.to_json() for r in self.required],
            "calls": [c.to_json() for c in self.calls],
            "problems": list(self.problems),
            "junit": self.junit_file,
            "lock": self.lock_file,
            "lockChanges": [c.to_json() for c in self.lock_changes],
        }


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
