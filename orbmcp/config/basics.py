"""The config's plainest values: names, defaults, a warning. A module of their own so that the
settings model (``settings.py``) and the file readers below it need not import ``model.py``, which
names the settings' type (no import cycle, ``tests/test_layers.py``). ``model.py`` re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ClientName = Literal[
    "claude-code", "claude-desktop", "cursor", "vscode", "windsurf", "codex", "gemini", "opencode", "pi"
]

DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
DEFAULT_MAX_RETRIES = 5
DEFAULT_TOOL_PREFIX = "mcp"
DEFAULT_SAMPLING_TIMEOUT_MS = 120_000


@dataclass(frozen=True)
class SamplingConfig:
    """``settings.sampling`` (global files only): the command that answers servers' sampling
    requests from the shell, and how long it may take."""

    command: tuple[str, ...]
    timeout_ms: int = DEFAULT_SAMPLING_TIMEOUT_MS


@dataclass(frozen=True)
class ConfigWarning:
    """A problem that did not stop the load: a skipped entry, an ignored key or setting, ...

    ``reason`` is the machine spelling (``invalid_entry``, ``env_missing``, ``ignored_key``,
    ``partial_override_unknown``, ...), for code that must tell warnings apart; two warnings with
    the same text are the same warning whatever their reason.
    """

    message: str
    file: str | None = None
    server: str | None = None
    reason: str = field(default="warning", compare=False)
    # What fixes it, for a person (a variable to set, a misspelled key): the hint of the errors
    # and status rows that name this server.
    fix: str | None = field(default=None, compare=False)
    # The entry of ``server`` was dropped because of this (not merely a key ignored).
    skipped: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        where = ", ".join(p for p in (self.file, f"server {self.server!r}" if self.server else None) if p)
        return f"{where}: {self.message}" if where else self.message
