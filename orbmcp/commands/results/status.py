"""Results of ``status`` (the overview and one server's detail), ``start``/``stop``/``reconnect``
and ``check``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orbmcp.commands.outcome import ExitCode, exit_code_for_code
from orbmcp.commands.results.base import Result


@dataclass(frozen=True)
class ToolCounts:
    """How many tools a server offered, and how many of them are active (bridged)."""

    discovered: int
    active: int

    def to_json(self) -> dict[str, int]:
        return {"discovered": self.discovered, "active": self.active}


@dataclass(frozen=True)
class StatusRow:
    """One server in ``/mcp`` and the ``mcp_status`` agent tool.

    ``to_json`` is the row agents read; ``error`` and the warnings are for people and stay out of it.
    """

    name: str
    lifecycle: str
    state: str
    tools: ToolCounts
    auth: str
    source: str
    error: str | None = None  # last error, redacted
    # The newest of the server's warnings (a dropped tool, an SSE fallback) and how many there
    # are: a server can be ready and still worth a look.
    warning: str | None = None
    warnings: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "lifecycle": self.lifecycle,
            "state": self.state,
            "tools": self.tools.to_json(),
            "auth": self.auth,
            "source": self.source,
        }


@dataclass(frozen=True)
class StatusReport(Result):
    rows: tuple[StatusRow, ...]
    notices: tuple[str, ...] = ()  # e.g. "Project config: not loaded (path)"; config warnings
    stopped_after: bool = False  # a one-shot command stopped what it started
    daemon_pid: int | None = None  # the session daemon that holds these servers

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.rows]


@dataclass(frozen=True)
class ServerDetail(Result):
    """``/mcp <name>``: why is this server in this state?"""

    name: str
    state: str
    retries: int
    max_retries: int
    transport: str
    lifecycle: str
    source: str
    file: str | None
    tools: ToolCounts
    oauth: str | None  # None when auth is not configured
    last_error: str | None
    hint: str | None
    recent_output: tuple[str, ...]
    project_not_loaded: str | None = None  # path, when the project is untrusted
    protocol_version: str | None = None
    server_info: str | None = None
    tool_names: tuple[str, ...] = ()
    message: str | None = None  # e.g. "stopped again: one-shot command"
    error_code: str | None = None  # OrbError code of the last error
    instructions: str | None = None  # the server's instructions (initialize result), raw
    advertised: Mapping[str, Any] | None = None  # client capabilities orbmcp advertised (wire JSON)
    offered: Mapping[str, Any] | None = None  # capabilities the server offered (wire JSON)

    def row(self) -> StatusRow:
        return StatusRow(
            self.name,
            self.lifecycle,
            self.state,
            self.tools,
            self.oauth or "not configured",
            self.source,
            self.last_error,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "retries": self.retries,
            "maxRetries": self.max_retries,
            "transport": self.transport,
            "lifecycle": self.lifecycle,
            "source": self.source,
            "file": self.file,
            "tools": self.tools.to_json(),
            "toolNames": list(self.tool_names),
            "oauth": self.oauth,
            "lastError": self.last_error,
            "hint": self.hint,
            "recentOutput": list(self.recent_output),
            "projectConfig": None
            if self.project_not_loaded is None
            else {"loaded": False, "path": self.project_not_loaded},
            "protocolVersion": self.protocol_version,
            "serverInfo": self.server_info,
            "instructions": self.instructions,
            "capabilities": {
                "advertised": None if self.advertised is None else dict(self.advertised),
                "server": None if self.offered is None else dict(self.offered),
            },
        }


@dataclass(frozen=True)
class ServerAction(Result):
    """start / stop / reconnect: what happened, and the rows of the servers concerned."""

    action: str
    details: tuple[ServerDetail, ...]
    message: str | None = None

    @property
    def exit_code(self) -> int:
        """start/reconnect fail when a server did not become ready: the status of its last error
        (a connection failure when it has none), an auth failure when it waits for authorization."""
        if self.action == "stop":
            return int(ExitCode.OK)
        for d in self.details:
            if d.state == "needs-auth":
                return int(ExitCode.AUTH)
            if d.state != "ready":
                return int(exit_code_for_code(d.error_code))
        return int(ExitCode.OK)

    def to_json(self) -> list[dict[str, Any]]:
        return [d.row().to_json() for d in self.details]


@dataclass(frozen=True)
class CheckReport(Result):
    """``orbmcp check``, for CI: fails unless every server is ready and every required tool exists."""

    servers: tuple[ServerDetail, ...]
    missing_tools: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def exit_code(self) -> int:
        return int(ExitCode.OK if self.ok else ExitCode.TOOL_ERROR)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "servers": [d.row().to_json() | {"lastError": d.last_error} for d in self.servers],
            "missingTools": list(self.missing_tools),
            "problems": list(self.problems),
        }
