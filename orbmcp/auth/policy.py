"""What orbmcp accepts from an authorization server, and which client identity it presents.

Decisions over the SDK's models, without I/O or provider state:

- authorization-server metadata that is JSON but invalid is an error naming its URL and the
  field, not a document to skip (the SDK would then try the next URL, and finally guess endpoints
  on the MCP server's own origin); when a protected-resource document named an authorization
  server, its metadata must be found: no guessed endpoints;
- every endpoint the metadata names is vetted (SSRF policy for fetches, browser policy for the
  authorization endpoint) before any of them is used;
- S256 PKCE must be advertised, unless the entry opts out (``allowMissingPkceAdvertisement``);
- the scope asked for is the union of what the server challenged, what the entry configures and
  what a session was refused for (a 403 ``insufficient_scope`` remembered in the store);
- client identity: pre-registered (the entry's ``clientId``) → CIMD (``clientMetadataUrl``) →
  dynamic registration as a native public client, with the best token-endpoint method offered.

Connect-time only (imports the SDK).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, ValidationError

from orbmcp.auth.messages import clean
from orbmcp.auth.urlpolicy import check_browser_url, check_fetch_url
from orbmcp.config.model import AuthConfig
from orbmcp.errors import AuthError

TokenEndpointMethod = Literal["none", "client_secret_post", "client_secret_basic"]
# A public client first: a native app cannot keep a secret.
METHOD_PREFERENCE: tuple[TokenEndpointMethod, ...] = ("none", "client_secret_basic", "client_secret_post")


def requested_method(value: str | None) -> TokenEndpointMethod:
    """The token-endpoint method to register with: the entry's secret method, else ``none``."""
    if value == "client_secret_post":
        return "client_secret_post"
    if value == "client_secret_basic":
        return "client_secret_basic"
    return "none"


# -- client identity ------------------------------------------------------------------------------


def preregistered_client(
    auth: AuthConfig, redirect_uris: list[AnyUrl] | None
) -> OAuthClientInformationFull | None:
    """The client the entry configures (``clientId``), or None to register or use CIMD."""
    if not auth.client_id:
        return None
    method = auth.token_endpoint_auth_method or ("client_secret_basic" if auth.client_secret else "none")
    return OAuthClientInformationFull(
        client_id=auth.client_id,
        client_secret=auth.client_secret or None,
        token_endpoint_auth_method=method,
        redirect_uris=list(redirect_uris) if redirect_uris else None,
    )


def is_preregistered(info: OAuthClientInformationFull | None, auth: AuthConfig) -> bool:
    return info is not None and bool(auth.client_id) and info.client_id == auth.client_id


def is_cimd(info: OAuthClientInformationFull | None, auth: AuthConfig) -> bool:
    url = auth.client_metadata_url
    return info is not None and bool(url) and info.client_id == url


def fit_preregistered_method(
    info: OAuthClientInformationFull | None, metadata: OAuthMetadata | None, auth: AuthConfig
) -> None:
    """A configured secret goes in the body when the server takes it only there (and the entry
    names no method)."""
    if not is_preregistered(info, auth) or auth.token_endpoint_auth_method or metadata is None:
        return
    assert info is not None
    supported = metadata.token_endpoint_auth_methods_supported or []
    if info.client_secret and "client_secret_basic" not in supported and "client_secret_post" in supported:
        info.token_endpoint_auth_method = "client_secret_post"  # noqa: S105


def registration_body(
    meta: OAuthClientMetadata,
    metadata: OAuthMetadata | None,
    auth: AuthConfig,
    required_scope: str | None,
) -> dict[str, Any]:
    """The dynamic registration request's JSON: our method choice and scope applied to ``meta``."""
    if not auth.token_endpoint_auth_method and metadata is not None:
        supported = metadata.token_endpoint_auth_methods_supported or []
        choice = next((m for m in METHOD_PREFERENCE if m in supported), None)
        if choice is not None:
            meta.token_endpoint_auth_method = choice
    meta.scope = wanted_scope(meta.scope, auth, required_scope)
    return meta.model_dump(by_alias=True, mode="json", exclude_none=True)


def wanted_scope(selected: str | None, auth: AuthConfig, required_scope: str | None) -> str | None:
    return union_scopes(union_scopes(selected, auth.scope or None), required_scope)


# -- what the authorization server offers -----------------------------------------------------------


_METADATA_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


def is_metadata_request(method: str, path: str) -> bool:
    """A GET of authorization-server metadata (RFC 8414 or OpenID discovery, any position)."""
    return method == "GET" and any(marker in path for marker in _METADATA_PATHS)


def check_metadata_document(body: bytes, url: str, *, server: str) -> None:
    """Authorization-server metadata that parses as a JSON object must be valid metadata.

    Reason ``invalid_as_metadata``. Anything that is not a JSON object (an HTML page a web app
    serves for every path) is left to the SDK, which tries the next discovery URL.
    """
    try:
        document = json.loads(body)
    except ValueError:
        return
    if not isinstance(document, dict):
        return
    try:
        OAuthMetadata.model_validate(document)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in error["loc"]) or "the document"
        raise AuthError(
            f"server '{server}': the authorization server metadata at {clean(url)} is invalid: "
            f"{clean(field)}: {clean(error['msg'])[:200]}; refusing to authorize",
            server=server,
            hint="the authorization server publishes broken metadata: tell its operator",
            reason="invalid_as_metadata",
        ) from None


def require_metadata(
    metadata: OAuthMetadata | None,
    resource: ProtectedResourceMetadata | None,
    auth_server: str | None,
    *,
    server: str,
) -> None:
    """A protected-resource document named an authorization server: its metadata must have been
    found. Reason ``as_metadata_missing``. (Without such a document, the 2025-03-26 fallback to
    ``/authorize``, ``/token`` and ``/register`` on the server's origin is the protocol.)"""
    if metadata is not None or resource is None:
        return
    where = clean(auth_server) if auth_server else "the authorization server"
    raise AuthError(
        f"server '{server}': {where} publishes no authorization-server metadata "
        "(RFC 8414 or OpenID discovery); refusing to guess its endpoints",
        server=server,
        hint="the server's protected-resource metadata names an authorization server that cannot be used",
        reason="as_metadata_missing",
    )


def vet_metadata(metadata: OAuthMetadata | None, server_url: str, *, server: str) -> None:
    """Every endpoint the metadata names, before any of them is used."""
    if metadata is None:
        return
    for url in (metadata.token_endpoint, metadata.registration_endpoint):
        if url is not None:
            check_fetch_url(str(url), server_url, server=server)
    check_browser_url(str(metadata.authorization_endpoint))


def check_pkce(
    metadata: OAuthMetadata | None,
    resource: ProtectedResourceMetadata | None,
    auth: AuthConfig,
    *,
    server: str,
) -> None:
    """S256 must be advertised. Reason: ``pkce_unsupported``."""
    methods = metadata.code_challenge_methods_supported if metadata is not None else None
    if methods and "S256" in methods:
        return
    if metadata is None and resource is None:
        # The 2025-03-26 fallback (no PRM, no AS metadata: /authorize, /token, /register on the
        # server's own origin) has no advertisement to verify, and that revision requires S256
        # unconditionally; the refusal is for metadata that omits or lacks S256.
        return
    if not methods and auth.allow_missing_pkce_advertisement:
        return
    what = (
        "does not advertise PKCE"
        if not methods
        else f"offers PKCE methods {clean(str(methods))} but not S256"
    )
    raise AuthError(
        f"server '{server}': the authorization server {what}; refusing to authorize",
        server=server,
        hint='if you trust this server, set "allowMissingPkceAdvertisement": true in its auth settings'
        if not methods
        else None,
        reason="pkce_unsupported",
    )
