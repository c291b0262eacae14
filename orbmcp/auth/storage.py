"""Per-server OAuth state on disk: ``<global dir>/mcp-auth/<hash>.json``.

One file per canonical server URL holds the client registration, the tokens (with their ABSOLUTE
expiry, which the SDK forgets across restarts), the discovered metadata the refresh grant needs,
and the issuer the tokens came from. The record is bound to that URL and issuer: it is never
returned for another server or authorization server.

Stdlib only at import time (status views read these files); the SDK models are imported inside
the async ``TokenStorage`` methods, which only connecting code calls.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from orbmcp.errors import AuthError

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    from orbmcp.config.model import ServerConfig

RECORD_VERSION = 1
AUTH_DIR_NAME = "mcp-auth"
DIR_MODE = 0o700
FILE_MODE = 0o600
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TMP_RE = re.compile(r"^\.(?P<name>[0-9a-f]{64}\.json)\.tmp-(?P<pid>\d+)-[0-9a-f]+$")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
# A run of token characters, 20 or more long, with at least one digit and one letter.
_TOKENISH_RE = re.compile(r"(?<![\w\-.~+/=])(?=[\w\-.~+/=]*\d)(?=[\w\-.~+/=]*[A-Za-z])[\w\-.~+/=]{20,}")


# -- helpers shared by the auth package (stdlib only) -----------------------------------------


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


def safe_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Text for a user-facing error or a log field: redacted, control characters escaped."""
    try:
        from orbmcp.redact import redact

        text = redact(text, extra_secrets=tuple(secrets))
    except ImportError:  # pragma: no cover - the redactor ships with orbmcp
        for s in secrets:
            if s:
                text = text.replace(s, "<redacted>")
    return _CONTROL_RE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _redacted(text: str) -> str:
    try:
        from orbmcp.redact import redact

        return redact(text)
    except ImportError:  # pragma: no cover - the redactor ships with orbmcp
        return text


def log_auth_event(event: str, *, server: str, message: str, level: str = "info", **fields: object) -> None:
    """Best effort: a missing or failing debug log never breaks authorization."""
    try:
        from orbmcp.log import log_event

        log_event(event, level=level, server=server, message=message, **fields)
    except Exception:
        pass


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and parents) 0700; tighten a looser one; refuse a symlink."""
    if path.is_symlink():
        raise AuthError(f"refusing to use {path}: it is a symbolic link", hint="remove the link and retry")
    try:
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except FileExistsError:  # exist_ok covers directories only: a file or device sits there
        raise AuthError(f"refusing to use {path}: not a directory") from None
    st = os.stat(path, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        raise AuthError(f"refusing to use {path}: not a directory")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, DIR_MODE)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Temp file created 0600 with O_EXCL|O_NOFOLLOW, fsync, rename over ``path``, fsync the dir."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(6).hex()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, FILE_MODE)
    try:
        try:
            os.fchmod(fd, FILE_MODE)  # the umask can only remove bits; be explicit anyway
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        # os.replace swaps the directory entry: a symlink planted at ``path`` is replaced, never followed.
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def read_private_file(path: Path) -> bytes | None:
    """The file's bytes, or None when absent. Refuses symlinks; tightens a mode looser than 0600."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise AuthError(
                f"refusing to read credentials from {path}: it is a symbolic link",
                hint="remove the link and authorize again",
            ) from None
        raise AuthError(f"cannot read {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise AuthError(f"refusing to read credentials from {path}: not a regular file")
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, FILE_MODE)
            log_auth_event(
                "oauth.store.mode",
                server="-",
                level="warning",
                message=f"tightened the mode of {path.name} to 0600",
            )
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# -- the record ----------------------------------------------------------------------------------


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
        }


class CorruptRecord(ValueError):
    pass


def parse_record(raw: bytes) -> StoredRecord:
    """Strict enough that a truncated or foreign file is caught here, not deep in the SDK."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
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
    return StoredRecord(
        server_url=server_url,
        issuer=issuer,
        client=client,
        tokens=tokens,
        discovery=discovery,
        required_scope=scope,
        updated_at=float(updated) if isinstance(updated, int | float) else 0.0,
    )


def issuers_equal(a: str, b: str) -> bool:
    """Simple string comparison, except a root issuer with and without its trailing slash."""
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    return longer == f"{shorter}/" and urlsplit(shorter).path == ""


def expiry_from(expires_in: object, now: float) -> float | None:
    """Absolute expiry; an absent or nonsensical ``expires_in`` means unknown (R-E16)."""
    try:
        seconds = int(str(expires_in)) if expires_in is not None else None
    except ValueError:
        return None
    return None if seconds is None else now + seconds


class AuthStore:
    """The SDK ``TokenStorage`` protocol over one server's record, plus orbmcp's extras.

    ``corrupt_backup`` is set when a file that did not parse was moved aside to
    ``<hash>.json.corrupt-<ts>``; that server then reads as logged out, and no other is touched.
    """

    def __init__(self, global_dir: Path, cfg: ServerConfig) -> None:
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

    # -- raw record ------------------------------------------------------------------------------

    def load(self) -> StoredRecord | None:
        """The record for this URL (and the bound issuer, once known), else None."""
        raw = read_private_file(self.path)
        if raw is None:
            return None
        try:
            record = parse_record(raw)
        except CorruptRecord as exc:
            self._quarantine(str(exc))
            return None
        if record.server_url != self.server_url:
            # Planted or copied from another server: never hand it out (R-G7).
            return None
        return record

    def _quarantine(self, why: str) -> None:
        """Move the unreadable file aside (0600), redacted: a half-written record still holds tokens."""
        backup = self.path.with_name(f"{self.path.name}.corrupt-{time.time_ns() // 1_000_000}")
        try:
            raw = read_private_file(self.path) or b""
            text = raw.decode("utf-8", errors="backslashreplace")
            # Keys and structure help diagnose; long token-like runs are credentials whatever their key.
            masked = _TOKENISH_RE.sub("<redacted>", _redacted(text))
            atomic_write(backup, masked.encode())
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
        data = json.dumps(record.to_json(), indent=1, sort_keys=True).encode()
        try:
            ensure_private_dir(self.dir)
            self._remove_stale_temps()
            atomic_write(self.path, data)
        except OSError as exc:
            raise AuthError(
                f"could not save credentials for server '{self.server}': "
                f"{exc.strerror or type(exc).__name__}",
                server=self.server,
                hint=f"check permissions and free space in {self.dir}",
            ) from None

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
            if pid != os.getpid() and not _pid_alive(pid):
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
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            return
        self._save(record)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
