"""The per-server credential file: modes, atomicity, symlinks, corruption, URL and issuer binding."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from orbmcp.auth.record import (
    CorruptRecord,
    canonical_server_url,
    expiry_from,
    parse_record,
    record_path,
    server_hash,
)
from orbmcp.auth.status import auth_status
from orbmcp.auth.storage import AuthStore, ensure_auth_dir, read_credentials
from orbmcp.config.model import ServerConfig
from orbmcp.errors import AuthError
from orbmcp.fs import atomic_write
from tests.auth.oauth_server import make_cfg

URL = "https://mcp.example.com/mcp"
AT = "at-" + "k3Xv9QpLw2" * 4
RT = "rt-" + "Zm8NbT4cYq" * 4


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)


@pytest.fixture
def umask000() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def store_for(home: Path, url: str = URL, name: str = "srv") -> AuthStore:
    return AuthStore(home, make_cfg(url, name=name))


async def save_tokens(store: AuthStore, **kw: object) -> None:
    body: dict[str, object] = {"access_token": AT, "refresh_token": RT, "expires_in": 3600, **kw}
    await store.set_tokens(OAuthToken.model_validate(body))


@pytest.mark.parametrize("mask", [0o000, 0o022])
async def test_modes_from_creation_and_no_temp_left(tmp_path: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        store = store_for(tmp_path)
        await save_tokens(store)
        await store.set_client_info(OAuthClientInformationFull(client_id="c1"))
    finally:
        os.umask(old)
    assert mode(store.dir) == 0o700 and mode(store.path) == 0o600
    assert sorted(p.name for p in store.dir.iterdir()) == [store.path.name]


async def test_looser_modes_are_tightened(tmp_path: Path, umask000: None) -> None:
    store = store_for(tmp_path)
    await save_tokens(store)
    os.chmod(store.path, 0o644)
    os.chmod(store.dir, 0o755)
    assert (await store.get_tokens()) is not None
    assert mode(store.path) == 0o600
    await save_tokens(store)
    assert mode(store.dir) == 0o700 and mode(store.path) == 0o600


async def test_the_status_view_tightens_a_loose_credential_file(tmp_path: Path, umask000: None) -> None:
    store = store_for(tmp_path)
    await save_tokens(store)
    os.chmod(store.path, 0o644)
    assert auth_status(make_cfg(URL), tmp_path) == "credentials stored"
    assert mode(store.path) == 0o600


async def test_absolute_expiry_is_kept(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    before = time.time()
    await save_tokens(store, expires_in="3600")  # a string, as some servers send it
    expires_at = store.expires_at()
    assert expires_at is not None and before + 3600 <= expires_at <= time.time() + 3600
    await save_tokens(store, expires_in=-5)
    assert (store.expires_at() or 0) < time.time()
    await save_tokens(store, expires_in=None)
    assert store.expires_at() is None
    token = await store.get_tokens()
    assert token is not None and token.access_token == AT and token.refresh_token == RT


def test_canonical_url_and_hash() -> None:
    assert (
        canonical_server_url("HTTPS://User:pw@MCP.Example.COM:443/mcp#frag") == "https://mcp.example.com/mcp"
    )
    assert canonical_server_url("http://127.0.0.1:8080/mcp?x=1") == "http://127.0.0.1:8080/mcp?x=1"
    assert server_hash("https://mcp.example.com:443/mcp") == server_hash(URL)
    assert server_hash(URL) != server_hash("https://mcp.example.com/other")


async def test_record_is_bound_to_its_url(tmp_path: Path) -> None:
    a = store_for(tmp_path, URL, "a")
    b = store_for(tmp_path, "https://other.example/mcp", "b")
    await save_tokens(a)
    b.dir.mkdir(parents=True, exist_ok=True)
    b.path.write_bytes(a.path.read_bytes())  # planted copy of a's record at b's path
    assert await b.get_tokens() is None and await b.get_client_info() is None
    assert (
        auth_status(make_cfg("https://other.example/mcp", name="b"), tmp_path)
        == "authorization may be required"
    )


async def test_record_is_bound_to_its_issuer(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    store.bind_issuer("https://as-one.example")
    await save_tokens(store)
    await store.set_client_info(OAuthClientInformationFull(client_id="c1", issuer="https://as-one.example"))
    other = store_for(tmp_path)
    assert other.bind_issuer("https://as-two.example") is False
    assert await other.get_tokens() is None and await other.get_client_info() is None
    assert other.expires_at() is None and other.discovery() == {}
    same = store_for(tmp_path)
    assert same.bind_issuer("https://as-one.example/") is True  # root issuer, trailing slash
    assert await same.get_tokens() is not None and await same.get_client_info() is not None


@pytest.mark.parametrize(
    "content",
    [
        b'{"version": 1, "server_url": "https://mcp.example.com/mcp", "tokens": {"access_token": "at-',
        b"\x00\xff\xfe garbage",
        b"[1, 2, 3]",
    ],
)
async def test_corrupt_file_is_quarantined_for_that_server_only(tmp_path: Path, content: bytes) -> None:
    other = store_for(tmp_path, "https://other.example/mcp", "other")
    await save_tokens(other)
    store = store_for(tmp_path)
    store.dir.mkdir(parents=True, exist_ok=True)
    store.path.write_bytes(content + AT.encode())
    os.chmod(store.path, 0o644)
    assert await store.get_tokens() is None
    backup = store.corrupt_backup
    assert backup is not None and backup.name.startswith(store.path.name + ".corrupt-")
    assert mode(backup) == 0o600 and not store.path.exists()
    assert AT.encode() not in backup.read_bytes()  # the backup is redacted
    assert auth_status(make_cfg(URL), tmp_path) == "corrupt state file backed up (re-auth required)"
    assert auth_status(make_cfg("https://other.example/mcp", name="other"), tmp_path) == "credentials stored"
    assert await other.get_tokens() is not None
    os.utime(backup, (time.time() - 5, time.time() - 5))  # the backup predates the new record
    await save_tokens(store)  # re-authorized
    assert auth_status(make_cfg(URL), tmp_path) == "credentials stored"


async def test_wrong_shape_tokens_are_quarantined(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    store.dir.mkdir(parents=True)
    body = {"version": 1, "server_url": canonical_server_url(URL), "tokens": {"access_token": 5}}
    store.path.write_text(json.dumps(body))
    assert await store.get_tokens() is None and store.corrupt_backup is not None


async def test_symlinks_are_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    store = store_for(tmp_path / "home")
    store.dir.mkdir(parents=True)
    store.path.symlink_to(victim)
    with pytest.raises(AuthError, match="symbolic link"):
        await store.get_tokens()
    with pytest.raises(AuthError, match="symbolic link"):
        await save_tokens(store)
    assert victim.read_text() == "precious"
    assert auth_status(make_cfg(URL), tmp_path / "home") == "unusable credential file (re-auth required)"

    linked_home = tmp_path / "linked"
    (linked_home).mkdir()
    (linked_home / "mcp-auth").symlink_to(tmp_path)
    with pytest.raises(AuthError, match="symbolic link"):
        await save_tokens(store_for(linked_home))


async def test_stale_temp_files_are_removed(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    await save_tokens(store)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_tmp = store.dir / f".{store.path.name}.tmp-{dead.stdout.strip()}-abcdef"
    live_tmp = store.dir / f".{store.path.name}.tmp-{os.getppid()}-abcdef"
    dead_tmp.write_text("half")
    live_tmp.write_text("in progress")
    await save_tokens(store)
    assert not dead_tmp.exists() and live_tmp.exists()


async def test_a_temp_file_of_an_exited_unreaped_writer_is_removed(tmp_path: Path) -> None:
    # A writer that exited is gone even while its parent has not reaped it yet (a zombie):
    # ``kill(pid, 0)`` still succeeds on it, so the temp file used to stay forever.
    store = store_for(tmp_path)
    await save_tokens(store)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped
    try:
        zombie_tmp = store.dir / f".{store.path.name}.tmp-{child.pid}-abcdef"
        zombie_tmp.write_text("half")
        await save_tokens(store)
        assert not zombie_tmp.exists()
    finally:
        child.wait(timeout=30)


async def test_clear_and_status(tmp_path: Path) -> None:
    cfg = make_cfg(URL)
    assert auth_status(cfg, tmp_path) == "authorization may be required"
    assert (
        auth_status(make_cfg(URL).__class__(name="x", transport="stdio", command="x"), tmp_path)
        == "not configured"
    )
    store = store_for(tmp_path)
    await save_tokens(store)
    await store.set_client_info(OAuthClientInformationFull(client_id="c1"))
    assert auth_status(cfg, tmp_path) == "credentials stored"
    store.clear(tokens=True, client=False)
    assert await store.get_tokens() is None and await store.get_client_info() is not None
    assert auth_status(cfg, tmp_path) == "authorization may be required"
    await save_tokens(store, expires_in=-10, refresh_token=None)
    record = store.load()
    assert record is not None and record.tokens is not None
    record.tokens.pop("refresh_token", None)
    store._save(record)
    assert auth_status(cfg, tmp_path) == "authorization may be required"  # expired, nothing to refresh with
    store.clear()
    assert not store.path.exists() and not record_path(tmp_path, URL).exists()


def test_status_path_imports_no_sdk() -> None:
    """Status views and the auth commands' light paths must not pay for mcp/httpx2 (or typer/rich)."""
    code = (
        "import sys, orbmcp.auth.status, orbmcp.auth.storage, orbmcp.auth.flow, orbmcp.auth.lock, "
        "orbmcp.auth.urlpolicy, orbmcp.auth.callback\n"
        "heavy = [m for m in ('mcp', 'mcp_types', 'httpx2', 'pydantic', 'typer', 'rich') if m in sys.modules]\n"
        "print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_canonical_server_url_forms() -> None:
    assert canonical_server_url("HTTP://[::1]:8080/mcp#frag") == "http://[::1]:8080/mcp"
    assert canonical_server_url(" https://User:pw@Example.COM:443/mcp?x=1 ") == "https://example.com/mcp?x=1"
    assert canonical_server_url("https://example.com:99999/mcp") == "https://example.com/mcp"


def test_private_dir_and_file_refusals(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(AuthError, match="not a directory"):
        ensure_auth_dir(a_file)
    (tmp_path / "target").mkdir()
    os.symlink(tmp_path / "target", tmp_path / "link")
    with pytest.raises(AuthError, match="symbolic link"):
        ensure_auth_dir(tmp_path / "link")
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    ensure_auth_dir(loose)
    assert oct(loose.stat().st_mode & 0o777) == "0o700"

    with pytest.raises(AuthError, match="not a regular file"):
        read_credentials(loose)
    with pytest.raises(AuthError, match=r"cannot read .*: Not a directory"):
        read_credentials(a_file / "record.json")


def test_failed_atomic_write_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    target.mkdir()
    (target / "occupied").write_text("x")
    with pytest.raises(OSError):
        atomic_write(target, b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ({"version": 2, "server_url": URL}, "unexpected shape or version"),
        ({"version": 1}, "no server_url"),
        ({"version": 1, "server_url": URL, "issuer": 7}, "issuer is not a string"),
        ({"version": 1, "server_url": URL, "client": {"secret": "x"}}, "client without client_id"),
        ({"version": 1, "server_url": URL, "tokens": {"token": "x"}}, "tokens without access_token"),
        ({"version": 1, "server_url": URL, "discovery": ["x"]}, "bad discovery or scope"),
        ({"version": 1, "server_url": URL, "required_scope": 3}, "bad discovery or scope"),
    ],
)
def test_parse_record_names_what_is_wrong(record: dict[str, object], why: str) -> None:
    with pytest.raises(CorruptRecord, match=why):
        parse_record(json.dumps(record).encode())


def test_expiry_from() -> None:
    assert expiry_from(60, 100.0) == 160.0
    assert expiry_from("60", 100.0) == 160.0
    assert expiry_from(None, 100.0) is None
    assert expiry_from("soon", 100.0) is None


def test_store_needs_a_url() -> None:
    with pytest.raises(AuthError, match="server 'local' has no URL; OAuth applies to HTTP servers only"):
        AuthStore(Path("/nonexistent"), ServerConfig(name="local", transport="stdio", command="x"))


async def test_records_the_sdk_cannot_use_are_quarantined(tmp_path: Path) -> None:
    store = AuthStore(tmp_path, make_cfg(URL))
    record = store._current()
    record.tokens = {"access_token": "at-x", "token_type": "MAC"}
    store._save(record)
    assert await store.get_tokens() is None
    assert store.corrupt_backup is not None and not store.path.exists()

    store = AuthStore(tmp_path, make_cfg(URL))
    record = store._current()
    record.client = {"client_id": "c1", "redirect_uris": "not a list"}
    store._save(record)
    assert await store.get_client_info() is None
    assert store.corrupt_backup is not None and not store.path.exists()


def test_issuer_binding_discovery_and_partial_clear(tmp_path: Path) -> None:
    store = AuthStore(tmp_path, make_cfg(URL))
    assert store.expected_issuer is None
    assert store.bind_issuer("https://as.example.test") is True
    assert store.expected_issuer == "https://as.example.test"
    store.save_discovery({"token_endpoint": "https://as.example.test/token"}, None)
    record = store.load()
    assert record is not None and record.issuer is None  # no issuer given: none recorded
    assert store.discovery() == {"token_endpoint": "https://as.example.test/token"}

    record.tokens = {"access_token": "at-1"}
    record.client = {"client_id": "c1"}
    store._save(record)
    store.set_required_scope("admin")
    store.clear(tokens=False, client=True)  # forget the registration only
    kept = store.load()
    assert kept is not None and kept.client is None and kept.discovery == {}
    assert kept.tokens == {"access_token": "at-1"} and kept.required_scope == "admin"
    store.clear(tokens=True, client=False)
    assert not store.path.exists()
    store.clear()  # nothing stored: nothing to do
