"""The opt-in OS keyring: with "tokenStore": "keyring" the secrets live in the keyring and nothing
secret in the file; same lock, URL and issuer binding; an unusable keyring falls back to the file
store with one warning; a lost keyring entry reads as logged out; a project cannot choose it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from mcp.shared.auth import OAuthToken

from orbmcp.auth import keyring_store
from orbmcp.auth.flow import authorize, logout
from orbmcp.auth.provider import build_auth
from orbmcp.auth.status import CREDENTIALS_STORED, MAY_BE_REQUIRED, auth_status
from orbmcp.auth.storage import AuthStore
from orbmcp.config.loader import load_config
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import OAuthTestServer, make_cfg, running_server
from tests.timeouts import HANG_GUARD_S

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


class MemoryKeyring(KeyringBackend):
    """A keyring backend holding its entries in this process (the OS one is not for tests)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.entries.pop((service, username), None)


@pytest.fixture
def vault(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    monkeypatch.setattr(keyring_store, "_warned", False)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


def cfg(srv: OAuthTestServer, store: str = "keyring") -> Any:
    return make_cfg(srv.mcp_url, credential_store=store)


async def login(srv: OAuthTestServer, home: Path, store: str = "keyring") -> HeadlessBrowser:
    ui = HeadlessBrowser()
    with anyio.fail_after(HANG_GUARD_S):
        await authorize(cfg(srv, store), home, reset=False, ui=ui, no_browser=False, timeout_s=10)
    return ui


async def call(srv: OAuthTestServer, home: Path) -> int:
    provider = build_auth(cfg(srv), home, interactive=False, ui=None)
    with anyio.fail_after(HANG_GUARD_S):
        async with httpx2.AsyncClient(auth=provider, timeout=10) as hc:
            response = await hc.post(
                srv.mcp_url, json=INIT, headers={"Accept": "application/json, text/event-stream"}
            )
    return response.status_code


async def test_secrets_live_in_the_keyring_and_nothing_secret_in_the_file(
    tmp_path: Path, vault: MemoryKeyring
) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        store = AuthStore(tmp_path, cfg(srv))
        on_disk = store.path.read_bytes()
        assert not [s for s in srv.minted if s.encode() in on_disk]
        assert json.loads(on_disk)["kept_in"] == "keyring"
        [(service, user)] = vault.entries
        assert (service, user) == ("orbmcp", store.path.name)
        assert any(s in vault.entries[(service, user)] for s in srv.minted)
        assert auth_status(cfg(srv), tmp_path) == CREDENTIALS_STORED  # read without the keyring
        assert await call(srv, tmp_path) == 200  # the stored token, from the keyring
        assert srv.count("/authorize") == 1
        with anyio.fail_after(HANG_GUARD_S):
            assert await logout(cfg(srv), tmp_path)
        assert vault.entries == {} and not store.path.exists()


async def test_a_lost_keyring_entry_reads_as_logged_out(tmp_path: Path, vault: MemoryKeyring) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        vault.entries.clear()
        store = AuthStore(tmp_path, cfg(srv))
        record = store.load()
        assert record is not None and record.tokens is None and record.client is None


async def test_an_unusable_keyring_falls_back_to_the_file_store_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setattr(keyring_store, "_warned", False)
    try:
        async with running_server() as srv:
            ui = await login(srv, tmp_path)
            on_disk = json.loads(AuthStore(tmp_path, cfg(srv)).path.read_text())
            assert on_disk["kept_in"] == "file" and on_disk["tokens"]["access_token"] in srv.minted
            assert await call(srv, tmp_path) == 200
    finally:
        keyring.set_keyring(previous)
    unavailable = [r for r in caplog.records if "OS keyring unavailable" in r.getMessage()]
    assert len(unavailable) == 1
    # ... and the person is told, on the front's notice line (the terminal's stderr), once.
    assert [n for n in ui.notices if "OS keyring unavailable" in n and "file store" in n] == [
        unavailable[0].getMessage()
    ]


def test_a_store_falling_back_tells_whoever_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setattr(keyring_store, "_warned", False)
    said: list[str] = []
    try:
        entry = make_cfg("https://mcp.example/mcp", credential_store="keyring")
        store = AuthStore(tmp_path, entry, notify=said.append)
        anyio.run(store.set_tokens, OAuthToken(access_token="a" * 20, token_type="Bearer"))
        assert json.loads(store.path.read_text())["kept_in"] == "file"
    finally:
        keyring.set_keyring(previous)
    assert len(said) == 1 and "OS keyring unavailable" in said[0]


async def test_switching_back_to_the_file_store_moves_the_secrets(
    tmp_path: Path, vault: MemoryKeyring
) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        file_store = AuthStore(tmp_path, cfg(srv, "file"))
        assert await file_store.get_tokens() is not None  # a keyring record is still read
        await file_store.set_tokens(await file_store.get_tokens())  # type: ignore[arg-type]
        assert json.loads(file_store.path.read_text())["kept_in"] == "file" and vault.entries == {}
        assert auth_status(cfg(srv, "file"), tmp_path) == CREDENTIALS_STORED
    assert auth_status(make_cfg("https://elsewhere.example/mcp"), tmp_path) == MAY_BE_REQUIRED


def test_the_setting_is_global_only(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home).mkdir()
    (project / ".orb").mkdir(parents=True)
    entry = {"url": "https://mcp.example/mcp", "auth": {"type": "oauth"}}
    (home / "mcp.json").write_text(
        json.dumps({"settings": {"tokenStore": "keyring"}, "mcpServers": {"a": entry}})
    )
    config = load_config(global_dir=home, project=project, cwd=project, environ={})
    assert config.servers["a"].auth is not None and config.servers["a"].auth.credential_store == "keyring"
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"a": entry}}))
    (project / ".orb" / "mcp.json").write_text(json.dumps({"settings": {"tokenStore": "keyring"}}))
    from orbmcp.config import trust

    trust.approve(home, project, trust.describe_project(project).digest)
    config = load_config(global_dir=home, project=project, cwd=project, environ={})
    assert config.servers["a"].auth is not None and config.servers["a"].auth.credential_store == "file"
    assert any('"tokenStore" is a global setting' in w.message for w in config.warnings)
