"""The ``auth`` (or ``oauth``) object of an HTTP server entry, as a pydantic model.

Only OAuth 2.1 is configured here; static tokens belong in ``headers``. Several spellings are
accepted for each field (camelCase, snake_case, the names other MCP clients use); the first one
listed is the documented one, and the one messages name is the one the file used.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from orbmcp.config import entry_values as values
from orbmcp.config.jsonc import type_name
from orbmcp.config.model import AuthConfig
from orbmcp.config.problems import as_int, invalid, problems_of, show

_TOKEN_AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")
# field -> accepted spellings; the first spelling is the documented one.
SPELLINGS: dict[str, tuple[str, ...]] = {
    "client_id": ("clientId", "client_id"),
    "client_secret": ("clientSecret", "client_secret"),
    "client_name": ("clientName", "client_name"),
    "scope": ("scope", "scopes"),
    "redirect_port": ("redirectPort", "redirect_port", "callbackPort", "callback_port"),
    "client_metadata_url": ("clientMetadataUrl", "client_metadata_url"),
    "allow_missing_pkce_advertisement": (
        "allowMissingPkce",
        "allow_missing_pkce",
        "allowMissingPkceAdvertisement",
        "allow_missing_pkce_advertisement",
    ),
    "token_endpoint_auth_method": ("tokenEndpointAuthMethod", "token_endpoint_auth_method"),
}


def _spelled(info: ValidationInfo) -> str:
    """The key as the file spelled it, e.g. ``oauth.clientId`` (for messages)."""
    context: Any = info.context
    names = context.get("auth_keys", {}) if isinstance(context, dict) else {}
    return str(names.get(info.field_name, f"auth.{info.field_name}"))


class OAuthEntry(BaseModel):
    """``{"type": "oauth", ...}``; validated with ``context={"auth_key": "auth" or "oauth"}``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    client_id: str | None = None
    client_secret: str | None = None
    client_name: str | None = None
    scope: str | None = None
    redirect_port: int | None = None
    client_metadata_url: str | None = None
    # The spec says refuse when the AS does not advertise S256; an entry may opt out explicitly.
    allow_missing_pkce_advertisement: bool = False
    token_endpoint_auth_method: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_spelling_each(cls, raw: object, info: ValidationInfo) -> dict[str, object]:
        context: Any = info.context if isinstance(info.context, dict) else {}
        key = context.get("auth_key", "auth")
        if not isinstance(raw, dict):
            raise invalid(f'"{key}" must be an object like {{"type": "oauth"}}, not {type_name(raw)}')
        if "provider" in raw:
            raise invalid(
                f'"{key}.provider" (a login-provider token) is not supported: use "{key}": '
                '{"type": "oauth"} (OAuth 2.1) or static headers'
            )
        kind = raw.get("type", "oauth")
        if kind != "oauth":
            raise invalid(f'"{key}.type" must be "oauth" (got {show(kind)}); use headers for static tokens')
        out: dict[str, object] = {}
        spelled: dict[str, str] = {}
        for field_name, spellings in SPELLINGS.items():
            present = [s for s in spellings if s in raw]
            if not present:
                continue
            if len(present) > 1:
                problems_of(info).ignore(
                    f'"{key}" sets both {present[0]} and {present[1]}; using {present[0]}'
                )
            out[field_name] = raw[present[0]]
            spelled[field_name] = f"{key}.{present[0]}"
        context["auth_keys"] = spelled
        return out

    @field_validator("client_id", "client_secret", "client_name", mode="before")
    @classmethod
    def _text(cls, value: object, info: ValidationInfo) -> str:
        return values.text(_spelled(info), value)

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, value: object, info: ValidationInfo) -> str | None:
        if isinstance(value, list) and all(isinstance(s, str) for s in value):
            return " ".join(value) or None
        if isinstance(value, str):
            return value or None
        raise invalid(f'"{_spelled(info)}" must be a string or an array of strings')

    @field_validator("redirect_port", mode="before")
    @classmethod
    def _port(cls, value: object, info: ValidationInfo) -> int:
        port = as_int(value)
        if port is None or not 1 <= port <= 65535:
            raise invalid(f'"{_spelled(info)}" must be a port number from 1 to 65535 (got {show(value)})')
        return port

    @field_validator("allow_missing_pkce_advertisement", mode="before")
    @classmethod
    def _flag(cls, value: object, info: ValidationInfo) -> bool:
        return values.flag(_spelled(info), value)

    @field_validator("token_endpoint_auth_method", mode="before")
    @classmethod
    def _method(cls, value: object, info: ValidationInfo) -> str:
        if value in _TOKEN_AUTH_METHODS:
            return str(value)
        methods = ", ".join(_TOKEN_AUTH_METHODS)
        raise invalid(f'"{_spelled(info)}" must be one of {methods} (got {show(value)})')

    @field_validator("client_metadata_url", mode="before")
    @classmethod
    def _metadata_url(cls, value: object, info: ValidationInfo) -> str:
        checked = values.text(_spelled(info), value)
        problem = values.url_problem(_spelled(info), checked, require_https=True)
        if problem is not None:
            raise invalid(problem)
        return checked

    def config(self, credential_store: str = "file") -> AuthConfig:
        return AuthConfig(**self.model_dump(), credential_store=credential_store)
