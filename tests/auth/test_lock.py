"""The cross-process auth lock, with real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from orbmcp.auth import lock as lock_mod
from orbmcp.auth.lock import AuthLock, LockHolder, holder_is_stale
from orbmcp.auth.storage import AuthStore
from orbmcp.errors import AuthError
from orbmcp.processes import create_time as process_create_time
from tests.auth.oauth_server import ASOptions, make_cfg, running_server
from tests.timeouts import HANG_GUARD_S

REPO = Path(__file__).resolve().parents[2]

HOLDER = """
import fcntl, json, os, sys, time
path, content = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, content.replace("SELF", str(os.getpid())).encode())
print("locked", flush=True)
sys.stdin.readline()
"""


async def read_line(proc: Process) -> str:
    assert proc.stdout is not None
    buf = ""
    with anyio.fail_after(HANG_GUARD_S):
        async for chunk in TextReceiveStream(proc.stdout):
            buf += chunk
            if "\n" in buf:
                return buf.split("\n", 1)[0]
    raise AssertionError(f"process ended without a line: {buf!r}")


@asynccontextmanager
async def holder(path: Path, content: dict[str, object]) -> AsyncIterator[Process]:
    """A separate process holding the kernel lock on ``path`` with the given holder record."""
    proc = await anyio.open_process([sys.executable, "-c", HOLDER, str(path), json.dumps(content)])
    try:
        assert await read_line(proc) == "locked"
        yield proc
    finally:
        with anyio.CancelScope(shield=True):
            if proc.returncode is None:
                proc.kill()
            await proc.aclose()


def dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def lock_at(tmp_path: Path, **kw: float) -> AuthLock:
    d = tmp_path / "mcp-auth"
    d.mkdir(mode=0o700, exist_ok=True)
    return AuthLock(d / "x.json.lock", server="srv", **kw)


async def test_contention_times_out_naming_lock_and_holder_then_kill_frees_it(tmp_path: Path) -> None:
    lock = lock_at(tmp_path)
    fresh = {"pid": "SELF", "create_time": None, "heartbeat": time.time()}
    async with holder(lock.path, fresh) as proc:
        # A live holder with a fresh heartbeat is never reclaimed.
        with pytest.raises(AuthError) as info:
            await lock.acquire(wait_s=0.5)
        assert str(lock.path) in info.value.message and f"pid {proc.pid}" in info.value.message
        proc.kill()
        with anyio.fail_after(HANG_GUARD_S):
            await proc.wait()
        # The kernel released the dead holder's lock: acquired although the holder's heartbeat
        # is fresh, which rules out the stale-holder reclaim (that needs a heartbeat 90 s old).
        await lock.acquire(wait_s=5)
        holder_now = lock.holder()
        assert holder_now is not None and holder_now.pid == os.getpid()
        assert holder_now.create_time == process_create_time(os.getpid())
        lock.release()
    assert oct(os.stat(lock.path).st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("case", ["stale-heartbeat", "dead-pid", "recycled-pid"])
async def test_stale_holders_are_reclaimed(tmp_path: Path, case: str) -> None:
    lock = lock_at(tmp_path)
    now = time.time()
    content: dict[str, object] = {
        "stale-heartbeat": {"pid": "SELF", "create_time": None, "heartbeat": now - 91},
        "dead-pid": {"pid": dead_pid(), "create_time": None, "heartbeat": now},
        # Our own pid, alive, but with another start time: a recycled pid.
        "recycled-pid": {"pid": os.getpid(), "create_time": 12345.0, "heartbeat": now},
    }[case]
    async with holder(lock.path, content):
        with anyio.fail_after(HANG_GUARD_S):
            await lock.acquire(wait_s=5)
        try:
            current = lock.holder()
            assert current is not None and current.pid == os.getpid()
        finally:
            lock.release()


async def test_heartbeat_is_refreshed_while_held(tmp_path: Path) -> None:
    lock = lock_at(tmp_path, heartbeat_s=0.05)
    async with lock:
        first = lock.holder()
        assert first is not None
        with anyio.fail_after(HANG_GUARD_S):
            while (now := lock.holder()) is None or now.heartbeat <= first.heartbeat:
                await anyio.sleep(0.02)
    assert lock.path.exists() and lock.holder() is None  # released: the file stays, content cleared


async def test_symlinked_lock_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    lock = lock_at(tmp_path)
    lock.path.symlink_to(victim)
    with pytest.raises(AuthError, match="symbolic link"):
        await lock.acquire(wait_s=1)
    assert victim.read_text() == "precious"


CLIENT = """
import json, sys
from pathlib import Path
import anyio, httpx2
from orbmcp.auth.provider import build_auth
from tests.auth.oauth_server import make_cfg

async def main() -> None:
    home, url = Path(sys.argv[1]), sys.argv[2]
    provider = build_auth(make_cfg(url), home, interactive=False, ui=None)
    print("ready", flush=True)
    sys.stdin.readline()
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    async with httpx2.AsyncClient(auth=provider, timeout=20) as hc:
        r = await hc.post(url, json=body, headers={"Accept": "application/json, text/event-stream"})
    print(json.dumps({"status": r.status_code, "refreshes": provider.refreshes}), flush=True)

anyio.run(main)
"""


async def test_two_processes_refresh_once(tmp_path: Path) -> None:
    from orbmcp.auth.flow import authorize
    from tests.auth.browser import HeadlessBrowser

    async with running_server(ASOptions(rotate_refresh=True, refresh_delay_s=0.5)) as srv:
        cfg = make_cfg(srv.mcp_url)
        with anyio.fail_after(HANG_GUARD_S):
            await authorize(cfg, tmp_path, reset=False, ui=HeadlessBrowser(), no_browser=False, timeout_s=10)
        store = AuthStore(tmp_path, cfg)
        record = store.load()
        assert record is not None and record.tokens is not None
        record.tokens["expires_at"] = 1.0
        store._save(record)
        srv.expire_all_access_tokens()  # only a refreshed token will do
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        procs = [
            await anyio.open_process(
                [sys.executable, "-c", CLIENT, str(tmp_path), srv.mcp_url], cwd=REPO, env=env
            )
            for _ in range(2)
        ]
        try:
            for proc in procs:
                assert await read_line(proc) == "ready"
            for proc in procs:
                assert proc.stdin is not None
                await proc.stdin.send(b"go\n")
            results = [json.loads(await read_line(proc)) for proc in procs]
        finally:
            for proc in procs:
                with anyio.CancelScope(shield=True):
                    if proc.returncode is None:
                        proc.kill()
                    await proc.aclose()
        refreshes = srv.token_requests("refresh_token")
    assert [r["status"] for r in results] == [200, 200]
    assert sorted(r["refreshes"] for r in results) == [0, 1]
    assert len(refreshes) == 1  # the loser re-read the store after acquiring the lock
    assert srv.count("/token", grant_type="refresh_token") == 1


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
