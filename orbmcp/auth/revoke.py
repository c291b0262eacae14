"""Token revocation (RFC 7009) for ``logout``: stored tokens are revoked at the authorization
server, when it advertises a ``revocation_endpoint``, before they are forgotten here.

The refresh token goes first (revoking it ends the grant at most servers), then the access token.
The client authenticates as at the token endpoint: HTTP Basic for ``client_secret_basic``, the
secret in the form for ``client_secret_post``, the bare ``client_id`` for a public client. The
endpoint is vetted like every other URL the metadata names (SSRF policy), redirects are not
followed, and a failure never keeps ``logout`` from forgetting the tokens: it only says that they
stay valid until they expire.

Connect-time only (imports httpx2 inside the function).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import httpx2

from orbmcp.auth.messages import clean, log_auth_event
from orbmcp.auth.record import StoredRecord
from orbmcp.auth.tokens import oauth_error
from orbmcp.auth.urlpolicy import check_fetch_url
from orbmcp.config.model import ServerConfig
from orbmcp.errors import AuthError
from orbmcp.net.http import make_http_client

RevocationStatus = Literal["revoked", "unsupported", "failed", "none"]
_TOKEN_KINDS = ("refresh_token", "access_token")


@dataclass(frozen=True)
class Revocation:
    """What became of the stored tokens at the authorization server."""

    status: RevocationStatus  # none: nothing was stored; unsupported: no revocation endpoint
    detail: str | None = None  # why it failed


def _client(record: StoredRecord, cfg: ServerConfig) -> tuple[str | None, str | None, str]:
    """(client_id, client_secret, token-endpoint method): the configured client wins."""
    auth = cfg.auth
    if auth is not None and auth.client_id:
        configured = auth.token_endpoint_auth_method
        method = configured or ("client_secret_basic" if auth.client_secret else "none")
        return auth.client_id, auth.client_secret, method
    client: dict[str, Any] = record.client or {}
    client_id, secret = client.get("client_id"), client.get("client_secret")
    registered = client.get("token_endpoint_auth_method")
    return (
        client_id if isinstance(client_id, str) else None,
        secret if isinstance(secret, str) else None,
        registered if isinstance(registered, str) else "none",
    )


async def revoke_tokens(record: StoredRecord | None, cfg: ServerConfig) -> Revocation:
    """Revoke the record's tokens where the server's metadata says how (see the module docstring)."""
    tokens = (record.tokens or {}) if record is not None else {}
    values = [(kind, tokens.get(kind)) for kind in _TOKEN_KINDS]
    present = [(kind, value) for kind, value in values if isinstance(value, str) and value]
    if record is None or not present:
        return Revocation("none")
    metadata = record.discovery.get("authorization_server")
    endpoint = metadata.get("revocation_endpoint") if isinstance(metadata, dict) else None
    if not isinstance(endpoint, str) or not endpoint:
        return Revocation("unsupported")
    assert cfg.url is not None
    secrets = {value for _, value in present}
    try:
        check_fetch_url(endpoint, cfg.url, server=cfg.name)
    except AuthError as exc:
        return Revocation("failed", exc.message)
    client_id, secret, method = _client(record, cfg)
    if client_id is None:
        return Revocation("failed", "no client registration to authenticate with")
    if secret:
        secrets.add(secret)
    failure = await _post_each(endpoint, present, cfg, client_id=client_id, secret=secret, method=method)
    if failure is not None:
        return Revocation("failed", clean(failure, secrets))
    log_auth_event("oauth.revoked", server=cfg.name, message=f"revoked the tokens of '{cfg.name}'")
    return Revocation("revoked")


async def _post_each(
    endpoint: str,
    tokens: list[tuple[str, str]],
    cfg: ServerConfig,
    *,
    client_id: str,
    secret: str | None,
    method: str,
) -> str | None:
    """POST one revocation request per token; the first failure, or None."""
    headers: dict[str, str] = {}
    client_fields = {"client_id": client_id}
    if method == "client_secret_basic" and secret:
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        client_fields = {}
    elif method == "client_secret_post" and secret:
        client_fields["client_secret"] = secret
    budget = cfg.timeout_ms / 1000
    try:
        async with make_http_client(timeout_s=budget, request_timeout_s=budget) as http:
            for kind, value in tokens:
                form = {"token": value, "token_type_hint": kind, **client_fields}
                response = await http.post(endpoint, data=form, headers=headers)
                if response.status_code != 200:
                    code = oauth_error(await response.aread())
                    return f"HTTP {response.status_code}" + (f" ({code})" if code else "")
    except httpx2.HTTPError as exc:
        return str(exc) or type(exc).__name__
    return None


__all__ = ["Revocation", "RevocationStatus", "revoke_tokens"]
