"""Where a server's OAuth record lives and what it holds: ``<global dir>/mcp-auth/<hash>.json``.

One file per canonical server URL (scheme and host lower-cased, default port, userinfo and
fragment dropped). :func:`parse_record` is strict enough that a truncated or foreign file is caught
here, not deep in the SDK. Stdlib only: the status views read records without the SDK.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

RECORD_VERSION = 1
AUTH_DIR_NAME = "mcp-auth"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_server_url(url: str) -> str:
    """Scheme and host lower-cased, default port, userinfo and fragment dropped: what binds a record."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path, parts.query, ""))


def server_hash(url: str) -> str:
    return hashlib.sha256(canonical_server_url(url).encode()).hexdigest()


def auth_dir(global_dir: Path) -> Path:
    return global_dir / AUTH_DIR_NAME


def record_path(global_dir: Path, url: str) -> Path:
    return auth_dir(global_dir) / f"{server_hash(url)}.json"


def lock_path(global_dir: Path, url: str) -> Path:
    return auth_dir(global_dir) / f"{server_hash(url)}.json.lock"


@dataclass
class StoredRecord:
    """The parsed file, as plain JSON values (so the status view needs no SDK import)."""

    server_url: str
    issuer: str | None = None
    client: dict[str, Any] | None = None
    tokens: dict[str, Any] | None = None
    discovery: dict[str, Any] = field(default_factory=dict)
    required_scope: str | None = None
    updated_at: float = 0.0
    kept_in: str = "file"  # "keyring": the secret values are in the OS keyring (keyring_store)

    @property
    def expires_at(self) -> float | None:
        value = (self.tokens or {}).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "server_url": self.server_url,
            "issuer": self.issuer,
            "client": self.client,
            "tokens": self.tokens,
            "discovery": self.discovery,
            "required_scope": self.required_scope,
            "updated_at": self.updated_at,
            "kept_in": self.kept_in,
        }


class CorruptRecord(ValueError):
    pass


def parse_record(raw: bytes) -> StoredRecord:
    """The record in ``raw``; :class:`CorruptRecord` naming what is wrong otherwise."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CorruptRecord(f"not JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
        raise CorruptRecord("unexpected shape or version")
    server_url = data.get("server_url")
    if not isinstance(server_url, str):
        raise CorruptRecord("no server_url")
    issuer = data.get("issuer")
    client = data.get("client")
    tokens = data.get("tokens")
    discovery = data.get("discovery") or {}
    scope = data.get("required_scope")
    if issuer is not None and not isinstance(issuer, str):
        raise CorruptRecord("issuer is not a string")
    if client is not None and not (isinstance(client, dict) and isinstance(client.get("client_id"), str)):
        raise CorruptRecord("client without client_id")
    if tokens is not None and not (isinstance(tokens, dict) and isinstance(tokens.get("access_token"), str)):
        raise CorruptRecord("tokens without access_token")
    if not isinstance(discovery, dict) or (scope is not None and not isinstance(scope, str)):
        raise CorruptRecord("bad discovery or scope")
    updated = data.get("updated_at")
    kept_in = data.get("kept_in", "file")
    if kept_in not in ("file", "keyring"):
        raise CorruptRecord("unknown kept_in")
    return StoredRecord(
        server_url=server_url,
        issuer=issuer,
        client=client,
        tokens=tokens,
        discovery=discovery,
        required_scope=scope,
        updated_at=float(updated) if isinstance(updated, int | float) else 0.0,
        kept_in=kept_in,
    )


def issuers_equal(a: str, b: str) -> bool:
    """Simple string comparison, except a root issuer with and without its trailing slash."""
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    return longer == f"{shorter}/" and urlsplit(shorter).path == ""


def expiry_from(expires_in: object, now: float) -> float | None:
    """Absolute expiry; an absent or nonsensical ``expires_in`` means unknown."""
    try:
        seconds = int(str(expires_in)) if expires_in is not None else None
    except ValueError:
        return None
    return None if seconds is None else now + seconds
