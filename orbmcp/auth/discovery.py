"""The discovered metadata the SDK forgets across restarts, kept beside the tokens.

A refresh grant after a restart must go to the token endpoint (and name the resource) the stored
tokens were issued for; the SDK only learns those by rediscovering, which it does on a 401, after
the refresh it should have tried. :func:`snapshot` is what ``AuthStore.save_discovery`` keeps;
:func:`restore` puts it back into the SDK's context where nothing newer is there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from pydantic import ValidationError


def snapshot(ctx: OAuthContext) -> dict[str, Any]:
    as_md, prm = ctx.oauth_metadata, ctx.protected_resource_metadata
    return {
        "authorization_server": as_md.model_dump(mode="json", exclude_none=True) if as_md else None,
        "protected_resource": prm.model_dump(mode="json", exclude_none=True) if prm else None,
        "auth_server_url": ctx.auth_server_url,
    }


def restore(ctx: OAuthContext, saved: Mapping[str, Any]) -> None:
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
