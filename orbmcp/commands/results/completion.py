"""Results of ``completion show`` and ``completion install``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
