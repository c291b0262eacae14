"""Results of ``config show``, ``config paths``, ``config validate``, ``trust`` and ``untrust``.

Free of the SDK and of pydantic: these commands are fast paths. Server views hold the config as
``config show --json`` prints it, secrets already masked by the handler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.results.base import Result, Statement

if TYPE_CHECKING:
    from orbmcp.config.model import ConfigWarning
    from orbmcp.config.trust import ProjectReview


def warnings_json(warnings: tuple[ConfigWarning, ...]) -> list[dict[str, Any]]:
    return [{"message": w.message, "file": w.file, "server": w.server} for w in warnings]


@dataclass(frozen=True)
class ConfigView(Result):
    """``config show``: the resolved configuration."""

    servers: tuple[Mapping[str, Any], ...]  # one JSON object per server, secrets masked
    warnings: tuple[ConfigWarning, ...]
    project: Mapping[str, Any]
    settings: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "servers": [dict(s) for s in self.servers],
            "warnings": warnings_json(self.warnings),
            "project": dict(self.project),
            "settings": dict(self.settings),
        }


@dataclass(frozen=True)
class PathsView(Result):
    """``config paths``: where orbmcp reads and writes."""

    global_dir: str
    global_files: tuple[str, ...]
    project_files: tuple[str, ...]
    config_override: str | None
    trust_store: str
    auth_dir: str
    debug_log: str
    cache_dir: str
    # Other clients' files orbmcp reads through: {client, path, scope, exists}, precedence order.
    imports: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "globalDir": self.global_dir,
            "globalFiles": list(self.global_files),
            "projectFiles": list(self.project_files),
            "configOverride": self.config_override,
            "trustStore": self.trust_store,
            "authDir": self.auth_dir,
            "debugLog": self.debug_log,
            "cacheDir": self.cache_dir,
            "imports": [dict(i) for i in self.imports],
        }


@dataclass(frozen=True)
class ValidationReport(Result):
    """``config validate``: fails (exit 3) on any warning."""

    servers: int  # how many servers are valid
    warnings: tuple[ConfigWarning, ...]
    project: Mapping[str, Any]

    @property
    def ok(self) -> bool:
        return not self.warnings

    @property
    def exit_code(self) -> int:
        return int(ExitCode.OK if self.ok else ExitCode.CONFIG)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "servers": self.servers,
            "warnings": warnings_json(self.warnings),
            "project": dict(self.project),
        }


TrustDecision = Literal["already-trusted", "trusted", "declined"]


@dataclass(frozen=True)
class TrustReview(Statement):
    """``trust``: exactly what a project's config would run, and what became of the approval.

    ``decision`` is None while a person is being asked: the review alone.
    """

    review: ProjectReview
    pending: tuple[str, ...]  # servers new or changed since the last approval
    decision: TrustDecision | None = None

    @property
    def ok(self) -> bool:
        return self.decision != "declined"

    @property
    def message(self) -> str:
        if self.decision == "already-trusted":
            return "Already trusted."
        if self.decision == "trusted":
            return f"Trusted: {self.review.real_dir}"
        if self.decision == "declined":
            return "Not trusted; the project config stays invisible."
        return "Not approved yet."

    def fields(self) -> dict[str, Any]:
        return {"trusted": self.decision in ("already-trusted", "trusted"), "review": self.review_json()}

    def review_json(self) -> dict[str, Any]:
        review = self.review
        return {
            "project": review.real_dir,
            "files": [str(f) for f in review.files],
            "digest": review.digest,
            "servers": [
                {
                    "name": s.name,
                    "kind": s.kind,
                    "file": s.file,
                    "transport": s.transport,
                    "command": s.command,
                    "args": list(s.args),
                    "argv": [s.command, *s.args] if s.command is not None else [],
                    "cwd": s.cwd,
                    "envNames": list(s.env_names),
                    "url": s.url,
                    "headerNames": list(s.header_names),
                    "variables": list(s.variables),
                    "overrides": dict(s.overrides),
                    "problems": list(s.problems),
                    "pending": s.key in self.pending,
                    "source": "project" if s.client is None else f"import:{s.client}",
                }
                for s in review.servers
            ],
        }


@dataclass(frozen=True)
class TrustRevoked(Statement):
    """``untrust``: the approval of a project is gone (or there was none)."""

    project: str  # its real path
    revoked: bool  # False: it was not trusted

    @property
    def message(self) -> str:
        return f"Revoked trust for {self.project}" if self.revoked else f"{self.project} was not trusted"

    def fields(self) -> dict[str, Any]:
        return {"trusted": False, "revoked": self.revoked}
