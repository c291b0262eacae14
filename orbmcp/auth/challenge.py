"""What a 401 or a 403 ``insufficient_scope`` on the protected request means for one provider.

The provider wraps the SDK's flow and asks :meth:`Challenges.decide` about every answer to the
request it authenticates: ``pass`` it on, ``restart`` the flow (try the refresh grant first, or
let the SDK's step-up run), or ``authorize`` interactively. A non-interactive provider never
authorizes: it remembers what the session lacked (dropped tokens, a wider scope) in the store,
tells ``on_challenge``, and raises the error naming the command that fixes it. Interactive
authorizations stop after :data:`MAX_AUTH_ATTEMPTS` in a row.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Literal

import httpx2
from mcp.client.auth.oauth2 import OAuthContext
from mcp.client.auth.utils import extract_field_from_www_auth, union_scopes

from orbmcp.auth.messages import clean, log_auth_event
from orbmcp.auth.storage import AuthStore
from orbmcp.auth.ui import AuthChallenge, ChallengeKind, ChallengeListener, needs_auth_error
from orbmcp.errors import AuthError, cmd

MAX_AUTH_ATTEMPTS = 3

Action = Literal["pass", "restart", "authorize"]


class Challenges:
    """The challenge bookkeeping of one provider (see the module docstring)."""

    def __init__(
        self, *, server: str, store: AuthStore, interactive: bool, on_challenge: ChallengeListener | None
    ) -> None:
        self.server = server
        self.store = store
        self.interactive = interactive
        self.on_challenge = on_challenge
        self._attempts = 0  # interactive authorizations since the last accepted request

    def authorization_started(self) -> int:
        """Count one interactive authorization; its number in the current run of attempts."""
        self._attempts += 1
        return self._attempts

    def decide(
        self,
        response: httpx2.Response,
        ctx: OAuthContext,
        *,
        restarts: int,
        request_yields: int,
        authorized_in_call: bool,
        refresh_transient: bool,
    ) -> Action:
        """What to do about this answer to the authenticated request (raises when nothing helps)."""
        status = response.status_code
        step_up = status == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope"
        if status != 401 and not step_up:
            if status < 400:
                self._attempts = 0
            return "pass"
        kind: ChallengeKind = "unauthorized" if status == 401 else "insufficient_scope"
        scope = extract_field_from_www_auth(response, "scope")
        log_auth_event(
            "oauth.challenge",
            server=self.server,
            message=f"server '{self.server}' answered {status} ({kind})",
            status=status,
            kind=kind,
        )
        if status == 401:
            if authorized_in_call:
                raise AuthError(
                    f"server '{self.server}' rejected the token its authorization server just issued",
                    server=self.server,
                    hint=cmd("auth", self.server, "--reset"),
                    reason="fresh_token_rejected",
                )
            if restarts == 0 and ctx.current_tokens is not None and self._may_refresh_instead(ctx):
                # A token of unknown expiry was rejected: try the refresh grant before any login.
                ctx.token_expiry_time = 1.0
                return "restart"
            if refresh_transient:
                # The refresh token may well be fine; a login now would be the wrong fix.
                raise self._notify(
                    kind,
                    scope,
                    False,
                    AuthError(
                        f"server '{self.server}': could not refresh the token "
                        "(authorization server unavailable); stored credentials kept, try again later",
                        server=self.server,
                        reason="refresh_unavailable",
                    ),
                )
        if not self.interactive:
            raise self._needs_auth(ctx, kind, scope, refresh_transient)
        if self._attempts >= MAX_AUTH_ATTEMPTS:
            raise self._notify(
                kind,
                scope,
                False,
                AuthError(
                    f"server '{self.server}' still refuses after {MAX_AUTH_ATTEMPTS} authorization attempts"
                    + (f" (needs scope {clean(scope)})" if scope else ""),
                    server=self.server,
                    hint=f"check that your account may use scope {clean(scope)}" if scope else None,
                    reason="attempts_exhausted",
                ),
            )
        if request_yields > 1:
            # The SDK passes the retry's 403 through; start over so its step-up runs now.
            return "restart"
        # The SDK rediscovers on every 401; drop what was restored for the refresh grant.
        if status == 401:
            ctx.protected_resource_metadata = None
            ctx.auth_server_url = None
        return "authorize"

    def _may_refresh_instead(self, ctx: OAuthContext) -> bool:
        if ctx.can_refresh_token():
            return True
        stored = self.store.load()
        tokens = (stored.tokens or {}) if stored else {}
        current = ctx.current_tokens
        return bool(current and tokens.get("access_token") not in (None, current.access_token))

    def _needs_auth(
        self, ctx: OAuthContext, kind: ChallengeKind, scope: str | None, refresh_transient: bool
    ) -> AuthError:
        """Non-interactive: remember what the session lacked, for the authorization that will fix it."""
        invalidated = False
        if kind == "unauthorized":
            if ctx.current_tokens is not None or self.store.load() is not None:
                if not refresh_transient:
                    self.store.clear(tokens=True, client=False)
                    invalidated = True
                ctx.clear_tokens()
            err = needs_auth_error(self.server)
        else:
            granted = ctx.current_tokens.scope if ctx.current_tokens else None
            wanted = union_scopes(union_scopes(self.store.required_scope(), granted), scope)
            if self.store.load() is not None:
                self.store.set_required_scope(wanted)
            err = needs_auth_error(self.server, scope=scope or wanted)
        return self._notify(kind, scope, invalidated, err)

    def _notify(self, kind: ChallengeKind, scope: str | None, invalidated: bool, err: AuthError) -> AuthError:
        """Tell ``on_challenge`` (a failing listener is ignored); ``err`` back, for the raise."""
        challenge = AuthChallenge(
            server=self.server,
            kind=kind,
            scope=scope,
            tokens_invalidated=invalidated,
            message=err.message,
            error=err,
        )
        if self.on_challenge is not None:
            with suppress(Exception):
                self.on_challenge(challenge)
        return err
