"""Results of ``status`` (the overview and one server's detail) and ``start``/``stop``/``reconnect``.

A row's JSON is what agents (``mcp_status``) and scripts read: besides the state it carries the
last error and the one hint, so a script never has to parse text to learn why. Servers a config
file names that did not load (invalid, skipped for a missing variable, in an untrusted project)
are rows too, with that state: they never vanish from JSON into a stderr warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orbmcp.commands.outcome import ExitCode, exit_code_for_code
from orbmcp.commands.results.base import Result
from orbmcp.config.transports import is_local

# States of names a config file defines that did not load (``config.model.UnavailableEntry``).
UNAVAILABLE_STATES = ("invalid", "skipped", "untrusted")


@dataclass(frozen=True)
class ToolCounts:
    """How many tools a server offered, and how many of them are active (bridged)."""

    discovered: int
    active: int

    def to_json(self) -> dict[str, int]:
        return {"discovered": self.discovered, "active": self.active}


@dataclass(frozen=True)
class RetryWait:
    """A server waiting for its next connection attempt after a failure."""

    attempt: int  # the attempt it waits for (1-based)
    max_retries: int
    in_seconds: int  # until that attempt, rounded up

    @property
    def text(self) -> str:
        return f"retrying {self.attempt}/{self.max_retries} in {self.in_seconds} s"

    def to_json(self) -> dict[str, int]:
        return {"attempt": self.attempt, "maxRetries": self.max_retries, "inSeconds": self.in_seconds}


@dataclass(frozen=True)
class StatusRow:
    """One server in ``/mcp`` and the ``mcp_status`` agent tool."""

    name: str
    lifecycle: str | None  # None for an entry that did not load
    # ready, starting, retrying, stopped, disabled, failed, needs-auth, invalid, skipped, untrusted
    state: str
    tools: ToolCounts
    auth: str
    source: str
    error: str | None = None  # last error (or why the entry did not load), redacted
    hint: str | None = None  # the one thing to do about it, spelled for the front
    # The server's warnings, oldest first (a dropped tool, an SSE fallback, an unknown config key):
    # a server can be ready and still worth a look.
    warnings: tuple[str, ...] = ()
    retry: RetryWait | None = None
    file: str | None = None
    transport: str | None = None  # of its last connection, else its entry's; None: did not load
    # A URL that refused Streamable HTTP and was reached over legacy HTTP+SSE instead (a fact of
    # the server worth seeing in the overview, not only in the detail's recent output).
    sse_fallback: bool = False

    @property
    def warning(self) -> str | None:
        """The newest warning."""
        return self.warnings[-1] if self.warnings else None

    @property
    def shown_state(self) -> str:
        """The state as a person reads it: ``retrying 2/5 in 5 s`` rather than ``retrying``."""
        return self.retry.text if self.retry is not None else self.state

    @property
    def unavailable(self) -> bool:
        return self.state in UNAVAILABLE_STATES

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.name,
            "lifecycle": self.lifecycle,
            "state": self.state,
            "tools": self.tools.to_json(),
            "auth": self.auth,
            "source": self.source,
            "lastError": self.error,
            "hint": self.hint,
            "warnings": list(self.warnings),
        }
        if self.sse_fallback:
            # Only where it happened: these rows are also what an agent reads (mcp_status), and
            # every key there costs context on every row.
            body |= {"transport": self.transport, "sseFallback": True}
        if self.retry is not None:
            body["retry"] = self.retry.to_json()
        if self.unavailable:
            body["file"] = self.file
        return body


@dataclass(frozen=True)
class StatusReport(Result):
    rows: tuple[StatusRow, ...]
    notices: tuple[str, ...] = ()  # e.g. "Project config: not loaded (path)"; config warnings
    stopped_after: bool = False  # a one-shot command stopped what it started
    daemon_pid: int | None = None  # the session daemon that holds these servers
    # No server at all: where the first one goes (the global mcp.json) and the command that
    # lists every file orbmcp reads, spelled for the front.
    config_file: str | None = None
    paths_command: str | None = None
    # The commands that write that file for you (none under --config: they do not edit it).
    add_command: str | None = None
    import_command: str | None = None

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.rows]


@dataclass(frozen=True)
class Launch:
    """How a server is reached, as the detail view shows it: secrets masked."""

    command: tuple[str, ...] = ()  # argv (masked); empty for an HTTP server
    cwd: str | None = None
    env_names: tuple[str, ...] = ()
    url: str | None = None  # redacted
    header_names: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        if self.url is not None:
            return {"url": self.url, "headerNames": list(self.header_names)}
        return {
            "command": self.command[0] if self.command else None,
            "args": list(self.command[1:]),
            "cwd": self.cwd,
            "envNames": list(self.env_names),
        }


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
    error_reason: str | None = None  # its machine reason
    launch: Launch | None = None
    retry: RetryWait | None = None
    warnings: tuple[str, ...] = ()  # config warnings about this server's entry

    instructions: str | None = None  # the server's instructions (initialize result), raw
    advertised: Mapping[str, Any] | None = None  # client capabilities orbmcp advertised (wire JSON)
    offered: Mapping[str, Any] | None = None  # capabilities the server offered (wire JSON)
    # The roots the server is given (file:// URIs); None: none, the roots capability is not offered
    # and the server keeps the directories it was started with.
    roots: tuple[str, ...] | None = None
    sse_fallback: bool = False  # as StatusRow.sse_fallback

    @property
    def unavailable(self) -> bool:
        return self.state in UNAVAILABLE_STATES

    @property
    def remote(self) -> bool:
        """Reached by URL: no process of ours, so no stderr to show."""
        return self.launch is not None and self.launch.url is not None

    @property
    def auth(self) -> str:
        """The status table's auth cell: ``-`` for a stdio server (OAuth is for remote ones)."""
        return self.oauth or ("-" if is_local(self.transport) else "not configured")

    def row(self) -> StatusRow:
        return StatusRow(
            self.name,
            None if self.unavailable else self.lifecycle,
            self.state,
            self.tools,
            self.auth,
            self.source,
            self.last_error,
            self.hint,
            self.warnings,
            self.retry,
            self.file,
            None if self.unavailable else self.transport,
            self.sse_fallback,
        )

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.name,
            "state": self.state,
            "retries": self.retries,
            "maxRetries": self.max_retries,
            "transport": self.transport,
            "sseFallback": self.sse_fallback,
            "lifecycle": self.lifecycle,
            "source": self.source,
            "file": self.file,
            "tools": self.tools.to_json(),
            "toolNames": list(self.tool_names),
            "auth": self.auth,
            "oauth": self.oauth,
            "lastError": self.last_error,
            "errorCode": self.error_code,
            "errorReason": self.error_reason,
            "hint": self.hint,
            "recentOutput": list(self.recent_output),
            "projectConfig": None
            if self.project_not_loaded is None
            else {"loaded": False, "path": self.project_not_loaded},
            "protocolVersion": self.protocol_version,
            "serverInfo": self.server_info,
            "warnings": list(self.warnings),
            "instructions": self.instructions,
            "capabilities": {
                "advertised": None if self.advertised is None else dict(self.advertised),
                "server": None if self.offered is None else dict(self.offered),
            },
            "roots": None if self.roots is None else list(self.roots),
        }
        if self.launch is not None:
            body |= self.launch.to_json()
        if self.retry is not None:
            body["retry"] = self.retry.to_json()
        return body


@dataclass(frozen=True)
class ServerAction(Result):
    """start / stop / reconnect: what happened, and the detail of each server concerned.

    JSON: the detail object of each server (its row's keys and the last error, hint and recent
    output), so a failed ``--json start`` says why on stdout, besides its exit status."""

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
        return [d.to_json() for d in self.details]
