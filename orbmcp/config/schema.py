"""Turn raw config values into model objects, or into warnings that name file, server and key.

Validation is by hand (see model.py for why not pydantic). The rules are the union of both seeds:
an invalid entry is skipped with one warning and never hides the valid ones; a key that is merely
ignored (say ``headers`` on a stdio server) gets its own warning and the entry still loads.
Variables are NOT expanded here: ``finalize`` does that, and only for entries that are trusted and
will be used (T-G1, T-G7).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import cast

from orbmcp.config.expand import ExpansionError, expand
from orbmcp.config.jsonc import type_name
from orbmcp.config.model import (
    DEFAULT_TIMEOUT_MS,
    AuthConfig,
    ConfigWarning,
    Lifecycle,
    ServerConfig,
    Settings,
    Source,
    Transport,
)
from orbmcp.errors import ConfigError

MAX_RETRIES_LIMIT = 10
# An entry with none of these keys is a partial override of a lower layer's server (seed 003).
DEFINING_KEYS = ("command", "url", "type", "transport")
OVERRIDE_KEYS = ("enabled", "disabled", "lifecycle", "exposure", "toolExposure")
# Keys a project file might use to grant itself trust. Trust lives only in the user's global dir.
TRUST_KEYS = frozenset(
    {
        "trust",
        "trusted",
        "autoApprove",
        "alwaysAllow",
        "approved",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "trustedProjects",
    }
)
_TRANSPORTS: Mapping[str, Transport] = {
    "stdio": "stdio",
    "streamable-http": "streamable-http",
    "http": "streamable-http",
    "sse": "sse",
}
_LIFECYCLES: tuple[Lifecycle, ...] = ("eager", "lazy")
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", re.DOTALL)
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_TOOL_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,32}")
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


class _Problems:
    """Collects what is wrong with one entry: fatal problems skip it, ignored keys only warn."""

    def __init__(self, server: str | None, file: str | None) -> None:
        self.server = server
        self.file = file
        self.fatal: list[str] = []
        self.ignored: list[str] = []

    def invalid(self, message: str) -> None:
        self.fatal.append(message)

    def ignore(self, message: str) -> None:
        self.ignored.append(message)

    def warnings(self) -> list[ConfigWarning]:
        out = [ConfigWarning(m, self.file, self.server) for m in self.ignored]
        if self.fatal:
            out.append(ConfigWarning("; ".join(self.fatal) + "; entry skipped", self.file, self.server))
        return out


# ---- value helpers ---------------------------------------------------------------------------


def _show(value: object) -> str:
    text = repr(value) if not isinstance(value, dict | list) else type_name(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_int(value: object) -> int | None:
    """An integer, also from an integral float (JSON5 reads ``1e4`` as a float); never a bool."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _positive_int(problems: _Problems, key: str, value: object) -> int | None:
    number = as_int(value)
    if number is None or number <= 0:
        problems.invalid(f'"{key}" must be a positive integer (got {_show(value)})')
        return None
    return number


def _text(problems: _Problems, key: str, value: object, *, allow_empty: bool = False) -> str | None:
    if not isinstance(value, str):
        problems.invalid(f'"{key}" must be a string, not {type_name(value)}')
        return None
    if not allow_empty and not value.strip():
        problems.invalid(f'"{key}" must not be empty')
        return None
    if "\x00" in value:
        problems.invalid(f'"{key}" contains a NUL character')
        return None
    return value


def _string_list(problems: _Problems, key: str, value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        problems.invalid(f'"{key}" must be an array of strings, not {type_name(value)}')
        return None
    out: list[str] = []
    for i, item in enumerate(value):
        text = _text(problems, f"{key}[{i}]", item, allow_empty=True)
        if text is None:
            return None
        out.append(text)
    return tuple(out)


def _string_map(problems: _Problems, key: str, value: object, *, headers: bool) -> dict[str, str] | None:
    if not isinstance(value, dict):
        problems.invalid(f'"{key}" must be an object of string values, not {type_name(value)}')
        return None
    out: dict[str, str] = {}
    ok = True
    for name, item in value.items():
        where = f"{key}.{name}"
        if headers and not _HEADER_NAME.fullmatch(name):
            problems.invalid(f'"{where}": {name!r} is not a valid header name')
            ok = False
        elif not headers and (not name or "=" in name or "\x00" in name):
            problems.invalid(f'"{where}": {name!r} is not a valid environment variable name')
            ok = False
        elif not isinstance(item, str):
            problems.invalid(f'"{where}" must be a string, not {type_name(item)} (quote the value)')
            ok = False
        elif "\x00" in item or (headers and ("\r" in item or "\n" in item)):
            problems.invalid(f'"{where}" contains a control character')
            ok = False
        else:
            out[name] = item
    return out if ok else None


def check_url(problems: _Problems, key: str, url: str, *, require_https: bool = False) -> None:
    # A regex, not urllib.parse: this runs on every load and urllib.parse costs ~1.5 ms to import.
    if any(c.isspace() or ord(c) < 32 for c in url):
        problems.invalid(f'"{key}" must not contain whitespace or control characters')
        return
    match = _URL.fullmatch(url)
    scheme = match.group(1).lower() if match else ""
    schemes = ("https",) if require_https else ("http", "https")
    if match is None or scheme not in schemes or not _url_host(match.group(2)):
        want = "an https:// URL" if require_https else "an http:// or https:// URL"
        problems.invalid(f'"{key}" must be {want} (got {_show(url)})')


def _url_host(authority: str) -> str:
    host_port = authority.rpartition("@")[2]
    if host_port.startswith("["):
        return host_port[1 : host_port.find("]")] if "]" in host_port else ""
    return host_port.partition(":")[0]


# ---- the mcpServers block and settings --------------------------------------------------------


def servers_block(document: Mapping[str, object], *, file: str | None) -> Mapping[str, object]:
    """The ``mcpServers`` object of one file. Anything but an object fails the whole file (exit 3)."""
    block = document.get("mcpServers")
    if block is None and "mcpServers" not in document:
        return {}
    if not isinstance(block, dict):
        where = f"{file}: " if file else ""
        raise ConfigError(
            f'{where}"mcpServers" must be an object mapping server names to entries, not {type_name(block)}',
            file=file,
        )
    return cast("dict[str, object]", block)


def _tool_prefix(value: object) -> str | None:
    return value if isinstance(value, str) and _TOOL_PREFIX.fullmatch(value) else None


def _positive(value: object) -> int | None:
    number = as_int(value)
    return number if number is not None and number > 0 else None


def _retries(value: object) -> int | None:
    number = as_int(value)
    return number if number is not None and 0 <= number <= MAX_RETRIES_LIMIT else None


# settings key, Settings field, checker (None = invalid), what it must be
_SETTINGS: tuple[tuple[str, str, Callable[[object], object], str], ...] = (
    ("toolPrefix", "tool_prefix", _tool_prefix, "1-32 characters of A-Z a-z 0-9 _ -"),
    ("requestTimeoutMs", "request_timeout_ms", _positive, "a positive integer"),
    ("maxRetries", "max_retries", _retries, f"an integer from 0 to {MAX_RETRIES_LIMIT}"),
)


def parse_settings(
    document: Mapping[str, object], *, file: str | None
) -> tuple[dict[str, object], list[ConfigWarning]]:
    """Only the keys this file states, as ``Settings`` field names; bad values are ignored with a warning.

    Project files carry no defaults, so a missing key must stay missing (seed 003).
    """
    problems = _Problems(None, file)
    stated: dict[str, object] = {}
    raw = document.get("settings")
    if raw is not None and not isinstance(raw, dict):
        problems.ignore(f'"settings" must be an object, not {type_name(raw)}; ignored')
    elif isinstance(raw, dict):
        for key, field_name, check, want in _SETTINGS:
            if key not in raw:
                continue
            value = check(raw[key])
            if value is None:
                problems.ignore(f'"settings.{key}" must be {want} (got {_show(raw[key])}); ignored')
            else:
                stated[field_name] = value
    extensions = document.get("goExtensions")
    if extensions is not None:
        if not isinstance(extensions, dict):
            problems.ignore(f'"goExtensions" must be an object, not {type_name(extensions)}; ignored')
        elif "mcp" in extensions:
            if isinstance(extensions["mcp"], bool):
                stated["extension_enabled"] = extensions["mcp"]
            else:
                problems.ignore(
                    f'"goExtensions.mcp" must be true or false (got {_show(extensions["mcp"])}); ignored'
                )
    return stated, problems.warnings()


def apply_settings(settings: Settings, stated: Mapping[str, object]) -> Settings:
    return replace(settings, **stated)  # type: ignore[arg-type]  # keys come from parse_settings


def trust_key_warnings(document: Mapping[str, object], *, file: str | None) -> list[ConfigWarning]:
    """Warnings for a project file's attempts to grant trust (T-G4): top level, settings, entries."""
    out: list[ConfigWarning] = []
    hint = "trust is granted only by `orbmcp trust`; ignored"

    def scan(mapping: Mapping[str, object], prefix: str, server: str | None) -> None:
        out.extend(
            ConfigWarning(f'"{prefix}{key}" cannot be set by a project: {hint}', file, server)
            for key in mapping
            if key in TRUST_KEYS
        )

    scan(document, "", None)
    settings = document.get("settings")
    if isinstance(settings, dict):
        scan(settings, "settings.", None)
    servers = document.get("mcpServers")
    if isinstance(servers, dict):
        for name, entry in servers.items():
            if isinstance(entry, dict):
                scan(entry, "", name)
    return out


# ---- one server entry -------------------------------------------------------------------------


def is_partial(raw: object) -> bool:
    """An object entry with no command/url/type/transport: a partial override (seed 003)."""
    return isinstance(raw, dict) and not any(key in raw for key in DEFINING_KEYS)


def _check_name(problems: _Problems, name: object) -> bool:
    if not isinstance(name, str) or not name.strip():
        problems.invalid("the server name must not be empty")
        return False
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        problems.invalid("the server name contains control characters")
        return False
    return True


def _enabled(problems: _Problems, raw: Mapping[str, object]) -> bool | None:
    """False when ``enabled: false`` or ``disabled: true``; None when neither key is stated."""
    result: bool | None = None
    for key, off_when in (("enabled", False), ("disabled", True)):
        if key not in raw:
            continue
        value = raw[key]
        if not isinstance(value, bool):
            problems.invalid(f'"{key}" must be true or false (got {_show(value)})')
            continue
        on = value != off_when
        result = on if result is None else (result and on)
    return result


def _lifecycle(problems: _Problems, raw: Mapping[str, object]) -> Lifecycle | None:
    if "lifecycle" not in raw:
        return None
    value = raw["lifecycle"]
    for lifecycle in _LIFECYCLES:
        if value == lifecycle:
            return lifecycle
    problems.invalid(f'"lifecycle" must be "eager" or "lazy" (got {_show(value)})')
    return None


def _transport(problems: _Problems, raw: Mapping[str, object]) -> Transport | None:
    found: Transport | None = None
    for key in ("transport", "type"):
        if key not in raw:
            continue
        value = raw[key]
        transport = _TRANSPORTS.get(value) if isinstance(value, str) else None
        if transport is None:
            problems.invalid(f'"{key}" must be one of stdio, streamable-http, http, sse (got {_show(value)})')
            return None
        if found is not None and transport != found:
            problems.invalid(f'"transport" and "type" disagree ({found} vs {transport})')
            return None
        found = transport
    return found


def _auth(problems: _Problems, raw: Mapping[str, object]) -> AuthConfig | None:
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
        problems.invalid(f'"{key}.type" must be "oauth" (got {_show(kind)}); use headers for static tokens')
        return None
    fields: dict[str, object] = {}
    for field_name, spellings in _AUTH_KEYS:
        present = [s for s in spellings if s in value]
        if not present:
            continue
        if len(present) > 1:
            problems.ignore(f'"{key}" sets both {present[0]} and {present[1]}; using {present[0]}')
        spelled = f"{key}.{present[0]}"
        item = value[present[0]]
        if field_name == "scope":
            if isinstance(item, list) and all(isinstance(s, str) for s in item):
                fields["scope"] = " ".join(cast("list[str]", item)) or None
            elif isinstance(item, str):
                fields["scope"] = item or None
            else:
                problems.invalid(f'"{spelled}" must be a string or an array of strings')
        elif field_name == "redirect_port":
            port = as_int(item)
            if port is None or not 1 <= port <= 65535:
                problems.invalid(f'"{spelled}" must be a port number from 1 to 65535 (got {_show(item)})')
            else:
                fields["redirect_port"] = port
        elif field_name == "allow_missing_pkce_advertisement":
            if isinstance(item, bool):
                fields[field_name] = item
            else:
                problems.invalid(f'"{spelled}" must be true or false (got {_show(item)})')
        elif field_name == "token_endpoint_auth_method":
            if item in _TOKEN_AUTH_METHODS:
                fields[field_name] = item
            else:
                problems.invalid(
                    f'"{spelled}" must be one of {", ".join(_TOKEN_AUTH_METHODS)} (got {_show(item)})'
                )
        else:
            text = _text(problems, spelled, item)
            if text is not None and field_name == "client_metadata_url":
                check_url(problems, spelled, text, require_https=True)
            fields[field_name] = text
    return AuthConfig(**fields)  # type: ignore[arg-type]  # each value was checked above


def parse_server(
    name: str,
    raw: object,
    *,
    file: str | None,
    source: Source,
    settings: Settings,
) -> tuple[ServerConfig | None, list[ConfigWarning]]:
    """One full entry (not a partial override) into an unexpanded ServerConfig, or None + why."""
    problems = _Problems(name, file)
    if not _check_name(problems, name):
        return None, problems.warnings()
    if not isinstance(raw, dict):
        problems.invalid(f"the entry must be an object, not {type_name(raw)}")
        return None, problems.warnings()
    entry = cast("dict[str, object]", raw)
    if source == "project":
        for key in entry:
            if key in TRUST_KEYS:
                problems.ignore(
                    f'"{key}" cannot be set by a project: trust is granted only by `orbmcp trust`; ignored'
                )

    transport = _transport(problems, entry)
    transport_stated_badly = bool(problems.fatal)  # nothing else was checked yet
    command = _text(problems, "command", entry["command"]) if "command" in entry else None
    url = _text(problems, "url", entry["url"]) if "url" in entry else None
    if "command" in entry and "url" in entry:
        problems.invalid('set either "command" (stdio) or "url" (HTTP), not both: choose one transport')
    elif transport is None and not transport_stated_badly:
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

    stdio = transport == "stdio"
    args: tuple[str, ...] = ()
    env: dict[str, str] = {}
    cwd: str | None = None
    headers: dict[str, str] = {}
    for key in ("args", "env", "cwd"):
        if key in entry and not stdio and transport is not None:
            problems.ignore(f'"{key}" applies only to stdio servers; ignored')
    if "headers" in entry and stdio:
        problems.ignore('"headers" applies only to HTTP servers; ignored')
    if stdio:
        if "args" in entry:
            args = _string_list(problems, "args", entry["args"]) or ()
        if "env" in entry:
            env = _string_map(problems, "env", entry["env"], headers=False) or {}
        if "cwd" in entry:
            cwd = _text(problems, "cwd", entry["cwd"])
    elif "headers" in entry:
        headers = _string_map(problems, "headers", entry["headers"], headers=True) or {}

    enabled = _enabled(problems, entry)
    lifecycle = _lifecycle(problems, entry) or "eager"
    if enabled is False:
        lifecycle = "lazy"  # seed 003: off means out of the eager set, even if "eager" is stated

    timeout_ms = _positive_int(problems, "timeoutMs", entry["timeoutMs"]) if "timeoutMs" in entry else None
    request_timeout_ms: int | None = None
    if "requestTimeoutMs" in entry:
        request_timeout_ms = _positive_int(problems, "requestTimeoutMs", entry["requestTimeoutMs"])
        if "timeout" in entry:
            problems.ignore('both "requestTimeoutMs" and "timeout" are set; using "requestTimeoutMs"')
    elif "timeout" in entry:
        seconds = entry["timeout"]
        if (
            isinstance(seconds, int | float)
            and not isinstance(seconds, bool)
            and math.isfinite(seconds)
            and seconds > 0
        ):
            request_timeout_ms = max(1, round(seconds * 1000))
        else:
            problems.invalid(f'"timeout" must be a positive number of seconds (got {_show(seconds)})')

    max_retries = settings.max_retries
    if "maxRetries" in entry:
        retries = as_int(entry["maxRetries"])
        if retries is None:
            problems.invalid(f'"maxRetries" must be an integer (got {_show(entry["maxRetries"])})')
        elif retries > MAX_RETRIES_LIMIT:
            problems.ignore(f'"maxRetries" {retries} is above {MAX_RETRIES_LIMIT}; using {MAX_RETRIES_LIMIT}')
            max_retries = MAX_RETRIES_LIMIT
        else:
            max_retries = max(0, retries)  # seed 000: 0 or negative disables retries

    health: int | None = None
    if entry.get("healthCheckIntervalMs") not in (None, 0):
        health = _positive_int(problems, "healthCheckIntervalMs", entry["healthCheckIntervalMs"])

    auth: AuthConfig | None = None
    if "auth" in entry or "oauth" in entry:
        auth = _auth(problems, entry)  # checked even on stdio: auth.provider is always an error
        if stdio and auth is not None:
            problems.ignore('"auth" applies only to HTTP servers; ignored')
            auth = None

    if problems.fatal or transport is None:
        return None, problems.warnings()
    return (
        ServerConfig(
            name=name,
            transport=transport,
            command=command if stdio else None,
            args=args,
            env=env,
            cwd=cwd,
            url=url if not stdio else None,
            headers=headers,
            lifecycle=lifecycle,
            enabled=enabled is not False,
            timeout_ms=timeout_ms or DEFAULT_TIMEOUT_MS,
            request_timeout_ms=request_timeout_ms or settings.request_timeout_ms,
            max_retries=max_retries,
            auth=auth,
            health_check_interval_ms=health,
            source=source,
            file=file,
        ),
        problems.warnings(),
    )


def parse_override(
    name: str, raw: Mapping[str, object], *, file: str | None
) -> tuple[dict[str, object] | None, list[ConfigWarning]]:
    """A partial override's keys, checked; None (with a warning) when it sets anything else."""
    problems = _Problems(name, file)
    kept: dict[str, object] = {}
    for key, value in raw.items():
        if key in TRUST_KEYS:
            problems.ignore(
                f'"{key}" cannot be set by a project: trust is granted only by `orbmcp trust`; ignored'
            )
        elif key in OVERRIDE_KEYS:
            kept[key] = value
        else:
            problems.invalid(
                f'"{key}" is not allowed in a partial override (only {", ".join(OVERRIDE_KEYS)}); '
                'give "command" or "url" to replace the whole entry'
            )
    _enabled(problems, kept)
    _lifecycle(problems, kept)
    if problems.fatal:
        return None, problems.warnings()
    return kept, problems.warnings()


def apply_override(base: Mapping[str, object], override: Mapping[str, object]) -> dict[str, object]:
    """The base entry with the override's keys; a stated on/off replaces both spellings of the base."""
    merged = dict(base)
    if "enabled" in override or "disabled" in override:
        merged.pop("enabled", None)
        merged.pop("disabled", None)
    merged.update(override)
    return merged


# ---- expansion, once an entry is trusted and chosen ---------------------------------------------


def finalize(
    server: ServerConfig, *, environ: Mapping[str, str], cwd: Path
) -> tuple[ServerConfig | None, list[ConfigWarning]]:
    """Expand ``${VAR}`` in command, args, env, cwd, url and header values; resolve cwd; check the URL."""
    problems = _Problems(server.name, server.file)

    def one(key: str, value: str) -> str:
        try:
            return expand(value, environ)
        except ExpansionError as exc:
            problems.invalid(f'"{key}": {exc}')
            return value

    command = one("command", server.command) if server.command is not None else None
    args = tuple(one(f"args[{i}]", a) for i, a in enumerate(server.args))
    env = {k: one(f"env.{k}", v) for k, v in server.env.items()}
    url = one("url", server.url) if server.url is not None else None
    headers = {k: one(f"headers.{k}", v) for k, v in server.headers.items()}
    work_dir: str | None = None
    if server.cwd is not None:
        expanded = one("cwd", server.cwd)
        work_dir = str(_resolve_dir(expanded, environ=environ, cwd=cwd))
    if problems.fatal:
        return None, problems.warnings()
    for key, value in headers.items():
        if "\r" in value or "\n" in value or "\x00" in value:
            problems.invalid(f'"headers.{key}" contains a control character after expansion')
    if url is not None:
        check_url(problems, "url", url)
    if command is not None and not command.strip():
        problems.invalid('"command" is empty after expansion')
    if problems.fatal:
        return None, problems.warnings()
    return replace(server, command=command, args=args, env=env, cwd=work_dir, url=url, headers=headers), []


def _resolve_dir(path: str, *, environ: Mapping[str, str], cwd: Path) -> Path:
    """``cwd`` is relative to orbmcp's working directory (seed 000); ``~`` means the user's home."""
    if path == "~" or path.startswith("~/"):
        home = environ.get("HOME") or str(Path.home())
        path = home + path[1:]
    resolved = Path(path)
    if not resolved.is_absolute():
        resolved = cwd / resolved
    return Path(os.path.normpath(resolved))
