"""The OAuth line of the status views, read from disk without the SDK (stdlib only, read-only)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Literal

from orbmcp.auth.storage import CorruptRecord, canonical_server_url, parse_record, record_path
from orbmcp.config.model import ServerConfig

AuthStatus = Literal[
    "credentials stored",
    "authorization may be required",
    "corrupt state file backed up (re-auth required)",
    "not configured",
]

CREDENTIALS_STORED: AuthStatus = "credentials stored"
MAY_BE_REQUIRED: AuthStatus = "authorization may be required"
CORRUPT: AuthStatus = "corrupt state file backed up (re-auth required)"
NOT_CONFIGURED: AuthStatus = "not configured"


def _read(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:
        return b""  # a symlink or unreadable file is no usable credential
    try:
        with os.fdopen(fd, "rb") as f:
            return f.read(1 << 20)
    except OSError:
        return b""


def _latest_backup(path: Path) -> float | None:
    try:
        stamps = [p.stat().st_mtime for p in path.parent.glob(f"{path.name}.corrupt-*")]
    except OSError:
        return None
    return max(stamps, default=None)


def auth_status(cfg: ServerConfig, global_dir: Path) -> AuthStatus:
    if cfg.auth is None or not cfg.url:
        return NOT_CONFIGURED
    path = record_path(global_dir, cfg.url)
    backup = _latest_backup(path)
    raw = _read(path)
    if raw is None:
        return CORRUPT if backup is not None else MAY_BE_REQUIRED
    try:
        record = parse_record(raw)
    except CorruptRecord:
        return CORRUPT
    if backup is not None and backup > record.updated_at:
        return CORRUPT  # quarantined after the last successful write: not re-authorized yet
    if record.server_url != canonical_server_url(cfg.url) or not record.tokens:
        return MAY_BE_REQUIRED
    expires_at = record.expires_at
    if expires_at is not None and expires_at <= time.time() and not record.tokens.get("refresh_token"):
        return MAY_BE_REQUIRED
    return CREDENTIALS_STORED
