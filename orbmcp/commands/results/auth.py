"""Results of ``auth`` (authorize, or ``--status``) and ``logout``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orbmcp.commands.results.base import Statement


@dataclass(frozen=True)
class AuthStatus(Statement):
    """``auth NAME --status``: what is stored for a server, in one line."""

    server: str
    status: str  # e.g. "credentials stored (expires in 52 min)"

    @property
    def message(self) -> str:
        return f"{self.server}: {self.status}"

    def fields(self) -> dict[str, Any]:
        return {"server": self.server, "auth": self.status}


@dataclass(frozen=True)
class Authorized(Statement):
    """``auth NAME``: how the OAuth flow ended, and the server's state when a session keeps it."""

    server: str
    status: str
    outcome: str  # the flow's own sentence
    scope: str | None = None
    expires_at: float | None = None
    corrupt_backup: str | None = None  # where an unreadable state file was moved
    state: str | None = None  # only in a persistent session, which restarts the server

    @property
    def message(self) -> str:
        text = self.outcome
        if self.corrupt_backup:
            text += f" (a corrupt state file was backed up to {self.corrupt_backup})"
        if self.state is not None:
            text += f"; {self.server} is {self.state}"
        return text

    def fields(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "server": self.server,
            "status": self.status,
            "scope": self.scope,
            "expiresAt": self.expires_at,
            "corruptBackup": self.corrupt_backup,
        }
        if self.state is not None:
            data["state"] = self.state
        return data


@dataclass(frozen=True)
class LoggedOut(Statement):
    """``logout NAME``: the stored credentials are gone (or there were none)."""

    server: str
    removed: bool
    # RFC 7009 at the authorization server: revoked | unsupported (no endpoint) | failed | none
    revocation: str = "none"
    revocation_error: str | None = None

    @property
    def message(self) -> str:
        if not self.removed:
            return f"no credentials were stored for '{self.server}'"
        forgot = f"forgot the stored credentials of '{self.server}'"
        if self.revocation == "revoked":
            return f"revoked the tokens of '{self.server}' at its authorization server and forgot them"
        if self.revocation == "unsupported":
            return (
                f"{forgot}; its authorization server offers no token revocation (RFC 7009), "
                "so the tokens stay valid until they expire"
            )
        if self.revocation == "failed":
            return (
                f"{forgot}; revoking them at the authorization server failed ({self.revocation_error}), "
                "so they stay valid until they expire"
            )
        return forgot

    def fields(self) -> dict[str, Any]:
        data: dict[str, Any] = {"server": self.server, "removed": self.removed, "revocation": self.revocation}
        if self.revocation_error is not None:
            data["revocationError"] = self.revocation_error
        return data
