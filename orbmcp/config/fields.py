"""The field groups of one server entry, each checked into values or into ``Problems``.

``schema.parse_server`` calls these in a fixed order (the order of the messages in an entry's
warning): transport, stdio fields, HTTP fields, on/off and lifecycle, timeouts, retries, health
check, auth.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from orbmcp.config.auth_entry import parse_auth
from orbmcp.config.checks import (
    Problems,
    as_int,
    check_url,
    duration_ms,
    scaled_duration_ms,
    show,
    string_list,
    string_map,
    text,
)
from orbmcp.config.jsonc import type_name
from orbmcp.config.model import AuthConfig, Lifecycle, Transport
from orbmcp.config.settings import MAX_RETRIES_LIMIT, MAX_ROOTS, roots_list

_TRANSPORTS: Mapping[str, Transport] = {
    "stdio": "stdio",
    "streamable-http": "streamable-http",
    "http": "streamable-http",
    "sse": "sse",
}
_LIFECYCLES: tuple[Lifecycle, ...] = ("eager", "lazy")


def entry_object(problems: Problems, name: object, raw: object) -> dict[str, object] | None:
    """The entry as an object once its name is usable; None (and why, in ``problems``) otherwise."""
    if not isinstance(name, str) or not name.strip():
        problems.invalid("the server name must not be empty")
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        problems.invalid("the server name contains control characters")
        return None
    if not isinstance(raw, dict):
        problems.invalid(f"the entry must be an object, not {type_name(raw)}")
        return None
    return cast("dict[str, object]", raw)


def transport_fields(
    problems: Problems, entry: Mapping[str, object]
) -> tuple[Transport | None, str | None, str | None]:
    """(transport, command, url): the stated transport, else the one ``command`` or ``url`` implies."""
    before = len(problems.fatal)
    transport = _stated_transport(problems, entry)
    stated_badly = len(problems.fatal) > before
    command = text(problems, "command", entry["command"]) if "command" in entry else None
    url = text(problems, "url", entry["url"]) if "url" in entry else None
    if "command" in entry and "url" in entry:
        problems.invalid('set either "command" (stdio) or "url" (HTTP), not both: choose one transport')
    elif transport is None and not stated_badly:
        if "command" in entry:
            transport = "stdio"
        elif "url" in entry:
            transport = "streamable-http"
        else:
            problems.invalid('no transport: set "command" (stdio) or "url" (HTTP)')
    if transport == "stdio" and "command" not in entry:
        problems.invalid('transport "stdio" needs "command"')
    elif transport in ("streamable-http", "sse") and "url" not in entry:
        problems.invalid(f'transport "{transport}" needs "url"')
    if url is not None and "$" not in url:
        check_url(problems, "url", url)
    return transport, command, url


def _stated_transport(problems: Problems, entry: Mapping[str, object]) -> Transport | None:
    found: Transport | None = None
    for key in ("transport", "type"):
        if key not in entry:
            continue
        value = entry[key]
        transport = _TRANSPORTS.get(value) if isinstance(value, str) else None
        if transport is None:
            problems.invalid(f'"{key}" must be one of stdio, streamable-http, http, sse (got {show(value)})')
            return None
        if found is not None and transport != found:
            problems.invalid(f'"transport" and "type" disagree ({found} vs {transport})')
            return None
        found = transport
    return found


def stdio_fields(
    problems: Problems, entry: Mapping[str, object], transport: Transport | None
) -> tuple[tuple[str, ...], dict[str, str], str | None]:
    """(args, env, cwd) of a stdio server; on an HTTP server they only warn."""
    if transport != "stdio":
        for key in ("args", "env", "cwd"):
            if key in entry and transport is not None:
                problems.ignore(f'"{key}" applies only to stdio servers; ignored')
        return (), {}, None
    args = (string_list(problems, "args", entry["args"]) or ()) if "args" in entry else ()
    env = (string_map(problems, "env", entry["env"], headers=False) or {}) if "env" in entry else {}
    cwd = text(problems, "cwd", entry["cwd"]) if "cwd" in entry else None
    return args, env, cwd


def http_fields(
    problems: Problems, entry: Mapping[str, object], transport: Transport | None
) -> dict[str, str]:
    """The ``headers`` of an HTTP server; on a stdio server they only warn."""
    if "headers" not in entry:
        return {}
    if transport == "stdio":
        problems.ignore('"headers" applies only to HTTP servers; ignored')
        return {}
    return string_map(problems, "headers", entry["headers"], headers=True) or {}


def switches(problems: Problems, entry: Mapping[str, object]) -> tuple[bool | None, Lifecycle]:
    enabled = check_enabled(problems, entry)
    lifecycle = check_lifecycle(problems, entry) or "eager"
    if enabled is False:
        lifecycle = "lazy"  # off means out of the eager set, even if "eager" is stated
    return enabled, lifecycle


def check_enabled(problems: Problems, raw: Mapping[str, object]) -> bool | None:
    """False when ``enabled: false`` or ``disabled: true``; None when neither key is stated."""
    result: bool | None = None
    for key, off_when in (("enabled", False), ("disabled", True)):
        if key not in raw:
            continue
        value = raw[key]
        if not isinstance(value, bool):
            problems.invalid(f'"{key}" must be true or false (got {show(value)})')
            continue
        on = value != off_when
        result = on if result is None else (result and on)
    return result


def check_lifecycle(problems: Problems, raw: Mapping[str, object]) -> Lifecycle | None:
    if "lifecycle" not in raw:
        return None
    value = raw["lifecycle"]
    for lifecycle in _LIFECYCLES:
        if value == lifecycle:
            return lifecycle
    problems.invalid(f'"lifecycle" must be "eager" or "lazy" (got {show(value)})')
    return None


def timeouts(problems: Problems, entry: Mapping[str, object]) -> tuple[int | None, int | None]:
    """(timeoutMs, the request timeout from ``requestTimeoutMs`` or ``timeout`` in seconds)."""
    timeout_ms = duration_ms(problems, "timeoutMs", entry["timeoutMs"]) if "timeoutMs" in entry else None
    if "requestTimeoutMs" in entry:
        if "timeout" in entry:
            problems.ignore('both "requestTimeoutMs" and "timeout" are set; using "requestTimeoutMs"')
        return timeout_ms, duration_ms(problems, "requestTimeoutMs", entry["requestTimeoutMs"])
    if "timeout" not in entry:
        return timeout_ms, None
    return timeout_ms, scaled_duration_ms(problems, "timeout", entry["timeout"], unit_ms=1000)


def max_retries(problems: Problems, entry: Mapping[str, object], default: int) -> int:
    if "maxRetries" not in entry:
        return default
    retries = as_int(entry["maxRetries"])
    if retries is None:
        problems.invalid(f'"maxRetries" must be an integer (got {show(entry["maxRetries"])})')
        return default
    if retries > MAX_RETRIES_LIMIT:
        problems.ignore(f'"maxRetries" {retries} is above {MAX_RETRIES_LIMIT}; using {MAX_RETRIES_LIMIT}')
        return MAX_RETRIES_LIMIT
    return max(0, retries)  # 0 or a negative number disables retries


def entry_auth(problems: Problems, entry: Mapping[str, object], *, stdio: bool) -> AuthConfig | None:
    if "auth" not in entry and "oauth" not in entry:
        return None
    auth = parse_auth(problems, entry)  # checked even on stdio: auth.provider is always an error
    if stdio and auth is not None:
        problems.ignore('"auth" applies only to HTTP servers; ignored')
        return None
    return auth


def entry_roots(problems: Problems, entry: Mapping[str, object]) -> tuple[str, ...] | None:
    """``roots``: the directories this server is told about instead of the default ones."""
    if "roots" not in entry:
        return None
    roots = roots_list(entry["roots"])
    if roots is None:
        problems.invalid(f'"roots" must be an array of at most {MAX_ROOTS} directory paths')
    return roots


def health_interval(problems: Problems, entry: Mapping[str, object]) -> int | None:
    """``healthCheckIntervalMs``; 0 or absent means no health checks."""
    if entry.get("healthCheckIntervalMs") in (None, 0):
        return None
    return duration_ms(problems, "healthCheckIntervalMs", entry["healthCheckIntervalMs"])
