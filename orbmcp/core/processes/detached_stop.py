"""Stopping a one-shot command's servers after the command has exited.

A one-shot shell command has printed its result by the time its servers stop, and the stop
(stdin closed, a grace period, SIGTERM to the group, another, SIGKILL) is nothing the person
waits for. So the orbmcp program hands its still-running server groups to a detached child: a
new session, no terminal, none of the caller's pipes (a caller reading orbmcp's stdout sees EOF
when orbmcp exits). The child waits until orbmcp has exited, then does the same stop a session
does, escaped descendants included, and removes each group's record from the registry. The
record stays until then: should the child die too, the next run's ``reap_stale`` finishes the
job (its owner is gone).

Only the orbmcp program itself hands off (never an embedder's process, a REPL or the daemon):
the server processes are its children and are adopted by init when it exits.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import anyio

from orbmcp import log
from orbmcp.core.processes.proctree import (
    KILL_REAP_TIMEOUT,
    GroupProbe,
    escaped_descendants,
    signal_group,
    still_running,
    stop_escaped,
    tagged_processes,
)
from orbmcp.log import log_event

# How long the child waits for the orbmcp process to exit before it starts the stop anyway.
_PARENT_EXIT_WAIT_S = 10.0
_POLL_S = 0.01


@dataclass(frozen=True)
class HandedOff:
    """A server group still running at exit: what the detached stop needs to finish it."""

    server: str
    pgid: int
    escaped: list[tuple[int, int]] = field(default_factory=list)  # (pid, start ticks)
    record: str | None = None  # the registry record to remove once the group is gone
    tag: str | None = None  # the server's ``ORBMCP_SERVER_TAG`` (``core.processes.proctree``)
    start_ticks: int = 0  # the leader's start time: a recycled pid is never walked


def launch(groups: list[HandedOff], *, global_dir: Path, stdin_grace: float, term_grace: float) -> None:
    """Start the detached stop for ``groups`` (the caller's stdin to them is already closed)."""
    if not groups:
        return
    for group in groups:
        log_event("process.handed_off", server=group.server, pid=group.pgid)
    payload = json.dumps(
        {
            "parent": os.getpid(),
            "global_dir": str(global_dir),
            "stdin_grace": stdin_grace,
            "term_grace": term_grace,
            "groups": [asdict(g) for g in groups],
        }
    )
    subprocess.Popen(  # our own interpreter and module
        [sys.executable, "-m", "orbmcp.core.processes.detached_stop", payload],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        start_new_session=True,
    )


def main(argv: list[str]) -> int:
    job = json.loads(argv[0])
    log.configure(Path(job["global_dir"]))  # the same log as the orbmcp run that handed off
    groups = [
        HandedOff(
            g["server"],
            int(g["pgid"]),
            [(int(p), int(t)) for p, t in g["escaped"]],
            g["record"],
            g.get("tag"),
            int(g.get("start_ticks", 0)),
        )
        for g in job["groups"]
    ]
    anyio.run(_finish, int(job["parent"]), groups, float(job["stdin_grace"]), float(job["term_grace"]))
    return 0


async def _finish(parent: int, groups: list[HandedOff], stdin_grace: float, term_grace: float) -> None:
    phase = "parent_wait_timeout"
    with anyio.move_on_after(_PARENT_EXIT_WAIT_S):
        while os.getppid() == parent:  # re-parented once orbmcp has exited
            await anyio.sleep(_POLL_S)
        phase = "parent_exited"
    log_event("process.detached_stop", phase=phase, pid=parent)
    async with anyio.create_task_group() as tg:
        for group in groups:
            tg.start_soon(_stop_group, group, stdin_grace, term_grace)


async def _stop_group(group: HandedOff, stdin_grace: float, term_grace: float) -> None:
    probe = GroupProbe(group.pgid)
    escaped = dict(group.escaped)

    def walk() -> None:
        # As a session's stop does: the tree may have grown since the hand-off (a helper started
        # on stdin EOF, or on SIGTERM), so it is walked again right before each signal.
        escaped.update(_escapees(group))

    async def gone_within(seconds: float) -> bool:
        with anyio.move_on_after(seconds):
            while probe.alive():
                await anyio.sleep(_POLL_S)
            return True
        return False

    phase = "exited"  # on stdin EOF, as most servers do
    if not await gone_within(stdin_grace):
        phase = "terminated"
        walk()
        signal_group(group.pgid, signal.SIGTERM)
        if not await gone_within(term_grace):
            phase = "killed"
            walk()
            signal_group(group.pgid, signal.SIGKILL)
            if not await gone_within(KILL_REAP_TIMEOUT):
                phase = "abandoned"
    # A helper whose parent exited (started on stdin EOF by a server that then exited) belongs
    # to init: its tag still says whose it is.
    escaped.update(_tagged(group))
    if escaped:
        await stop_escaped(group.server, sorted(escaped.items()), term_grace)
    if group.record is not None:
        Path(group.record).unlink(missing_ok=True)
    # Last: whoever reads the log then finds the whole tree gone and the record removed.
    log_event("process.detached_stop", server=group.server, phase=phase, pid=group.pgid)


def _escapees(group: HandedOff) -> dict[int, int]:
    if not still_running(group.pgid, group.start_ticks):
        return {}
    return dict(escaped_descendants(group.pgid, group.pgid))


def _tagged(group: HandedOff) -> dict[int, int]:
    if group.tag is None:
        return {}
    return dict(tagged_processes(group.tag, group.start_ticks, outside_group=group.pgid))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
