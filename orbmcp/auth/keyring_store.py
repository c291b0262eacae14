"""The opt-in OS keyring for OAuth secrets (``"tokenStore": "keyring"`` in the global settings).

The record file stays where it is and keeps everything that is not secret: the server URL and
issuer it is bound to, the client id, the discovered metadata, the expiry. Only the secret values
(access, refresh and id tokens, the client secret and registration token) go to the keyring, one
entry per record (service ``orbmcp``, the record's file name as the user name), and the file holds
a placeholder in their place. So the lock, the URL and issuer binding, the status views (which
never touch the keyring) and the quarantine of a broken file work exactly as with the file store.

A keyring that cannot be used (the ``keyring`` package missing, no backend, a locked collection)
falls back to the file store, with one warning per process; a record whose keyring entry is gone
reads as logged out. Imports ``keyring`` only when a keyring record is read or written.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from orbmcp.auth.messages import log_auth_event
from orbmcp.auth.record import StoredRecord
from orbmcp.log import get_logger

SERVICE = "orbmcp"
PLACEHOLDER = "<in the OS keyring>"
SECRET_FIELDS = (
    ("tokens", "access_token"),
    ("tokens", "refresh_token"),
    ("tokens", "id_token"),
    ("client", "client_secret"),
    ("client", "registration_access_token"),
)
_MAX_ENTRY_CHARS = 64 * 1024
_warned = False
_log = get_logger(__name__)


class KeyringUnavailable(Exception):
    """The OS keyring cannot be used; the message says why."""


def _keyring() -> Any:
    try:  # an optional extra: imported where it is used, so its absence is a message
        import keyring
        from keyring.backends import fail
    except ImportError:
        raise KeyringUnavailable(
            "the keyring package is not installed (pip install 'orbmcp[keyring]')"
        ) from None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        raise KeyringUnavailable("no OS keyring backend is available")
    return keyring


def warn_unavailable(server: str, why: str, notify: Callable[[str], None] | None = None) -> None:
    """Once per process: the keyring was asked for and cannot be used. ``notify`` shows it to the
    person (the front's notice line, or the server's warnings): a fallback they chose against
    must not pass only into the debug log."""
    global _warned
    if _warned:
        return
    _warned = True
    message = f"OS keyring unavailable ({why}); OAuth secrets are kept in the private file store instead"
    _log.warning("%s", message)
    if notify is not None:
        notify(message)
    log_auth_event("oauth.keyring.unavailable", server=server, level="warning", message=message)


def _sections(record: StoredRecord) -> dict[str, dict[str, Any] | None]:
    return {"tokens": record.tokens, "client": record.client}


def put(key: str, record: StoredRecord) -> StoredRecord:
    """Store the record's secrets in the keyring; the record as the file must hold it then."""
    keyring = _keyring()
    stripped = copy.deepcopy(record)
    secrets: dict[str, str] = {}
    for section, field in SECRET_FIELDS:
        values = _sections(stripped)[section]
        value = values.get(field) if values is not None else None
        if isinstance(value, str) and values is not None:
            secrets[f"{section}.{field}"] = value
            values[field] = PLACEHOLDER
    try:
        keyring.set_password(SERVICE, key, json.dumps(secrets))
    except Exception as exc:  # every backend raises its own types
        raise KeyringUnavailable(f"{type(exc).__name__}: {exc}"[:200]) from None
    stripped.kept_in = "keyring"
    return stripped


def fill(key: str, record: StoredRecord) -> StoredRecord:
    """The record with its secrets back from the keyring; without tokens and client (logged
    out) when the entry is missing or does not fit the record."""
    keyring = _keyring()
    try:
        raw = keyring.get_password(SERVICE, key)
    except Exception as exc:
        raise KeyringUnavailable(f"{type(exc).__name__}: {exc}"[:200]) from None
    try:
        secrets = json.loads(raw) if isinstance(raw, str) and len(raw) <= _MAX_ENTRY_CHARS else None
    except ValueError:
        secrets = None
    filled = copy.deepcopy(record)
    for section, field in SECRET_FIELDS:
        values = _sections(filled)[section]
        if values is None or values.get(field) != PLACEHOLDER:
            continue
        value = secrets.get(f"{section}.{field}") if isinstance(secrets, dict) else None
        if not isinstance(value, str):
            filled.tokens, filled.client = None, None  # the keyring lost them: logged out
            return filled
        values[field] = value
    return filled


def delete(key: str) -> None:
    """Remove the record's keyring entry; best effort (it may not exist, or the keyring be gone)."""
    with suppress(Exception):
        _keyring().delete_password(SERVICE, key)


__all__ = ["PLACEHOLDER", "SERVICE", "KeyringUnavailable", "delete", "fill", "put", "warn_unavailable"]
