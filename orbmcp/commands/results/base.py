"""The ``Result`` base every handler returns, and the small results several commands share.

A result holds data only: strings a server or a config file supplied are stored raw, and the
renderers (``orbmcp.render``) escape them. ``to_json()`` gives the documented JSON shape of the
command (tests pin the keys); ``exit_code`` is the outcome a front reports as its exit status.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from orbmcp.commands.outcome import ExitCode


class Result(ABC):
    """What a handler returns: data for the renderers, never text laid out for one of them."""

    @property
    def exit_code(self) -> int:
        """The status a front exits with (or reports) after showing this result."""
        return int(ExitCode.OK)

    @abstractmethod
    def to_json(self) -> Any:
        """The documented ``--json`` shape."""


class Statement(Result):
    """An outcome told in one sentence plus a few fields: JSON ``{ok, message, ...fields}``.

    The sentence is part of the JSON, so the result composes it; renderers only escape it.
    """

    @property
    def ok(self) -> bool:
        return True

    @property
    @abstractmethod
    def message(self) -> str:
        """The sentence, raw (it may name a server or a path)."""

    def fields(self) -> dict[str, Any]:
        """The JSON keys beside ``ok`` and ``message``."""
        return {}

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "message": self.message, **self.fields()}


@dataclass(frozen=True)
class Message(Statement):
    """A plain outcome: a sentence for people, a small object for JSON."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    @property
    def message(self) -> str:
        return self.text

    @property
    def exit_code(self) -> int:
        # A message that says it failed must not exit 0: scripts read the status, not the sentence.
        return int(ExitCode.OK if self.ok else ExitCode.TOOL_ERROR)

    def fields(self) -> dict[str, Any]:
        return dict(self.data)


@dataclass(frozen=True)
class Lines(Result):
    """A list of strings (completion candidates, paths); JSON is the list."""

    items: tuple[str, ...]

    def to_json(self) -> list[str]:
        return list(self.items)


@dataclass(frozen=True)
class ShellExit(Result):
    """The status of the REPL's last command, for ``orbmcp shell < script`` (nothing to print)."""

    status: int

    @property
    def exit_code(self) -> int:
        return self.status

    def to_json(self) -> dict[str, int]:
        return {"exitCode": self.status}


@dataclass(frozen=True)
class JsonText(Result):
    """A slash line that asked for ``--json`` itself: JSON whatever the outer output mode."""

    data: Any
    status: int = 0

    @property
    def exit_code(self) -> int:
        return self.status

    def to_json(self) -> Any:
        return self.data


@dataclass(frozen=True)
class CommandIndex(Result):
    """Every command a front offers, one line each (``/mcp help``): (usage, summary) pairs."""

    title: str
    entries: tuple[tuple[str, str], ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, str]]:
        return [{"usage": usage, "summary": summary} for usage, summary in self.entries]


@dataclass(frozen=True)
class ParamHelp:
    name: str  # as the user writes it: <server>, SERVER or --timeout, -t
    help: str


@dataclass(frozen=True)
class CommandHelp(Result):
    """``COMMAND --help`` in the slash and REPL fronts (the shell's Typer front has its own)."""

    command: str
    usage: str
    help: str
    params: tuple[ParamHelp, ...] = ()

    def to_json(self) -> dict[str, str]:
        return {"command": self.command, "usage": self.usage, "help": self.help}
