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

from orbmcp.auth.record import canonical_server_url, record_path, server_hash
from orbmcp.auth.status import auth_status
from orbmcp.auth.storage import AuthStore
from orbmcp.errors import AuthError
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
    assert auth_status(make_cfg(URL), tmp_path / "home") == "corrupt state file backed up (re-auth required)"

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
