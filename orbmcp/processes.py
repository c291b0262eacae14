"""Asking about other processes, the one place: is a pid alive, is it still the same process (not a
recycled pid), what it started, what it carries in its environment, how much memory this one uses.

Everything goes through psutil, except the one thing psutil does not give: a process's group and
its start time in raw clock ticks (``proc_state``, read from ``/proc/<pid>/stat`` by hand). The
ticks are what orbmcp records for its servers (an integer, exact, comparable across processes and
runs without psutil's float rounding), and a stop polls a group every 10 ms with them.

psutil is imported on first use: the daemon client and completion never ask about a process.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import psutil

# A zombie (exited, not yet reaped) and a dead task are gone for every purpose of orbmcp's.
_DEAD_STATES = (b"Z", b"X")


def alive(pid: int) -> bool:
    """``pid`` runs: it exists and is not a zombie. A process of another user counts as alive."""
    import psutil

    if pid <= 0:
        return False
    try:
        process = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return False
    return runs(process)


def runs(process: psutil.Process) -> bool:
    """``process`` still runs: psutil finds the same process (its start time re-checked, so not a
    recycled pid) and it is not a zombie (exited, not yet reaped: an init that never reaps leaves
    those). A process of another user counts as running: it exists, whose it is does not matter."""
    import psutil

    try:
        return bool(process.is_running() and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def create_time(pid: int) -> float | None:
    """When ``pid`` started (seconds since the epoch), or None when it is gone or hidden."""
    import psutil

    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, ValueError):
        return None


def same_process(pid: int, started: float | None, *, tolerance_s: float = 1.0) -> bool:
    """``pid`` is alive and provably the process that started at ``started`` (not another one that
    got its number); with ``started`` None only liveness can be told."""
    if not alive(pid):
        return False
    if started is None:
        return True
    current = create_time(pid)
    return current is not None and abs(current - started) <= tolerance_s


def proc_state(pid: int) -> tuple[bytes, int, int] | None:
    """(state, process group, start time in clock ticks since boot) from ``/proc/<pid>/stat``, or
    None when it is unreadable (gone, or no procfs: macOS)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        # comm may hold spaces and parentheses: the fixed fields start after the last ')'.
        fields = stat[stat.rindex(b")") + 2 :].split()
        return fields[0], int(fields[2]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def running_state(state: tuple[bytes, int, int] | None) -> bool:
    """A ``proc_state`` answer of a process that still runs (not gone, not a zombie)."""
    return state is not None and state[0] not in _DEAD_STATES


def all_pids() -> list[int]:
    """Every process id on the machine ([] where they cannot be listed)."""
    import psutil

    try:
        return list(psutil.pids())
    except (psutil.Error, OSError):
        return []


def descendants(pid: int, *, limit: int) -> list[int]:
    """The process ids below ``pid`` (children, theirs, ...), at most ``limit``; [] when it is gone."""
    import psutil

    try:
        found = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    return [child.pid for child in found[:limit]]


def environ_has(pid: int, entry: str) -> bool:
    """``pid``'s environment holds ``entry`` (``NAME=value``). False for another user's process or
    one that is gone (its environment cannot be read)."""
    import psutil

    name, _, value = entry.partition("=")
    try:
        return psutil.Process(pid).environ().get(name) == value
    except (psutil.Error, OSError):
        return False


def own_rss_bytes() -> int | None:
    """This process's resident memory, or None where it cannot be read."""
    import psutil

    try:
        return int(psutil.Process(os.getpid()).memory_info().rss)
    except (psutil.Error, OSError):
        return None


__all__ = [
    "alive",
    "all_pids",
    "create_time",
    "descendants",
    "environ_has",
    "own_rss_bytes",
    "proc_state",
    "running_state",
    "runs",
    "same_process",
]
