"""A disk record of live server process groups, so the next run can reap what a crashed run left.

Each spawned group is one small JSON file under ``<state_dir>/procs/`` (a private file written
by ``orbmcp.fs``) naming the server, the leader's pid, pgid and start time, and the owning
orbmcp process with its start time. ``reap_stale()`` (run at start-up) handles records whose
owner is gone and kills only processes it can prove belong to the recorded group: a pid whose
start time differs from the record is a recycled pid and is never signalled.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from orbmcp import fs, processes
from orbmcp.core.processes import RECORDS_DIR
from orbmcp.core.processes.proctree import escaped_descendants, still_running, tagged_processes
from orbmcp.log import get_logger

_log = get_logger(__name__)

_RECORD_VERSION = 1
# Start times come from /proc tick counts turned into floats; allow for float noise only.
_START_TIME_TOLERANCE = 0.01
_POLL_INTERVAL = 0.02
# A temp file this old is a write that a crash interrupted.
_STALE_TEMP_SECONDS = 3600.0
# ``fs.atomic_write``'s temp files beside a target: ``.<name>.tmp-<pid>-<random>``.
_TEMP_GLOB = ".*.tmp-*"
# A record is about 200 bytes; anything far larger is not one.
_MAX_RECORD_BYTES = 64 * 1024


@dataclass(frozen=True)
class GroupRecord:
    server: str
    pid: int
    pgid: int
    create_time: float
    owner_pid: int
    owner_create_time: float
    tag: str | None = None  # the server's tag (``proctree``): finds descendants outside its tree
    start_ticks: int | None = None  # the leader's start in /proc clock ticks, for the tag scan

    def to_json(self) -> dict[str, object]:
        return {
            "version": _RECORD_VERSION,
            "server": self.server,
            "pid": self.pid,
            "pgid": self.pgid,
            "create_time": self.create_time,
            "owner_pid": self.owner_pid,
            "owner_create_time": self.owner_create_time,
            "tag": self.tag,
            "start_ticks": self.start_ticks,
        }

    @classmethod
    def from_json(cls, data: object) -> GroupRecord:
        """Parse a record; ``ValueError`` if it is not one this version wrote."""
        if not isinstance(data, dict) or data.get("version") != _RECORD_VERSION:
            raise ValueError("not a version 1 process record")
        server, pid, pgid = data.get("server"), data.get("pid"), data.get("pgid")
        create_time, owner_pid = data.get("create_time"), data.get("owner_pid")
        owner_create_time = data.get("owner_create_time")
        if not (
            isinstance(server, str)
            and _is_pid(pid)
            and _is_pid(pgid)
            and _is_pid(owner_pid)
            and isinstance(create_time, int | float)
            and isinstance(owner_create_time, int | float)
        ):
            raise ValueError("malformed process record")
        assert isinstance(pid, int) and isinstance(pgid, int) and isinstance(owner_pid, int)
        tag, ticks = data.get("tag"), data.get("start_ticks")  # absent in records of older runs
        tag = tag if isinstance(tag, str) and tag else None
        ticks = ticks if isinstance(ticks, int) and not isinstance(ticks, bool) and ticks >= 0 else None
        return cls(server, pid, pgid, float(create_time), owner_pid, float(owner_create_time), tag, ticks)


def _is_pid(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 1


@dataclass(frozen=True)
class ReapedGroup:
    """A stale record that ``reap_stale`` handled; ``killed`` lists the pids it signalled."""

    server: str
    pgid: int
    leader_pid: int
    killed: tuple[int, ...]


class GroupRegistry:
    def __init__(self, state_dir: Path) -> None:
        self.directory = state_dir / RECORDS_DIR
        self._owner: tuple[int, float] | None = None

    def add(
        self, server: str, pid: int, pgid: int, *, tag: str | None = None, start_ticks: int | None = None
    ) -> Path | None:
        """Record a freshly spawned group. Best effort: a failure is logged, never raised,
        because the record is only a backstop for a crash."""
        try:
            create_time = psutil.Process(pid).create_time()
            owner_pid, owner_create_time = self._owner_identity()
            return self.write_record(
                GroupRecord(server, pid, pgid, create_time, owner_pid, owner_create_time, tag, start_ticks)
            )
        except (OSError, psutil.Error) as exc:
            _log.warning("could not record process group %d of server %r: %s", pgid, server, exc)
            return None

    def write_record(self, record: GroupRecord) -> Path:
        """Write one record: a private file (0600 in a 0700 directory), replaced atomically.

        Not fsynced: the processes it names do not survive the machine restarting either, and
        ``spawn`` writes it on the event loop."""
        path = self.directory / f"{record.owner_pid}-{record.pid}.json"
        fs.atomic_write(path, json.dumps(record.to_json()), durable=False)
        return path

    def remove(self, path: Path) -> None:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            _log.warning("could not remove process record %s: %s", path, exc)

    def records(self) -> list[tuple[Path, GroupRecord]]:
        """Every readable record; unreadable or malformed files are deleted."""
        try:
            paths = sorted(self.directory.glob("*.json"))
        except OSError:
            return []
        found: list[tuple[Path, GroupRecord]] = []
        for path in paths:
            try:
                raw = fs.read_private(path, max_bytes=_MAX_RECORD_BYTES)
                if raw is None:
                    continue  # its owner removed it meanwhile
                record = GroupRecord.from_json(json.loads(raw))
            except (OSError, ValueError) as exc:
                _log.warning("dropping unreadable process record %s: %s", path.name, exc)
                self.remove(path)
                continue
            found.append((path, record))
        return found

    def reap_stale(self, *, term_grace: float = 1.0, kill_grace: float = 1.0) -> list[ReapedGroup]:
        """Kill the groups of dead owners (SIGTERM, ``term_grace``, SIGKILL) and drop their records.

        Blocks for at most ``term_grace + kill_grace``, and only when something is left to kill;
        records of live owners (this process, a daemon, a concurrent CLI run) are left alone.
        """
        stale: list[tuple[Path, GroupRecord, list[psutil.Process]]] = []
        for path, record in self.records():
            if _is_running(record.owner_pid, record.owner_create_time):
                continue
            stale.append((path, record, _verified_members(record)))
        targets = {proc.pid: proc for _, _, members in stale for proc in members}
        _terminate(list(targets.values()), term_grace, kill_grace)
        reaped: list[ReapedGroup] = []
        for path, record, members in stale:
            self.remove(path)
            killed = tuple(sorted(proc.pid for proc in members))
            reaped.append(ReapedGroup(record.server, record.pgid, record.pid, killed))
            if killed:
                _log.warning(
                    "reaped %d leftover process(es) of server %r (group %d) from a run that died",
                    len(killed),
                    record.server,
                    record.pgid,
                )
        self._remove_stale_temp_files()
        return reaped

    def _owner_identity(self) -> tuple[int, float]:
        if self._owner is None:
            self._owner = (os.getpid(), psutil.Process().create_time())
        return self._owner

    def _remove_stale_temp_files(self) -> None:
        cutoff = time.time() - _STALE_TEMP_SECONDS
        with contextlib.suppress(OSError):
            for temp in self.directory.glob(_TEMP_GLOB):
                with contextlib.suppress(OSError):
                    if temp.stat().st_mtime < cutoff:
                        temp.unlink()


def _same_start(actual: float, recorded: float) -> bool:
    return abs(actual - recorded) <= _START_TIME_TOLERANCE


def _is_running(pid: int, create_time: float) -> bool:
    """Whether ``pid`` is still the process that started at ``create_time`` and not a zombie."""
    return processes.same_process(pid, create_time, tolerance_s=_START_TIME_TOLERANCE)


def _verified_members(record: GroupRecord) -> list[psutil.Process]:
    """Running processes provably the recorded server's; empty if its pid was recycled.

    orbmcp spawns each server as a session leader, so pgid == sid == leader pid. If the leader
    still runs with the recorded start time, every process in its session or group is ours, and
    so is every descendant found by walking down from it (the ones that left with ``setsid``).
    If the leader is gone, a process qualifies only if it is in that session or group AND started
    no earlier than the leader did; if a different process now holds the leader's pid, the
    pid was recycled and nothing is touched. Either way, a process carrying the server's tag
    (``proctree``) that started after it is the server's descendant, wherever it went.
    """
    leader_started = processes.create_time(record.pid)  # None: gone
    if leader_started is not None and not _same_start(leader_started, record.create_time):
        return []  # the pid is another process's now
    leader_alive = leader_started is not None and processes.alive(record.pid)
    members = {proc.pid: proc for proc in _group_members(record)}
    outside: list[tuple[int, int]] = []
    if leader_alive:
        outside += escaped_descendants(record.pid, record.pgid)
    if record.tag is not None and record.start_ticks is not None:
        outside += tagged_processes(record.tag, record.start_ticks)
    for pid, ticks in outside:
        if pid not in members and pid != os.getpid() and still_running(pid, ticks):
            with contextlib.suppress(psutil.Error):
                members[pid] = psutil.Process(pid)  # psutil re-checks its start before a signal
    return list(members.values())


def _group_members(record: GroupRecord) -> list[psutil.Process]:
    """Running processes in the recorded group or session, started no earlier than its leader."""
    me, my_group, my_uid = os.getpid(), os.getpgrp(), os.getuid()
    members: list[psutil.Process] = []
    for proc in psutil.process_iter(["create_time", "status", "uids"]):
        info = proc.info
        if proc.pid == me or info["status"] in (None, psutil.STATUS_ZOMBIE):
            continue
        if info["create_time"] is None or info["create_time"] < record.create_time - _START_TIME_TOLERANCE:
            continue
        if info["uids"] is None or info["uids"].real != my_uid:
            continue
        try:
            pgid, sid = os.getpgid(proc.pid), os.getsid(proc.pid)
        except OSError:
            continue
        if pgid == my_group or record.pgid not in (pgid, sid):
            continue
        members.append(proc)
    return members


def _terminate(procs: list[psutil.Process], term_grace: float, kill_grace: float) -> None:
    # psutil re-checks each pid's start time before signalling, so a pid recycled since the
    # scan is never hit.
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    survivors = _wait_gone(procs, term_grace)
    for proc in survivors:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    for proc in _wait_gone(survivors, kill_grace):
        _log.warning("process %d survived SIGKILL; leaving it", proc.pid)


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    alive = procs
    while True:
        alive = [proc for proc in alive if processes.runs(proc)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(_POLL_INTERVAL)


__all__ = ["GroupRecord", "GroupRegistry", "ReapedGroup"]
