"""The ``auth`` (or ``oauth``) object of one HTTP server entry, into an ``AuthConfig``.

Only OAuth 2.1 is configured here; static tokens belong in ``headers``. Several spellings are
accepted for each field (camelCase, snake_case, the names other MCP clients use); the first one
listed is the documented one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

from orbmcp.config.checks import Problems, as_int, check_url, show, text
from orbmcp.config.jsonc import type_name
from orbmcp.config.model import AuthConfig

_TOKEN_AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")
# (field, accepted spellings); the first spelling is the documented one.
_AUTH_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("client_id", ("clientId", "client_id")),
    ("client_secret", ("clientSecret", "client_secret")),
    ("client_name", ("clientName", "client_name")),
    ("scope", ("scope", "scopes")),
    ("redirect_port", ("redirectPort", "redirect_port", "callbackPort", "callback_port")),
    ("client_metadata_url", ("clientMetadataUrl", "client_metadata_url")),
    (
        "allow_missing_pkce_advertisement",
        (
            "allowMissingPkce",
            "allow_missing_pkce",
            "allowMissingPkceAdvertisement",
            "allow_missing_pkce_advertisement",
        ),
    ),
    ("token_endpoint_auth_method", ("tokenEndpointAuthMethod", "token_endpoint_auth_method")),
)


def parse_auth(problems: Problems, raw: Mapping[str, object]) -> AuthConfig | None:
    """The entry's OAuth settings; None when it has none or they are invalid (then ``problems`` says why)."""
    key = "auth" if "auth" in raw else "oauth"
    if "auth" in raw and "oauth" in raw:
        problems.ignore('both "auth" and "oauth" are set; using "auth", "oauth" ignored')
    value = raw.get(key)
    if value is None or value is False:
        return None
    if not isinstance(value, dict):
        problems.invalid(f'"{key}" must be an object like {{"type": "oauth"}}, not {type_name(value)}')
        return None
    if "provider" in value:
        problems.invalid(
            f'"{key}.provider" (a login-provider token) is not supported: use "{key}": {{"type": "oauth"}} '
            "(OAuth 2.1) or static headers"
        )
        return None
    kind = value.get("type", "oauth")
    if kind != "oauth":
        problems.invalid(f'"{key}.type" must be "oauth" (got {show(kind)}); use headers for static tokens')
        return None
    return AuthConfig(**_fields(problems, key, value))  # type: ignore[arg-type]  # each value was checked


def _fields(problems: Problems, key: str, value: Mapping[str, object]) -> dict[str, object]:
    fields: dict[str, object] = {}
    for field_name, spellings in _AUTH_KEYS:
        present = [s for s in spellings if s in value]
        if not present:
            continue
        if len(present) > 1:
            problems.ignore(f'"{key}" sets both {present[0]} and {present[1]}; using {present[0]}')
        check = _CHECKS.get(field_name, _text_field)
        checked = check(problems, f"{key}.{present[0]}", value[present[0]])
        if checked is not None:  # None is every field's default
            fields[field_name] = checked
    return fields


def _scope(problems: Problems, spelled: str, item: object) -> object:
    if isinstance(item, list) and all(isinstance(s, str) for s in item):
        return " ".join(cast("list[str]", item)) or None
    if isinstance(item, str):
        return item or None
    problems.invalid(f'"{spelled}" must be a string or an array of strings')
    return None


def _port(problems: Problems, spelled: str, item: object) -> object:
    port = as_int(item)
    if port is None or not 1 <= port <= 65535:
        problems.invalid(f'"{spelled}" must be a port number from 1 to 65535 (got {show(item)})')
        return None
    return port


def _flag(problems: Problems, spelled: str, item: object) -> object:
    if isinstance(item, bool):
        return item
    problems.invalid(f'"{spelled}" must be true or false (got {show(item)})')
    return None


def _auth_method(problems: Problems, spelled: str, item: object) -> object:
    if item in _TOKEN_AUTH_METHODS:
        return item
    problems.invalid(f'"{spelled}" must be one of {", ".join(_TOKEN_AUTH_METHODS)} (got {show(item)})')
    return None


def _text_field(problems: Problems, spelled: str, item: object) -> object:
    return text(problems, spelled, item)


def _metadata_url(problems: Problems, spelled: str, item: object) -> object:
    checked = text(problems, spelled, item)
    if checked is not None:
        check_url(problems, spelled, checked, require_https=True)
    return checked


_CHECKS: Mapping[str, Callable[[Problems, str, object], object]] = {
    "scope": _scope,
    "redirect_port": _port,
    "allow_missing_pkce_advertisement": _flag,
    "token_endpoint_auth_method": _auth_method,
    "client_metadata_url": _metadata_url,
}
