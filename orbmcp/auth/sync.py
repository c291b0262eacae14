"""The SDK's OAuth context and orbmcp's store, kept in step.

The SDK keeps its state (tokens, client, discovered metadata) in an ``OAuthContext`` and forgets
part of it across restarts: the ABSOLUTE expiry of the tokens and the metadata the refresh grant
needs (the token endpoint and resource the tokens were issued for), which it only relearns by
rediscovering on a 401, after the refresh it should have tried. The store keeps both;
:func:`restore_after_load` puts them back. :func:`adopt_stored_tokens` takes what another orbmcp
process stored meanwhile, and :func:`forget_other_issuer` drops everything bound to an
authorization server the server no longer names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from pydantic import ValidationError

from orbmcp.auth.messages import log_auth_event
from orbmcp.auth.policy import is_cimd, is_preregistered, preregistered_client
from orbmcp.auth.record import issuers_equal
from orbmcp.auth.storage import AuthStore
from orbmcp.config.model import AuthConfig


def snapshot(ctx: OAuthContext) -> dict[str, Any]:
    """The discovered metadata, as ``AuthStore.save_discovery`` keeps it."""
    as_md, prm = ctx.oauth_metadata, ctx.protected_resource_metadata
    return {
        "authorization_server": as_md.model_dump(mode="json", exclude_none=True) if as_md else None,
        "protected_resource": prm.model_dump(mode="json", exclude_none=True) if prm else None,
        "auth_server_url": ctx.auth_server_url,
    }


def restore_discovery(ctx: OAuthContext, saved: Mapping[str, Any]) -> None:
    """Fill what the context lacks from ``saved``; a record that does not validate is ignored."""
    try:
        if ctx.oauth_metadata is None and isinstance(saved.get("authorization_server"), dict):
            ctx.oauth_metadata = OAuthMetadata.model_validate(saved["authorization_server"])
        if ctx.protected_resource_metadata is None and isinstance(saved.get("protected_resource"), dict):
            ctx.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                saved["protected_resource"]
            )
    except ValidationError:
        return
    if ctx.auth_server_url is None and isinstance(saved.get("auth_server_url"), str):
        ctx.auth_server_url = saved["auth_server_url"]


def current_issuer(ctx: OAuthContext) -> str | None:
    md = ctx.oauth_metadata
    return str(md.issuer) if md is not None else None


def restore_after_load(ctx: OAuthContext, store: AuthStore, auth: AuthConfig) -> None:
    """After the SDK loaded tokens and client from the store: the expiry, the configured client
    (which wins over a stored registration) and the discovered metadata."""
    ctx.token_expiry_time = store.expires_at() if ctx.current_tokens is not None else None
    pre = preregistered_client(auth, ctx.client_metadata.redirect_uris)
    if pre is not None:
        ctx.client_info = pre
    restore_discovery(ctx, store.discovery())


async def adopt_stored_tokens(ctx: OAuthContext, store: AuthStore, auth: AuthConfig, *, server: str) -> bool:
    """Under the cross-process lock: take the tokens another process refreshed or obtained
    meanwhile. True when they are usable (valid, or refreshable) and differ from ours."""
    stored = await store.get_tokens()
    current = ctx.current_tokens
    if stored is None:
        if current is not None and store.load() is None:
            ctx.clear_tokens()  # logged out or invalidated elsewhere: ours are dead too
        return False
    if current is not None and stored.access_token == current.access_token:
        return False
    ctx.current_tokens = stored
    ctx.token_expiry_time = store.expires_at()
    info = await store.get_client_info()
    if info is not None and not auth.client_id:
        ctx.client_info = info
    restore_discovery(ctx, store.discovery())
    log_auth_event(
        "oauth.tokens.adopted",
        server=server,
        message=f"using tokens another orbmcp process stored for '{server}'",
    )
    return ctx.is_token_valid() or ctx.can_refresh_token()


def forget_other_issuer(
    ctx: OAuthContext, store: AuthStore, auth: AuthConfig, issuer: str, *, server: str
) -> None:
    """The server now names ``issuer``: nothing issued by or registered with another
    authorization server may be sent to it (a configured or CIMD client is no registration)."""
    record = store.load()
    if record is None or not record.issuer or issuers_equal(record.issuer, issuer):
        return
    ctx.clear_tokens()
    ctx.oauth_metadata = None
    if not is_preregistered(ctx.client_info, auth) and not is_cimd(ctx.client_info, auth):
        ctx.client_info = None
    store.clear(tokens=True, client=True)
    log_auth_event(
        "oauth.issuer.changed",
        server=server,
        level="warning",
        message=f"server '{server}' moved to another authorization server; stored credentials dropped",
    )
