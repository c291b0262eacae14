"""The bearer token of ``orbmcp serve --http``: generated on first use, kept 0600 in the global dir.

Any local process can reach a loopback port, so the HTTP gateway answers only requests that carry
this token (``Authorization: Bearer <token>``); ``orbmcp serve --print-token`` prints it for the
agent's configuration. Deleting the file makes the next ``serve`` generate a new one.
"""

from __future__ import annotations

import hmac
import re
import secrets
from pathlib import Path

from orbmcp import fs

FILE_NAME = "serve-token"
_VALID = re.compile(r"[A-Za-z0-9_-]{32,256}")
_MAX_BYTES = 4096


def token_path(global_dir: Path) -> Path:
    return global_dir / FILE_NAME


def _valid(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    text = raw.decode("ascii", "replace").strip()
    return text if _VALID.fullmatch(text) else None


def load_or_create(global_dir: Path) -> str:
    """The token, generated (under the file's lock, so two first uses agree) when missing or
    unreadable."""
    path = token_path(global_dir)
    try:
        existing = _valid(fs.read_private(path, max_bytes=_MAX_BYTES))
    except (OSError, ValueError):
        existing = None
    if existing is not None:
        return existing

    def change(old: bytes | None) -> bytes | None:
        return None if _valid(old) is not None else (secrets.token_urlsafe(32) + "\n").encode("ascii")

    fs.update(path, change, max_bytes=_MAX_BYTES)
    token = _valid(fs.read_private(path, max_bytes=_MAX_BYTES))
    assert token is not None  # just written under the lock
    return token


def matches(expected: str, authorization: str | None) -> bool:
    """Whether an ``Authorization`` header carries the token (constant-time comparison)."""
    if not authorization:
        return False
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode("utf-8", "replace"), expected.encode("ascii"))
