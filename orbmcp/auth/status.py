"""The OAuth line of the status views, read from disk without the SDK (stdlib only).

The line is derived from the record stored now: valid credentials read as stored even when an
older file was quarantined; a quarantine shows only while nothing usable has replaced it, and
"backed up" only where a backup exists.
Reading tightens a credential file's loose mode, as every read of it does.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from orbmcp import fs
from orbmcp.auth.record import CorruptRecord, StoredRecord, canonical_server_url, parse_record, record_path
from orbmcp.config.model import ServerConfig

AuthStatus = Literal[
    "credentials stored",
    "authorization may be required",
    "corrupt state file backed up (re-auth required)",
    "unusable credential file (re-auth required)",
    "not configured",
]

CREDENTIALS_STORED: AuthStatus = "credentials stored"
MAY_BE_REQUIRED: AuthStatus = "authorization may be required"
CORRUPT: AuthStatus = "corrupt state file backed up (re-auth required)"
# The file there now cannot be used (torn, a symlink, too big) and has not been moved aside yet:
# that happens when a connection or `auth` reads it, never in a status view.
UNUSABLE: AuthStatus = "unusable credential file (re-auth required)"
NOT_CONFIGURED: AuthStatus = "not configured"

_MAX_RECORD_BYTES = 1 << 20


def _read(path: Path) -> bytes | None:
    """The record's bytes; None when absent; b"" when unusable (a symlink, unreadable, too big)."""
    try:
        return fs.read_private(path, max_bytes=_MAX_RECORD_BYTES)
    except (OSError, ValueError):
        return b""


def _has_backup(path: Path) -> bool:
    try:
        return any(path.parent.glob(f"{path.name}.corrupt-*"))
    except OSError:
        return False


def _usable(record: StoredRecord, server_url: str) -> bool:
    if record.server_url != server_url or not record.tokens:
        return False
    expires_at = record.expires_at
    return expires_at is None or expires_at > time.time() or bool(record.tokens.get("refresh_token"))


def auth_status(cfg: ServerConfig, global_dir: Path) -> AuthStatus:
    if cfg.auth is None or not cfg.url:
        return NOT_CONFIGURED
    path = record_path(global_dir, cfg.url)
    raw = _read(path)
    if raw is not None:
        try:
            record = parse_record(raw)
        except CorruptRecord:
            return UNUSABLE
        if _usable(record, canonical_server_url(cfg.url)):
            return CREDENTIALS_STORED
    # Nothing usable stored: a quarantined file means the credentials were lost, not never there.
    return CORRUPT if _has_backup(path) else MAY_BE_REQUIRED
