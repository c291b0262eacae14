"""Results of ``completion show|install``, ``complete`` and ``slash --list``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orbmcp.commands.completion_words import Candidate
from orbmcp.commands.results.base import Result, Statement


@dataclass(frozen=True)
class CompletionScript(Result):
    """``completion show SHELL``: the script itself is the output."""

    shell: str
    script: str

    def to_json(self) -> dict[str, str]:
        return {"shell": self.shell, "script": self.script}


@dataclass(frozen=True)
class CompletionInstalled(Statement):
    """``completion install SHELL``: where the script went and how the shell picks it up."""

    shell: str
    path: str
    activation: str  # what the user still has to do, e.g. "new fish sessions load it"

    @property
    def message(self) -> str:
        return f"Installed the {self.shell} completion script: {self.path}\n{self.activation}."

    def fields(self) -> dict[str, Any]:
        return {"shell": self.shell, "path": self.path}


@dataclass(frozen=True)
class Completions(Result):
    """``complete LINE``: candidates for the word being typed, each replacing ``line[replace_from:]``.

    Text is one value per line (what shells read); JSON is ``{"items": [{value, description, kind,
    replace_from}]}``, the shape of the agent protocol's ``completions`` answer."""

    items: tuple[Candidate, ...]
    replace_from: int

    def to_json(self) -> dict[str, Any]:
        return {
            "items": [
                {
                    "value": c.value,
                    "description": c.description,
                    "kind": c.kind,
                    "replace_from": self.replace_from,
                }
                for c in self.items
            ]
        }


@dataclass(frozen=True)
class SlashCommandList(Result):
    """``slash --list``: every slash form orbmcp offers, for an agent that registers them
    (``commands/slash_catalog.py`` builds it from the command table)."""

    commands: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"commands": [dict(c) for c in self.commands]}
