"""Per-server OAuth state on disk, as the SDK's ``TokenStorage`` plus orbmcp's extras.

The record (see ``orbmcp.auth.record``) holds the client registration, the tokens (with their
ABSOLUTE expiry, which the SDK forgets across restarts), the discovered metadata the refresh grant
needs, and the issuer the tokens came from. It is bound to its server URL and issuer: it is never
returned for another server or authorization server. Files are written and read through
``orbmcp.fs`` (0600 in a 0700 directory, atomic, symlinks refused, loose modes tightened); a file
that does not parse is moved aside, redacted, and that server reads as logged out.

Stdlib only at import time (status views read these files); the SDK models are imported inside
the async ``TokenStorage`` methods, which only connecting code calls.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orbmcp import fs, processes
from orbmcp.auth import keyring_store
from orbmcp.auth.messages import log_auth_event
from orbmcp.auth.record import (
    CorruptRecord,
    StoredRecord,
    auth_dir,
    canonical_server_url,
    expiry_from,
    issuers_equal,
    lock_path,
    parse_record,
    record_path,
)
from orbmcp.errors import AuthError
from orbmcp.redact import redact

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    from orbmcp.config.model import ServerConfig

# The temp files fs.atomic_write leaves behind when its process dies mid-write.
_TMP_RE = re.compile(r"^\.(?P<name>[0-9a-f]{64}\.json)\.tmp-(?P<pid>\d+)-[0-9a-f]+$")
# A run of token characters, 20 or more long, with at least one digit and one letter.
_TOKENISH_RE = re.compile(r"(?<![\w\-.~+/=])(?=[\w\-.~+/=]*\d)(?=[\w\-.~+/=]*[A-Za-z])[\w\-.~+/=]{20,}")


def ensure_auth_dir(path: Path) -> None:
    """``fs.ensure_private_dir``, its refusals as :class:`AuthError` (reason ``unsafe_path``)."""
    try:
        fs.ensure_private_dir(path)
    except fs.UnsafePathError as exc:
        hint = "remove the link and retry" if path.is_symlink() else None
        raise AuthError(str(exc), hint=hint, reason="unsafe_path") from None


def read_credentials(path: Path) -> bytes | None:
    """The file's bytes, or None when absent; a mode looser than 0600 is tightened (and logged).

    A symlink, a non-regular file or an unreadable one is an :class:`AuthError`.
    """
    try:
        loose = stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode) & 0o077
    except OSError:
        loose = 0
    try:
        raw = fs.read_private(path)
    except fs.UnsafePathError:
        if path.is_symlink():
            raise AuthError(
                f"refusing to read credentials from {path}: it is a symbolic link",
                hint="remove the link and authorize again",
                reason="unsafe_path",
            ) from None
        raise AuthError(
            f"refusing to read credentials from {path}: not a regular file", reason="unsafe_path"
        ) from None
    except OSError as exc:
        raise AuthError(f"cannot read {path}: {exc.strerror}") from None
    if raw is not None and loose:
        log_auth_event(
            "oauth.store.mode",
            server="-",
            level="warning",
            message=f"tightened the mode of {path.name} to 0600",
        )
    return raw


class AuthStore:
    """The SDK ``TokenStorage`` protocol over one server's record, plus orbmcp's extras.

    ``corrupt_backup`` is set when a file that did not parse was moved aside to
    ``<hash>.json.corrupt-<ts>``; that server then reads as logged out, and no other is touched.
    """

    def __init__(
        self, global_dir: Path, cfg: ServerConfig, *, notify: Callable[[str], None] | None = None
    ) -> None:
        if not cfg.url:
            raise AuthError(
                f"server '{cfg.name}' has no URL; OAuth applies to HTTP servers only", server=cfg.name
            )
        self.server = cfg.name
        self.server_url = canonical_server_url(cfg.url)
        self.dir = auth_dir(global_dir)
        self.path = record_path(global_dir, cfg.url)
        self.lock_path = lock_path(global_dir, cfg.url)
        self.corrupt_backup: Path | None = None
        self._expected_issuer: str | None = None
        # Secrets in the OS keyring (``keyring_store``) instead of the file, when asked for.
        self._keyring = cfg.auth is not None and cfg.auth.credential_store == "keyring"
        self._keyring_key = self.path.name
        self._notify = notify  # where a keyring fallback is said to the person

    # -- raw record ------------------------------------------------------------------------------

    def load(self) -> StoredRecord | None:
        """The record for this URL (and the bound issuer, once known), else None."""
        raw = read_credentials(self.path)
        if raw is None:
            return None
        try:
            record = parse_record(raw)
        except CorruptRecord as exc:
            self._quarantine(str(exc))
            return None
        if record.server_url != self.server_url:
            # Planted or copied from another server: never hand it out.
            return None
        if record.kept_in == "keyring":
            try:
                return keyring_store.fill(self._keyring_key, record)
            except keyring_store.KeyringUnavailable as exc:
                keyring_store.warn_unavailable(self.server, str(exc), self._notify)
                record.tokens, record.client = None, None  # unreadable secrets: logged out
        return record

    def _quarantine(self, why: str) -> None:
        """Move the unreadable file aside (0600), redacted: a half-written record still holds tokens."""
        backup = self.path.with_name(f"{self.path.name}.corrupt-{time.time_ns() // 1_000_000}")
        try:
            raw = read_credentials(self.path) or b""
            text = raw.decode("utf-8", errors="backslashreplace")
            # Keys and structure help diagnose; long token-like runs are credentials whatever their key.
            masked = _TOKENISH_RE.sub("<redacted>", redact(text))
            fs.atomic_write(backup, masked.encode())
            os.unlink(self.path)
        except (OSError, AuthError):
            return
        self.corrupt_backup = backup
        log_auth_event(
            "oauth.store.corrupt",
            server=self.server,
            level="warning",
            message=f"credential file for '{self.server}' was unreadable ({why}); backed up to {backup.name}",
        )

    def _save(self, record: StoredRecord) -> None:
        record.updated_at = time.time()
        record = self._place_secrets(record)
        data = json.dumps(record.to_json(), indent=1, sort_keys=True).encode()
        try:
            ensure_auth_dir(self.dir)  # its refusals are AuthErrors already
            self._remove_stale_temps()
            fs.atomic_write(self.path, data)
        except fs.UnsafePathError as exc:
            raise AuthError(str(exc), server=self.server, reason="unsafe_path") from None
        except OSError as exc:
            raise AuthError(
                f"could not save credentials for server '{self.server}': "
                f"{exc.strerror or type(exc).__name__}",
                server=self.server,
                hint=f"check permissions and free space in {self.dir}",
            ) from None

    def _place_secrets(self, record: StoredRecord) -> StoredRecord:
        """The record as the file holds it: its secrets moved to the keyring when that is the
        store (the file store when the keyring cannot be used), and a keyring entry the file
        store no longer needs removed."""
        if self._keyring and (record.tokens is not None or record.client is not None):
            try:
                return keyring_store.put(self._keyring_key, record)
            except keyring_store.KeyringUnavailable as exc:
                keyring_store.warn_unavailable(self.server, str(exc), self._notify)
        if self._keyring or record.kept_in == "keyring":
            keyring_store.delete(self._keyring_key)
        record.kept_in = "file"
        return record

    def _remove_stale_temps(self) -> None:
        """Temp files a crashed writer left behind (never a live writer's)."""
        try:
            entries = list(os.scandir(self.dir))
        except OSError:
            return
        for entry in entries:
            m = _TMP_RE.match(entry.name)
            if m is None or m.group("name") != self.path.name:
                continue
            pid = int(m.group("pid"))
            if pid != os.getpid() and not processes.alive(pid):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)

    def _current(self) -> StoredRecord:
        return self.load() or StoredRecord(server_url=self.server_url)

    # -- issuer binding --------------------------------------------------------------------------

    @property
    def expected_issuer(self) -> str | None:
        return self._expected_issuer

    def bind_issuer(self, issuer: str | None) -> bool:
        """Record which issuer this server uses now. False when the stored tokens belong to another."""
        self._expected_issuer = issuer
        record = self.load()
        return not (record and record.issuer and issuer and not issuers_equal(record.issuer, issuer))

    def _issuer_ok(self, record: StoredRecord) -> bool:
        if not (self._expected_issuer and record.issuer):
            return True
        return issuers_equal(record.issuer, self._expected_issuer)

    # -- TokenStorage ------------------------------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken
        from pydantic import ValidationError

        record = self.load()
        if record is None or record.tokens is None or not self._issuer_ok(record):
            return None
        body = {k: v for k, v in record.tokens.items() if k not in ("expires_at", "issued_at")}
        try:
            return OAuthToken.model_validate(body)
        except ValidationError:
            self._quarantine("tokens do not validate")
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        record = self._current()
        now = time.time()
        body = tokens.model_dump(mode="json", exclude_none=True)
        body["expires_at"] = expiry_from(tokens.expires_in, now)
        body["issued_at"] = now
        record.tokens = body
        if self._expected_issuer:
            record.issuer = self._expected_issuer
        self._save(record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull
        from pydantic import ValidationError

        record = self.load()
        if record is None or record.client is None:
            return None
        client_issuer = record.client.get("issuer")
        if (
            self._expected_issuer
            and isinstance(client_issuer, str)
            and not issuers_equal(client_issuer, self._expected_issuer)
        ):
            return None
        try:
            return OAuthClientInformationFull.model_validate(record.client)
        except ValidationError:
            self._quarantine("client registration does not validate")
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        record = self._current()
        record.client = client_info.model_dump(mode="json", exclude_none=True)
        self._save(record)

    # -- orbmcp extras ---------------------------------------------------------------------------

    def expires_at(self) -> float | None:
        record = self.load()
        return record.expires_at if record is not None and self._issuer_ok(record) else None

    def save_discovery(self, discovery: Mapping[str, Any], issuer: str | None) -> None:
        """Metadata the refresh grant needs after a restart (token endpoint, resource)."""
        record = self._current()
        record.discovery = dict(discovery)
        if issuer:
            record.issuer = issuer
        self._save(record)

    def discovery(self) -> dict[str, Any]:
        record = self.load()
        return dict(record.discovery) if record is not None and self._issuer_ok(record) else {}

    def set_required_scope(self, scope: str | None) -> None:
        """A 403 insufficient_scope seen mid-session: the next authorization asks for it too."""
        record = self._current()
        record.required_scope = scope
        self._save(record)

    def required_scope(self) -> str | None:
        record = self.load()
        return record.required_scope if record is not None else None

    def clear(self, *, tokens: bool = True, client: bool = True) -> None:
        record = self.load()
        if record is None:
            return
        if tokens:
            record.tokens = None
            record.required_scope = None
        if client:
            record.client = None
            record.discovery = {}
            record.issuer = None
        if record.tokens is None and record.client is None:
            if self._keyring or record.kept_in == "keyring":
                keyring_store.delete(self._keyring_key)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            return
        self._save(record)
