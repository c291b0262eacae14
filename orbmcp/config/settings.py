"""The ``settings`` and ``goExtensions`` keys of one config file, checked key by key.

A bad value is ignored with a warning (the rest of the file still counts). Only the keys a file
states are returned: a project file carries no defaults, so a key it leaves out must not reset
what the global file set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from orbmcp.config.jsonc import type_name
from orbmcp.config.model import DEFAULT_SAMPLING_TIMEOUT_MS, ConfigWarning, SamplingConfig, Settings
from orbmcp.config.problems import MAX_DURATION_MS, Problems, as_int, show

MAX_RETRIES_LIMIT = 10
MAX_ROOTS = 100
_TOOL_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,32}")


def _tool_prefix(value: object) -> str | None:
    return value if isinstance(value, str) and _TOOL_PREFIX.fullmatch(value) else None


def _duration_ms(value: object) -> int | None:
    number = as_int(value)
    return number if number is not None and 0 < number <= MAX_DURATION_MS else None


def _retries(value: object) -> int | None:
    number = as_int(value)
    return number if number is not None and 0 <= number <= MAX_RETRIES_LIMIT else None


def _daemon(value: object) -> str | None:
    return value if value in ("auto", "off") else None


def _credential_store(value: object) -> str | None:
    return value if value in ("file", "keyring") else None


def _lock(value: object) -> str | None:
    return value if value in ("warn", "strict") else None


def roots_list(value: object) -> tuple[str, ...] | None:
    """``roots``: an array of at most ``MAX_ROOTS`` non-empty paths (unexpanded); None if invalid."""
    if not isinstance(value, list) or len(value) > MAX_ROOTS:
        return None
    if not all(isinstance(p, str) and p.strip() and "\x00" not in p for p in value):
        return None
    return tuple(value)


def _sampling(value: object) -> SamplingConfig | None:
    if not isinstance(value, dict):
        return None
    command = value.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        return None
    if not command[0].strip() or any("\x00" in a for a in command):
        return None
    timeout = _duration_ms(value.get("timeoutMs", DEFAULT_SAMPLING_TIMEOUT_MS))
    if timeout is None:
        return None
    return SamplingConfig(tuple(command), timeout)


# settings key, Settings field, checker (None = invalid), what it must be
_SETTINGS: tuple[tuple[str, str, Callable[[object], object], str], ...] = (
    ("toolPrefix", "tool_prefix", _tool_prefix, "1-32 characters of A-Z a-z 0-9 _ -"),
    ("requestTimeoutMs", "request_timeout_ms", _duration_ms, f"a positive integer up to {MAX_DURATION_MS}"),
    ("maxRetries", "max_retries", _retries, f"an integer from 0 to {MAX_RETRIES_LIMIT}"),
    ("daemon", "daemon", _daemon, '"auto" or "off"'),
    ("roots", "roots", roots_list, f"an array of at most {MAX_ROOTS} directory paths"),
    ("tokenStore", "credential_store", _credential_store, '"file" or "keyring"'),
    ("lock", "lock", _lock, '"warn" or "strict"'),
    (
        "sampling",
        "sampling",
        _sampling,
        'an object with "command" (a non-empty array of strings) and an optional positive "timeoutMs"'
        f" up to {MAX_DURATION_MS}",
    ),
)
# Settings only the user's own files may state: a cloned project must not start processes that
# outlive the command the user ran, choose which other files orbmcp reads, nor choose the program
# that answers with the user's model, nor decide where the user's credentials are kept.
# Nor loosen the tool lock the user chose.
GLOBAL_ONLY = frozenset({"daemon", "imports", "sampling", "credential_store", "lock"})
# settings.json (the orb agent's file) states these at the top level, mcp.json under "settings".
_TOP_LEVEL = ("daemon", "imports")
# Settings field -> the key a file spells it with (for messages).
SETTING_KEYS = {field_name: key for key, field_name, _, _ in _SETTINGS}


def parse_settings(
    document: Mapping[str, object], *, file: str | None
) -> tuple[dict[str, object], list[ConfigWarning]]:
    """Only the keys this file states, as ``Settings`` field names; bad values are ignored with a warning."""
    problems = Problems(None, file)
    stated: dict[str, object] = {}
    top = {key: document[key] for key in _TOP_LEVEL if key in document}
    if top and isinstance(document.get("settings"), dict | None):
        _settings_block(problems, top, stated)
    _settings_block(problems, document.get("settings"), stated)
    _extensions_block(problems, document.get("goExtensions"), stated)
    return stated, problems.warnings()


def _settings_block(problems: Problems, raw: object, stated: dict[str, object]) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        problems.ignore(
            f'"settings" must be an object, not {type_name(raw)}; ignored', reason="invalid_setting"
        )
        return
    if "imports" in raw:
        _imports(problems, raw["imports"], stated)
    for key, field_name, check, want in _SETTINGS:
        if key not in raw:
            continue
        value = check(raw[key])
        if value is None:
            problems.ignore(
                f'"settings.{key}" must be {want} (got {show(raw[key])}); ignored', reason="invalid_setting"
            )
        else:
            stated[field_name] = value


def _imports(problems: Problems, value: object, stated: dict[str, object]) -> None:
    """``imports``: a list of client names; an unknown name is dropped with a warning."""
    from orbmcp.config.clients import CLIENTS, parse_client

    if not isinstance(value, list):
        problems.ignore(
            f'"settings.imports" must be a list of client names (got {show(value)}); ignored',
            reason="invalid_setting",
        )
        return
    chosen: list[str] = []
    for item in value:
        client = parse_client(item) if isinstance(item, str) else None
        if client is None:
            problems.ignore(
                f'"settings.imports": unknown client {show(item)} (known: {", ".join(CLIENTS)}); ignored',
                reason="invalid_setting",
            )
        elif client not in chosen:
            chosen.append(client)
    stated["imports"] = tuple(chosen)


def _extensions_block(problems: Problems, extensions: object, stated: dict[str, object]) -> None:
    if extensions is None:
        return
    if not isinstance(extensions, dict):
        problems.ignore(
            f'"goExtensions" must be an object, not {type_name(extensions)}; ignored',
            reason="invalid_setting",
        )
    elif "mcp" in extensions:
        if isinstance(extensions["mcp"], bool):
            stated["extension_enabled"] = extensions["mcp"]
        else:
            problems.ignore(
                f'"goExtensions.mcp" must be true or false (got {show(extensions["mcp"])}); ignored',
                reason="invalid_setting",
            )


def apply_settings(settings: Settings, stated: Mapping[str, object]) -> Settings:
    return replace(settings, **stated)  # type: ignore[arg-type]  # keys come from parse_settings
