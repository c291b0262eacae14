"""The token endpoint's side of the flow: which request is a grant, and what its answer means.

The provider recognises the SDK's token requests by their RFC 6749 ``grant_type`` (so it needs
no private SDK hook to see them) and settles each final answer here: a failed code exchange
becomes an :class:`AuthError` that quotes only the OAuth ``error`` code (never the
server-controlled description); a failed refresh forgets what the answer proved dead, and keeps
what an unavailable authorization server says nothing about.
"""

from __future__ import annotations

import json
from typing import Literal
from urllib.parse import parse_qs

import httpx2
from mcp.client.auth.oauth2 import OAuthContext

from orbmcp.auth.messages import log_auth_event
from orbmcp.auth.policy import is_preregistered
from orbmcp.auth.storage import AuthStore
from orbmcp.config.model import AuthConfig
from orbmcp.errors import AuthError, cmd

AUTHORIZATION_CODE = "authorization_code"
REFRESH_TOKEN = "refresh_token"  # noqa: S105 - a grant type
SECRET_FORM_FIELDS = ("code", "code_verifier", "refresh_token", "client_secret")

RefreshOutcome = Literal["refreshed", "transient", "failed"]


def form_fields(request: httpx2.Request) -> dict[str, list[str]]:
    """A request's form body (empty when it has none, or none read yet)."""
    try:
        return parse_qs(request.content.decode(), keep_blank_values=True)
    except Exception:
        return {}


def grant_type(request: httpx2.Request) -> str | None:
    """The ``grant_type`` of a token request; None for any other request."""
    if request.method != "POST":
        return None
    values = form_fields(request).get("grant_type")
    return values[0] if values else None


def oauth_error(body: bytes) -> str | None:
    """The RFC 6749 ``error`` code of a failed token response, if it is a plain code."""
    try:
        data = json.loads(body)
    except Exception:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, str) and error.replace("_", "").isalnum() and len(error) <= 64:
        return error
    return None


def token_request_failed(server: str, response: httpx2.Response) -> AuthError:
    """The code exchange was refused. Reason: the OAuth error when it says the client or the grant
    is bad (``invalid_client``, ``invalid_grant``), else ``token_request_failed``."""
    error = oauth_error(response.content)
    return AuthError(
        f"server '{server}': the token request failed (HTTP {response.status_code}"
        + (f", {error}" if error else "")
        + ")",
        server=server,
        hint=cmd("auth", server, "--reset") if error == "invalid_client" else None,
        reason=error if error in ("invalid_client", "invalid_grant") else "token_request_failed",
    )


def settle_refresh(
    response: httpx2.Response, ctx: OAuthContext, store: AuthStore, auth: AuthConfig, *, server: str
) -> RefreshOutcome:
    """After the SDK took in a refresh answer: ``refreshed``, ``transient`` (keep the stored
    refresh token for a later try) or ``failed`` (what the answer proved dead is forgotten)."""
    status = response.status_code
    if status == 200:
        ok = ctx.current_tokens is not None  # the SDK drops them when the answer is unusable
        log_auth_event(
            "oauth.refresh",
            server=server,
            message=f"token refresh for '{server}' {'succeeded' if ok else 'returned no usable token'}",
            status=status,
            reason="ok" if ok else "invalid-response",
        )
        # A 200 without usable tokens: keep the stored ones for later.
        return "refreshed" if ok else "transient"
    error = oauth_error(response.content)
    outcome: RefreshOutcome = "failed"
    if error in ("invalid_client", "unauthorized_client"):
        if not is_preregistered(ctx.client_info, auth):
            ctx.client_info = None
        store.clear(tokens=True, client=True)
    elif 400 <= status < 500:
        store.clear(tokens=True, client=False)
    else:
        outcome = "transient"  # the authorization server is down: the refresh token may be fine
    log_auth_event(
        "oauth.refresh",
        server=server,
        level="warning",
        message=f"token refresh for '{server}' failed (HTTP {status})",
        status=status,
        reason=error or "error",
    )
    return outcome
