"""One server entry of a config file, checked into a ``ServerConfig`` or into warnings.

Validation is by hand (see model.py for why not pydantic), a small function per field group
(fields.py), every problem reported into the entry's ``Problems`` (checks.py): an invalid entry
is skipped with one warning naming file, server and key, and a merely ignored key warns while the
entry loads. Variables are NOT expanded here: ``expand.finalize`` does that, and only for the
entries that are trusted and will be used, so an entry nobody approved never reads the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from orbmcp.config import fields
from orbmcp.config.checks import Problems
from orbmcp.config.jsonc import type_name
from orbmcp.config.model import DEFAULT_TIMEOUT_MS, ConfigWarning, ServerConfig, Settings, Source
from orbmcp.errors import ConfigError
from orbmcp.suggest import close_names

# An entry with none of these keys is a partial override of a lower layer's server.
DEFINING_KEYS = ("command", "url", "type", "transport")
OVERRIDE_KEYS = ("enabled", "disabled", "lifecycle", "exposure", "toolExposure")
# Every key an entry may have (the trust keys aside); any other key is ignored with a warning.
ENTRY_KEYS = (
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "transport",
    "type",
    "lifecycle",
    "enabled",
    "disabled",
    "timeoutMs",
    "requestTimeoutMs",
    "timeout",
    "maxRetries",
    "healthCheckIntervalMs",
    "auth",
    "oauth",
    "exposure",
    "toolExposure",
    "description",  # other clients' files describe their servers; nothing to do with it
)
# The keys of a file's server block: orbmcp's (both seeds) and VS Code's ``servers``.
SERVER_BLOCK_KEYS = ("mcpServers", "servers")
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
# A config warning is plain text (nothing spells command references in it), so the command is literal.
_TRUST_KEY_IGNORED = "cannot be set by a project: trust is granted only by `orbmcp trust`; ignored"

# ---- the mcpServers block ----------------------------------------------------------------------


def servers_key(document: Mapping[str, object]) -> str | None:
    """The key holding a file's servers: ``mcpServers``, else VS Code's ``servers``, else None."""
    return next((key for key in SERVER_BLOCK_KEYS if key in document), None)


def servers_block(document: Mapping[str, object], *, file: str | None) -> Mapping[str, object]:
    """The ``mcpServers`` (or VS Code ``servers``) object of one file. Anything but an object fails
    the whole file (exit 3)."""
    key = servers_key(document)
    if key is None:
        return {}
    block = document[key]
    if not isinstance(block, dict):
        where = f"{file}: " if file else ""
        raise ConfigError(
            f'{where}"{key}" must be an object mapping server names to entries, not {type_name(block)}',
            file=file,
            reason="not_an_object",
        )
    return cast("dict[str, object]", block)


def document_warnings(document: Mapping[str, object], *, file: str | None) -> list[ConfigWarning]:
    """What is wrong with a server file as a whole: no server block at all (a misspelled
    ``mcpServers``, servers at the top level), or two blocks of which one is ignored."""
    if "mcpServers" in document and "servers" in document:
        return [
            ConfigWarning(
                '"servers" is ignored: this file also has "mcpServers", which orbmcp reads',
                file,
                reason="servers_key_ignored",
            )
        ]
    if servers_key(document) is not None:
        return []
    for key in document:
        if close_names(key, ["mcpServers"]):
            return [
                ConfigWarning(
                    f"no servers read from this file: '{key}' — did you mean 'mcpServers'?",
                    file,
                    reason="no_servers_key",
                    fix=f"rename '{key}' to 'mcpServers'",
                )
            ]
    entries = [key for key, value in document.items() if isinstance(value, dict) and is_entry_like(value)]
    if entries:
        names = ", ".join(f"'{k}'" for k in entries[:5])
        return [
            ConfigWarning(
                f'no servers read from this file: {names} must go inside an "mcpServers" object',
                file,
                reason="no_servers_key",
                fix='put the server entries inside {"mcpServers": {...}}',
            )
        ]
    if "settings" in document or "goExtensions" in document:
        return []  # settings only: nothing wrong with that
    return [
        ConfigWarning(
            'no "mcpServers" object: orbmcp read no servers and no settings from this file',
            file,
            reason="no_servers_key",
            fix='servers go in {"mcpServers": {"NAME": {"command": ...} or {"url": ...}}}',
        )
    ]


def is_entry_like(value: Mapping[str, object]) -> bool:
    return any(key in value for key in ("command", "url"))


def unknown_keys(problems: Problems, entry: Mapping[str, object], known: tuple[str, ...]) -> None:
    """An ignored-key warning for each key orbmcp does not read, with a close match suggested."""
    for key in entry:
        if key in known or key in TRUST_KEYS:
            continue
        close = close_names(key, known, n=1)
        if close:
            hint = f"'{key}' — did you mean '{close[0]}'?"
            problems.ignore(f"unknown key {hint} (ignored)", reason="unknown_key")
            problems.suggest(hint)
        else:
            problems.ignore(f"unknown key '{key}' ignored", reason="unknown_key")


def trust_key_warnings(document: Mapping[str, object], *, file: str | None) -> list[ConfigWarning]:
    """Warnings for a project file's attempts to grant trust: top level, settings, entries."""
    out: list[ConfigWarning] = []

    def scan(mapping: Mapping[str, object], prefix: str, server: str | None) -> None:
        out.extend(
            ConfigWarning(f'"{prefix}{key}" {_TRUST_KEY_IGNORED}', file, server, "trust_key")
            for key in mapping
            if key in TRUST_KEYS
        )

    scan(document, "", None)
    settings = document.get("settings")
    if isinstance(settings, dict):
        scan(settings, "settings.", None)
    key = servers_key(document)
    servers = document.get(key) if key is not None else None
    if isinstance(servers, dict):
        for name, entry in servers.items():
            if isinstance(entry, dict):
                scan(entry, "", name)
    return out


def is_partial(raw: object) -> bool:
    """An object entry with no command/url/type/transport: a partial override."""
    return isinstance(raw, dict) and not any(key in raw for key in DEFINING_KEYS)


# ---- one full entry ------------------------------------------------------------------------------


def parse_server(
    name: str,
    raw: object,
    *,
    file: str | None,
    source: Source,
    settings: Settings,
) -> tuple[ServerConfig | None, list[ConfigWarning]]:
    """One full entry (not a partial override) into an unexpanded ServerConfig, or None + why."""
    problems = Problems(name, file)
    entry = fields.entry_object(problems, name, raw)
    if entry is None:
        return None, problems.warnings()
    if source == "project":
        for key in entry:
            if key in TRUST_KEYS:
                problems.ignore(f'"{key}" {_TRUST_KEY_IGNORED}', reason="trust_key")
    unknown_keys(problems, entry, ENTRY_KEYS)
    transport, command, url = fields.transport_fields(problems, entry)
    stdio = transport == "stdio"
    args, env, cwd = fields.stdio_fields(problems, entry, transport)
    headers = fields.http_fields(problems, entry, transport)
    enabled, lifecycle = fields.switches(problems, entry)
    timeout_ms, request_timeout_ms = fields.timeouts(problems, entry)
    max_retries = fields.max_retries(problems, entry, settings.max_retries)
    health = fields.health_interval(problems, entry)
    auth = fields.entry_auth(problems, entry, stdio=stdio)
    roots = fields.entry_roots(problems, entry)
    if problems.fatal or transport is None:
        return None, problems.warnings()
    server = ServerConfig(
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
        roots=roots,
    )
    return server, problems.warnings()


# ---- partial overrides ---------------------------------------------------------------------------


def parse_override(
    name: str, raw: Mapping[str, object], *, file: str | None
) -> tuple[dict[str, object] | None, list[ConfigWarning]]:
    """A partial override's keys, checked; None (with a warning) when it sets anything else."""
    problems = Problems(name, file)
    kept: dict[str, object] = {}
    for key, value in raw.items():
        if key in TRUST_KEYS:
            problems.ignore(f'"{key}" {_TRUST_KEY_IGNORED}', reason="trust_key")
        elif key in OVERRIDE_KEYS:
            kept[key] = value
        else:
            close = close_names(key, [*ENTRY_KEYS, *OVERRIDE_KEYS], n=1)
            if close and close[0] != key:
                problems.suggest(f"'{key}' — did you mean '{close[0]}'?")
            problems.invalid(
                f'"{key}" is not allowed in a partial override (only {", ".join(OVERRIDE_KEYS)}); '
                'give "command" or "url" to replace the whole entry',
                reason="invalid_override",
            )
    fields.check_enabled(problems, kept)
    fields.check_lifecycle(problems, kept)
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
