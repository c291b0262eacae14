"""Edge cases of the URL policy, the cross-process lock and the credential store."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from orbmcp.auth import lock as lock_mod
from orbmcp.auth.lock import AuthLock, LockHolder, holder_is_stale, process_create_time
from orbmcp.auth.record import CorruptRecord, canonical_server_url, expiry_from, parse_record
from orbmcp.auth.storage import AuthStore, ensure_auth_dir, read_credentials
from orbmcp.auth.urlpolicy import (
    check_browser_url,
    check_fetch_url,
    display_url,
    fetch_problem,
    host_class,
    is_loopback_url,
)
from orbmcp.config.model import ServerConfig
from orbmcp.errors import AuthError
from orbmcp.fs import atomic_write
from tests.auth.oauth_server import make_cfg

URL = "https://mcp.example.test/mcp"

# --- URL policy ------------------------------------------------------------------------------------


def test_ipv6_loopback_is_loopback_not_reserved() -> None:
    # ::1 lies inside the reserved ::/8; it must still count as this machine.
    assert host_class("::1") == "loopback" and host_class("[::1]") == "loopback"
    assert check_browser_url("http://[::1]:8123/authorize") == "http://[::1]:8123/authorize"
    assert fetch_problem("http://[::1]:9/token", "http://[::1]:8000/mcp") is None
    assert fetch_problem("http://[::1]:9/token", "https://mcp.example.com/mcp") == (
        "loopback addresses are fetched only for a loopback MCP server"
    )
    assert host_class("::") == "forbidden"


def test_host_class_of_hosts_a_resolver_would_not_accept() -> None:
    assert host_class("1.2.3.4.5") == "name"  # looks numeric, is no inet_aton address
    assert host_class("0x7f.1") == "loopback"
    assert host_class("[::ffff:10.0.0.1]") == "private"
    assert host_class("LOCALHOST.") == "loopback"


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://localhost:8080/cb", True),
        ("http://127.0.0.2/cb", True),
        ("http://[::1]:9/cb", True),
        ("https://example.com/", False),
        ("file:///etc/passwd", False),
        ("http://[::1/cb", False),  # not even a URL
    ],
)
def test_is_loopback_url(url: str, loopback: bool) -> None:
    assert is_loopback_url(url) is loopback


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[::1/cb", "it is not a valid URL"),
        ("https://example.com:99999/authorize", "it is not a valid URL"),
        ("https://ex%41mple.com/authorize", "the host contains percent-encoding"),
        ("https:///authorize", "it has no host"),
    ],
)
def test_browser_policy_rejects_malformed_urls(url: str, reason: str) -> None:
    with pytest.raises(AuthError) as caught:
        check_browser_url(url)
    assert caught.value.message.endswith(f": {reason}")
    assert caught.value.hint is not None and "unsafe" in caught.value.hint


def test_fetch_policy_on_malformed_urls() -> None:
    assert fetch_problem("https://[::1/token", URL) == "not a valid URL"
    assert fetch_problem("https://as.example.com:99999/token", URL) == "not a valid URL"
    assert (
        fetch_problem("https://user:pw@as.example.com/token", URL) == "URLs with credentials are not allowed"
    )
    # An unparsable server URL counts as a public one: only public https targets pass.
    assert fetch_problem("https://as.example.com/token", "http://[broken") is None
    assert fetch_problem("http://127.0.0.1/token", "http://[broken") is not None
    with pytest.raises(AuthError) as caught:
        check_fetch_url("http://169.254.169.254/latest", URL, server="gh")
    assert caught.value.server == "gh"
    assert "refusing to contact 'http://169.254.169.254/latest' during authorization" in caught.value.message


def test_display_url_falls_back_to_an_escaped_url() -> None:
    assert display_url("https://example.com/x") == "https://example.com/x"
    assert display_url("https://bücher.example:8443/x") == "https://xn--bcher-kva.example:8443/x"
    too_long = "https://" + "é" * 70 + ".example/x"  # an IDNA label longer than 63: not encodable
    shown = display_url(too_long)
    assert shown.isascii() and "\\xe9" in shown


# --- lock ----------------------------------------------------------------------------------------------


def test_process_create_time_of_no_process() -> None:
    assert process_create_time(2**22 + 12345) is None
    mine = process_create_time(os.getpid())
    assert mine is not None and mine <= time.time()


def test_stale_holder_rules() -> None:
    now = time.time()
    other_host = LockHolder(pid=2**22 + 1, create_time=None, heartbeat=now, host="another-machine")
    assert holder_is_stale(other_host, stale_after_s=90) is False  # its pid says nothing here
    assert holder_is_stale(LockHolder(2**22 + 1, None, now - 100, "another-machine"), stale_after_s=90)
    me = LockHolder(pid=os.getpid(), create_time=None, heartbeat=now, host=None)
    assert holder_is_stale(me, stale_after_s=90) is False
    recycled = LockHolder(pid=os.getpid(), create_time=1.0, heartbeat=now, host=None)
    assert holder_is_stale(recycled, stale_after_s=90) is True
    gone = LockHolder(pid=2**22 + 1, create_time=None, heartbeat=now, host=None)
    assert holder_is_stale(gone, stale_after_s=90) is True


async def test_lock_without_heartbeat_and_repeated_release(tmp_path: Path) -> None:
    path = tmp_path / "auth" / "x.json.lock"
    lock = AuthLock(path, server="s", heartbeat_s=0)
    assert lock.holder() is None  # no file yet
    assert not lock.held
    async with lock:
        assert lock.held and lock._beat is None
        holder = lock.holder()
        assert holder is not None and holder.pid == os.getpid() and holder.host == os.uname().nodename
    assert not lock.held
    lock.release()  # releasing twice is harmless
    lock._write_holder()  # and writes nothing once released
    assert path.read_bytes() == b""
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"


async def test_lock_path_that_is_a_directory_is_an_os_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json.lock"
    path.mkdir()
    with pytest.raises(IsADirectoryError):
        await AuthLock(path, server="s", wait_s=0.1).acquire()


async def test_auth_dir_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "mcp-auth").write_text("not a directory")
    with pytest.raises(AuthError) as caught:
        await AuthLock(tmp_path / "mcp-auth" / "x.json.lock", server="s", wait_s=0.1).acquire()
    assert caught.value.message == f"refusing to use {tmp_path / 'mcp-auth'}: not a directory"


async def test_lock_timeout_with_an_unreadable_holder_names_no_pid(tmp_path: Path) -> None:
    path = tmp_path / "x.json.lock"
    first = AuthLock(path, server="s", heartbeat_s=0)
    await first.acquire()
    try:
        path.write_text("not json")  # the holder's record is unreadable: nothing to reclaim
        with pytest.raises(AuthError) as caught:
            await AuthLock(path, server="s").acquire(wait_s=0.1)
        assert "waiting for the auth lock" in caught.value.message and "held by" not in caught.value.message
        assert caught.value.hint is not None and "end pid ?" in caught.value.hint
    finally:
        first.release()
    assert lock_mod.read_holder(os.open(os.devnull, os.O_RDONLY)) is None


# --- storage ---------------------------------------------------------------------------------------


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
