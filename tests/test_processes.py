"""``orbmcp.processes``, the one place orbmcp asks about another process: with real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil

from orbmcp import processes

# A child that prints its own child's pid and then waits on stdin: a process tree to inspect.
_PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE,
                         start_new_session=True)
print(child.pid, flush=True)
sys.stdin.read()
child.stdin.close()
child.wait()
"""


@contextmanager
def _zombie() -> Iterator[int]:
    """A child that has exited and is not reaped yet (``waitid`` with ``WNOWAIT`` waits for the
    exit without reaping it, so no sleep or poll is needed)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    try:
        yield child.pid
    finally:
        child.wait(timeout=30)


def _reaped_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(child.stdout)


def test_this_process_is_alive_and_itself() -> None:
    assert processes.alive(os.getpid())
    started = processes.create_time(os.getpid())
    assert started is not None and started <= time.time()
    assert processes.same_process(os.getpid(), started)
    assert processes.same_process(os.getpid(), None)


def test_a_zombie_is_not_alive() -> None:
    with _zombie() as pid:
        assert processes.proc_state(pid) is not None  # it still has a pid and a /proc entry
        assert not processes.alive(pid)
        assert not processes.running_state(processes.proc_state(pid))
        assert not processes.same_process(pid, None)


def test_a_reaped_pid_is_gone() -> None:
    pid = _reaped_pid()
    assert not processes.alive(pid)
    assert processes.create_time(pid) is None
    assert processes.proc_state(pid) is None
    assert not processes.alive(0) and not processes.alive(-1)


def test_a_process_held_across_its_end_stops_running() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    held = psutil.Process(child.pid)
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    assert not processes.runs(held)  # a zombie
    child.wait(timeout=30)
    assert not processes.runs(held)  # reaped: psutil no longer finds it
    assert processes.runs(psutil.Process(os.getpid()))


def test_a_recycled_pid_is_not_the_same_process() -> None:
    started = processes.create_time(os.getpid())
    assert started is not None
    assert not processes.same_process(os.getpid(), started - 100)


def test_another_users_process_is_alive() -> None:
    # pid 1 belongs to root (or to the container's init): alive whatever psutil may read of it.
    assert processes.alive(1)


def test_group_descendants_and_environment_of_a_tree() -> None:
    env = {**os.environ, "ORBMCP_PROCESSES_TEST": "tag-1"}
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert parent.stdout is not None
        grandchild = int(parent.stdout.readline())
        state = processes.proc_state(grandchild)
        assert state is not None and processes.running_state(state)
        assert state[1] == grandchild  # a session leader: its own group
        assert state[1] != os.getpgid(parent.pid)
        assert grandchild in processes.descendants(parent.pid, limit=100)
        assert processes.descendants(parent.pid, limit=0) == []
        assert grandchild in processes.all_pids()
        assert processes.environ_has(grandchild, "ORBMCP_PROCESSES_TEST=tag-1")
        assert not processes.environ_has(grandchild, "ORBMCP_PROCESSES_TEST=tag-2")
    finally:
        assert parent.stdin is not None
        parent.stdin.close()
        parent.wait(timeout=30)
    assert processes.descendants(parent.pid, limit=100) == []
    assert not processes.environ_has(parent.pid, "ORBMCP_PROCESSES_TEST=tag-1")


def test_own_memory() -> None:
    rss = processes.own_rss_bytes()
    assert rss is not None and rss > 1 << 20
