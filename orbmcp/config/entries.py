"""One server entry of a config file, validated into a ``ServerConfig`` or into warnings.

An entry is a union by transport (``StdioEntry``, ``HttpEntry``, ``SseEntry``: one module each)
plus the keys every transport shares (``EntryOptions``), each a pydantic model whose validators
speak orbmcp's messages. Each entry is validated on its own: an invalid one is skipped with one
warning naming file, server and key (and what fixes it), and the others still load. Variables are
NOT expanded here: ``expand.finalize`` does that, and only for the entries that are trusted and
will be used, so an entry nobody approved never reads the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from orbmcp.config.documents import (
    ENTRY_KEYS,
    OVERRIDE_KEYS,
    TRUST_KEY_IGNORED,
    TRUST_KEYS,
)
from orbmcp.config.entry_options import EntryOptions
from orbmcp.config.jsonc import type_name
from orbmcp.config.model import ConfigWarning, ServerConfig, Source, Transport
from orbmcp.config.problems import Problems, show
from orbmcp.config.settings import Settings
from orbmcp.config.transports import FOR_COMMAND, FOR_URL, entry_words, in_entry, is_local, kind_of
from orbmcp.suggest import close_names

if TYPE_CHECKING:
    from orbmcp.config.transports import EntryModel


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
    entry = _entry_object(problems, name, raw)
    if entry is None:
        return None, problems.warnings()
    if source == "project":
        for key in entry:
            if key in TRUST_KEYS:
                problems.ignore(f'"{key}" {TRUST_KEY_IGNORED}', reason="trust_key")
    unknown_keys(problems, entry, ENTRY_KEYS)
    transport = transport_of(problems, entry)
    context: dict[str, Any] = {"problems": problems}
    part: EntryModel | None = None
    if transport is not None:
        # The model of the transport ``transport_of`` resolved (from ``transport``/``type`` or from
        # which of ``command``/``url`` the entry has), rather than a discriminated union: each
        # model builds its validator on first use (``defer_build``), so a config that has no SSE
        # server never builds the SSE one (the config commands' budget).
        try:
            part = (
                kind_of(transport)
                .entry_model()
                .model_validate({**entry, "transport": transport}, context=context)
            )
        except ValidationError as exc:
            problems.add_errors(exc)
    options: EntryOptions | None = None
    try:
        options = EntryOptions.model_validate(entry, context=context)
    except ValidationError as exc:
        problems.add_errors(exc)
    if options is not None and options.auth is not None and transport is not None and is_local(transport):
        problems.ignore('"auth" applies only to HTTP servers; ignored')
        options = options.model_copy(update={"auth": None})
    if problems.fatal or part is None or options is None:
        return None, problems.warnings()
    server = ServerConfig(
        name=name,
        transport=part.transport,
        source=source,
        file=file,
        **part.server_fields(),  # type: ignore[arg-type]  # the model's fields, checked
        **options.server_fields(settings),  # type: ignore[arg-type]
    )
    return server, problems.warnings()


def transport_of(problems: Problems, entry: Mapping[str, object]) -> Transport | None:
    """The stated transport, else the one ``command`` or ``url`` implies; None (and why, in
    ``problems``) when the keys contradict each other or name none."""
    found: Transport | None = None
    for key in ("transport", "type"):
        if key not in entry:
            continue
        value = entry[key]
        kind = in_entry(value) if isinstance(value, str) else None
        if kind is None:
            problems.invalid(f'"{key}" must be one of {", ".join(entry_words())} (got {show(value)})')
            return None
        transport = kind.name
        if found is not None and transport != found:
            problems.invalid(f'"transport" and "type" disagree ({found} vs {transport})')
            return None
        found = transport
    if "command" in entry and "url" in entry:
        problems.invalid('set either "command" (stdio) or "url" (HTTP), not both: choose one transport')
        return None
    if found is None:
        implied = FOR_COMMAND if "command" in entry else FOR_URL if "url" in entry else None
        found = implied.name if implied is not None else None
    if found is None:
        problems.invalid('no transport: set "command" (stdio) or "url" (HTTP)')
    elif is_local(found) and "command" not in entry:
        problems.invalid(f'transport "{found}" needs "command"')
    elif not is_local(found) and "url" not in entry:
        problems.invalid(f'transport "{found}" needs "url"')
    else:
        return found
    return None


def _entry_object(problems: Problems, name: object, raw: object) -> dict[str, object] | None:
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
    return raw


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


def parse_override(
    name: str, raw: Mapping[str, object], *, file: str | None
) -> tuple[dict[str, object] | None, list[ConfigWarning]]:
    """A partial override's keys, checked; None (with a warning) when it sets anything else."""
    problems = Problems(name, file)
    kept: dict[str, object] = {}
    for key, value in raw.items():
        if key in TRUST_KEYS:
            problems.ignore(f'"{key}" {TRUST_KEY_IGNORED}', reason="trust_key")
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
    switches = {k: kept[k] for k in ("enabled", "disabled", "lifecycle") if k in kept}
    try:
        EntryOptions.model_validate(switches, context={"problems": problems})
    except ValidationError as exc:
        problems.add_errors(exc)
    if problems.fatal:
        return None, problems.warnings()
    return kept, problems.warnings()
