"""What ``orbmcp.testing`` takes and returns besides tool results: small frozen values of its own,
so a test suite never depends on orbmcp's internals (README, "Stability")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class AdhocServer:
    """One server given by its command line or URL instead of a config file, checked like
    ``orbmcp call --stdio`` checks it: a command line runs over stdio, a URL is Streamable HTTP
    (``transport="sse"``: legacy SSE). Named from the command or host unless ``name`` is given."""

    target: str
    name: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    transport: str | None = None
    """Any spelling ``orbmcp add --transport`` takes ("sse", "http", "streamable-http", ...);
    unstated, a URL is Streamable HTTP and anything else a command line."""
    cwd: Path | None = None
    """Where a command line runs (default: the current directory)."""

    def key(self) -> tuple[object, ...]:
        """What makes two of them the same server (for sharing one session)."""
        return (
            self.target,
            self.name,
            tuple(sorted(self.env.items())),
            tuple(sorted(self.headers.items())),
            self.transport,
            self.cwd,
        )


@dataclass(frozen=True)
class ToolInfo:
    """One tool a server offers, as it listed it."""

    name: str
    description: str | None = None
    title: str | None = None
    input_schema: Mapping[str, Any] = field(default_factory=dict)
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
