"""Result models: what handlers return and renderers print.

Each model has ``to_json()`` giving the documented, versioned JSON shape (tests pin the keys).
Strings a server supplied are stored raw here; renderers escape them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JSON_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class ToolCounts:
    discovered: int
    active: int

    def to_json(self) -> dict[str, int]:
        return {"discovered": self.discovered, "active": self.active}


@dataclass(frozen=True)
class StatusRow:
    """One server in ``/mcp`` and the ``mcp_status`` agent tool (seed 003's ServerStatusRow)."""

    name: str
    lifecycle: str
    state: str
    tools: ToolCounts
    auth: str
    source: str
    error: str | None = None  # last error, redacted; not part of the seed row, shown by renderers
    # The newest of the server's warnings (a dropped tool, an SSE fallback) and how many there
    # are: a server can be ready and still worth a look. Not part of the seed row either.
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
class StatusReport:
    rows: tuple[StatusRow, ...]
    notices: tuple[str, ...] = ()  # e.g. "Project config: not loaded (path)"; config warnings
    stopped_after: bool = False  # a one-shot command stopped what it started

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.rows]


@dataclass(frozen=True)
class ServerDetail:
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
        }


@dataclass(frozen=True)
class ServerAction:
    """start / stop / reconnect: what happened, and the rows of the servers concerned."""

    action: str
    details: tuple[ServerDetail, ...]
    message: str | None = None

    @property
    def exit_code(self) -> int:
        """start/reconnect fail when a server did not become ready (4, or 5 auth, 6 timeout)."""
        if self.action == "stop":
            return 0
        codes = {"auth": 5, "timeout": 6, "config": 3}
        for d in self.details:
            if d.state != "ready":
                return 5 if d.state == "needs-auth" else codes.get(d.error_code or "", 4)
        return 0

    def to_json(self) -> list[dict[str, Any]]:
        return [d.row().to_json() for d in self.details]


@dataclass(frozen=True)
class Message:
    """A plain outcome: a sentence for people, a small object for JSON."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "message": self.text, **self.data}


@dataclass(frozen=True)
class Lines:
    """A list of strings (completion candidates, paths); JSON is the list."""

    items: tuple[str, ...]

    def to_json(self) -> list[str]:
        return list(self.items)


@dataclass(frozen=True)
class Document:
    """Already-shaped data (config show, trust review) with a plain-text rendering."""

    data: Any
    text: str

    def to_json(self) -> Any:
        return self.data


@dataclass(frozen=True)
class ShellExit:
    """The status of the REPL's last command, for ``orbmcp shell < script`` (nothing to print)."""

    exit_code: int

    def to_json(self) -> dict[str, int]:
        return {"exitCode": self.exit_code}


@dataclass(frozen=True)
class JsonText:
    """A slash line that asked for ``--json`` itself: JSON whatever the outer output mode."""

    data: Any
    exit_code: int = 0

    def to_json(self) -> Any:
        return self.data
