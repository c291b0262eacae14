"""A server's process tree as the kernel sees it: group liveness, descendants that left the
group, and signalling (what a process is, psutil or its /proc stat, is ``orbmcp.processes``'s).

Two ways find a descendant that left the server's process group (``setsid``, a "detached" helper):
walking the tree down from the leader, which finds it while its parent lives, and its *tag*: every
server starts with ``ORBMCP_SERVER_TAG=<random>`` in its environment, which its descendants
inherit, so one whose parent has exited (and which now belongs to init) is still recognisably the
server's. A process that replaced its environment at ``exec`` is out of the tag's reach.

Without procfs (macOS) the functions fall back to what plain POSIX calls can tell: ``killpg`` for
liveness, no escaped-descendant walk, no tags. Every signal tolerates a target that
is gone.
"""

from __future__ import annotations

import os
import secrets
import signal
from contextlib import suppress

import anyio

from orbmcp import environment
from orbmcp.log import get_logger, log_event
from orbmcp.processes import all_pids, descendants, environ_has, proc_state, running_state

_log = get_logger(__name__)

# How often a stop probes the leader and the group (the SDK's and VS Code's value).
GROUP_POLL_INTERVAL = 0.01
# After SIGKILL: how long to wait for the processes to vanish before abandoning them with a warning.
KILL_REAP_TIMEOUT = 2.0
# Bound on the processes walked when looking for descendants that left the group.
_MAX_TREE = 4096


def signal_group(pgid: int, sig: signal.Signals) -> None:
    # ESRCH: the group is gone. EPERM never proves that (macOS zombies, foreign-euid members):
    # the caller keeps polling and escalating.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def open_pidfd(pid: int) -> int:
    """A pidfd for ``pid`` (readable once it exits), or -1 where the platform has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


class GroupProbe:
    """Whether any member of a process group still runs; zombies do not count.

    A member that outlives its parent is reaped by init, and an init that never reaps (PID 1 in
    a container without ``--init``) leaves it a zombie that ``killpg(pgid, 0)`` still counts, so
    a stop would otherwise sit out every grace period. Where ``killpg`` says alive, /proc is
    scanned for a running member; the last one found is checked first next time, so a stop
    polling every 10 ms walks /proc only when a member it knew of has died.
    """

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self._known_member = pgid

    def alive(self) -> bool:
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        if self._is_running_member(self._known_member):
            return True
        if proc_state(os.getpid()) is None:
            return True  # no procfs (macOS): trust killpg
        for pid in all_pids():
            if self._is_running_member(pid):
                self._known_member = pid
                return True
        return False

    def _is_running_member(self, pid: int) -> bool:
        state = proc_state(pid)
        return running_state(state) and state is not None and state[1] == self.pgid


def escaped_descendants(leader: int, pgid: int) -> list[tuple[int, int]]:
    """Live descendants of ``leader`` that left process group ``pgid`` (``setsid``, ``setpgid``),
    as (pid, start ticks); [] where they cannot be read (no procfs)."""
    escaped: list[tuple[int, int]] = []
    for child in descendants(leader, limit=_MAX_TREE):
        state = proc_state(child)
        if running_state(state) and state is not None and state[1] != pgid:
            escaped.append((child, state[2]))
    return escaped


def new_tag() -> str:
    """A tag for one spawned server (see the module docstring)."""
    return secrets.token_hex(12)


def tagged_processes(
    tag: str, since_ticks: int, *, outside_group: int | None = None
) -> list[tuple[int, int]]:
    """Live processes of this user carrying ``tag`` in their environment and started no earlier
    than ``since_ticks`` (the server's own start), as (pid, start ticks); with ``outside_group``
    only those that left that process group. Only their stat is read for most processes; the
    environment only of those young enough to be the server's."""
    carried = f"{environment.SERVER_TAG}={tag}"
    found: list[tuple[int, int]] = []
    for pid in all_pids():
        state = proc_state(pid)
        if not running_state(state) or state is None or state[2] < since_ticks or state[1] == outside_group:
            continue
        if environ_has(pid, carried):  # another user's cannot be read: never counted
            found.append((pid, state[2]))
    return found


def still_running(pid: int, ticks: int) -> bool:
    """The same process (not a recycled pid) is alive and not a zombie."""
    state = proc_state(pid)
    return running_state(state) and state is not None and state[2] == ticks


async def stop_escaped(server: str, escaped: list[tuple[int, int]], term_grace: float) -> None:
    """Stop descendants that left the server's process group: a group kill misses them, and
    nothing the server started may outlive its stop. Start times guard against pid reuse."""
    for pid, _ in escaped:
        log_event(
            "process.escaped",
            level="warn",
            server=server,
            pid=pid,
            message=f"process {pid} of server {server} left its process group; stopping it too",
        )
    for sig, grace in ((signal.SIGTERM, term_grace), (signal.SIGKILL, KILL_REAP_TIMEOUT)):
        live = [(pid, ticks) for pid, ticks in escaped if still_running(pid, ticks)]
        for pid, _ in live:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = anyio.current_time() + grace
        while live and anyio.current_time() < deadline:
            await anyio.sleep(GROUP_POLL_INTERVAL)
            live = [(pid, ticks) for pid, ticks in live if still_running(pid, ticks)]
        if not live:
            return
        escaped = live
    _log.warning("server %r: %d escaped process(es) survived SIGKILL; abandoning them", server, len(escaped))


__all__ = [
    "GROUP_POLL_INTERVAL",
    "KILL_REAP_TIMEOUT",
    "GroupProbe",
    "escaped_descendants",
    "new_tag",
    "open_pidfd",
    "signal_group",
    "still_running",
    "stop_escaped",
    "tagged_processes",
]
