"""``orbmcp.fs``'s one lock and one private directory, with real processes."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from orbmcp import fs
from orbmcp.session.daemon_scope import UnsafeDirectory, make_private_dir

# Holds the lock of argv[1] (through orbmcp's one lock), says so, and waits for stdin to close.
HOLDER = """
import sys
from pathlib import Path
from orbmcp import fs
lock = fs.try_lock(Path(sys.argv[1]))
print("held" if lock is not None else "busy", flush=True)
sys.stdin.read()
"""


def _holder(lock_file: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_one_holder_at_a_time_across_processes_and_the_kernel_frees_a_dead_one(tmp_path: Path) -> None:
    lock_file = tmp_path / "state" / "x.lock"
    proc = _holder(lock_file)
    try:
        assert fs.try_lock(lock_file) is None
        with pytest.raises(fs.LockTimeout, match="another orbmcp holds"):
            with fs.locked(tmp_path / "state" / "x", timeout=0.05):
                pass
    finally:
        proc.kill()
        proc.wait(timeout=30)
    mine = fs.try_lock(lock_file)  # its holder died without releasing: the kernel did
    assert mine is not None
    mine.release()
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700
    assert stat.S_IMODE(lock_file.stat().st_mode) == 0o600


def test_the_holder_writes_through_on_acquired_and_a_contender_never_truncates(tmp_path: Path) -> None:
    lock_file = tmp_path / "y.lock"
    lock = fs.try_lock(lock_file, on_acquired=lambda fd: os.pwrite(fd, b"holder 1", 0))
    assert lock is not None
    assert fs.try_lock(lock_file) is None
    assert lock_file.read_bytes() == b"holder 1"
    lock.release()
    assert lock_file.exists()  # waiters keep contending on the same inode


def test_a_symlink_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("precious")
    (tmp_path / "z.lock").symlink_to(target)
    with pytest.raises(OSError) as caught:
        fs.try_lock(tmp_path / "z.lock")
    assert caught.value.errno == errno.ELOOP
    assert target.read_text() == "precious"


def test_private_dir_creates_tightens_and_refuses(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    fs.ensure_private_dir(deep)
    assert stat.S_IMODE(deep.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    deep.chmod(0o755)
    fs.ensure_private_dir(deep)
    assert stat.S_IMODE(deep.stat().st_mode) == 0o700
    (tmp_path / "link").symlink_to(deep)
    with pytest.raises(fs.UnsafePathError, match="symbolic link"):
        fs.ensure_private_dir(tmp_path / "link")
    (tmp_path / "file").write_text("")
    with pytest.raises(fs.UnsafePathError, match="not a directory"):
        fs.ensure_private_dir(tmp_path / "file")


def test_the_daemons_runtime_dir_is_made_private_and_a_loose_one_refused_not_repaired(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    make_private_dir(runtime)
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
    runtime.chmod(0o755)
    with pytest.raises(UnsafeDirectory):
        make_private_dir(runtime)
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o755
    (tmp_path / "link").symlink_to(runtime)
    with pytest.raises(UnsafeDirectory):
        make_private_dir(tmp_path / "link")


def test_open_private_writes_only_a_private_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "child.err"
    fd = fs.open_private(path)
    os.write(fd, b"one\n")
    os.close(fd)
    path.chmod(0o644)
    fd = fs.open_private(path, append=True)
    os.write(fd, b"two\n")
    os.close(fd)
    assert path.read_bytes() == b"one\ntwo\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # a looser mode is tightened
    os.close(fs.open_private(path))
    assert path.read_bytes() == b""  # without append: truncated
    target = tmp_path / "elsewhere"
    target.write_text("precious")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(fs.UnsafePathError, match="symbolic link"):
        fs.open_private(tmp_path / "link")
    assert target.read_text() == "precious"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError):  # fails at once (no reader): never hangs the writer
        fs.open_private(tmp_path / "fifo", append=True)
    with pytest.raises(fs.UnsafePathError, match="not a regular file"):
        fs.open_private(Path("/dev/null"))
