"""What an OAuth provider asks of the person authorizing, and what it tells its caller.

:class:`AuthUI` is how a provider reaches a person (each front implements it; never a shell).
:class:`AuthChallenge` reports a 401 or 403 ``insufficient_scope`` the provider could not (or,
non-interactive, must not) resolve by itself; :func:`needs_auth_error` is the error that goes with
it, naming the command that fixes it in each front's own spelling. Stdlib only at import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from orbmcp.auth.messages import clean
from orbmcp.errors import AuthError, cmd

ChallengeKind = Literal["unauthorized", "insufficient_scope"]


class AuthUI(Protocol):
    """How a provider reaches the person authorizing (never a shell)."""

    def open_url(self, url: str) -> bool:
        """Open a validated https (or loopback http) URL in a browser; False if it could not."""
        ...

    def show_url(self, url: str) -> None:
        """Print the URL for manual copy (always called)."""
        ...

    def prompt_paste(self) -> str | None:
        """Headless: block until the user pastes the final redirect URL; None for no paste."""
        ...

    def notify(self, msg: str) -> None:
        """A one-line notice for the person (a browser that would not open, a rejected paste)."""
        ...


@dataclass(frozen=True)
class AuthChallenge:
    """A 401 or 403 insufficient_scope the provider could not (or must not) resolve by itself.

    ``message`` is the error's text in the shell's spelling; ``error`` is the error itself, for a
    front that spells command references its own way.
    """

    server: str
    kind: ChallengeKind
    scope: str | None
    tokens_invalidated: bool
    message: str
    error: AuthError | None = field(default=None, compare=False)


ChallengeListener = Callable[[AuthChallenge], None]


def needs_auth_error(server: str, *, scope: str | None = None) -> AuthError:
    """The server needs an (interactive) authorization, or more scope, that this caller cannot run.

    Reasons: ``needs_auth``, ``insufficient_scope``.
    """
    fix = cmd("auth", server)
    if scope:
        return AuthError(
            f"server '{server}' needs additional permission ({clean(scope)}); run `{fix}`",
            server=server,
            hint=fix,
            reason="insufficient_scope",
        )
    return AuthError(
        f"server '{server}' needs authorization; run `{fix}`",
        server=server,
        hint=fix,
        reason="needs_auth",
    )
