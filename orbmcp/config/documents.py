"""The shape of a config file around its entries: where the servers are (``mcpServers`` or VS
Code's ``servers``), what is wrong with the file as a whole, the keys an entry may have, the trust
keys a project may not set, and partial overrides (an entry without a transport).

Entries themselves are validated by the models in ``entries.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from orbmcp.config.jsonc import type_name
from orbmcp.config.model import ConfigWarning
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
TRUST_KEY_IGNORED = "cannot be set by a project: trust is granted only by `orbmcp trust`; ignored"

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


def trust_key_warnings(document: Mapping[str, object], *, file: str | None) -> list[ConfigWarning]:
    """Warnings for a project file's attempts to grant trust: top level, settings, entries."""
    out: list[ConfigWarning] = []

    def scan(mapping: Mapping[str, object], prefix: str, server: str | None) -> None:
        out.extend(
            ConfigWarning(f'"{prefix}{key}" {TRUST_KEY_IGNORED}', file, server, "trust_key")
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


def apply_override(base: Mapping[str, object], override: Mapping[str, object]) -> dict[str, object]:
    """The base entry with the override's keys; a stated on/off replaces both spellings of the base."""
    merged = dict(base)
    if "enabled" in override or "disabled" in override:
        merged.pop("enabled", None)
        merged.pop("disabled", None)
    merged.update(override)
    return merged
