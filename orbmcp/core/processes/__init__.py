"""Process supervision: a stdio server's process, from spawn to the stop that ends its whole tree.

Owns spawning (its own session and process group, pipes orbmcp owns, the parent-death launcher),
the process tree as the kernel sees it (liveness, escaped descendants, signals), the disk record
that lets the next run reap what a crashed one left, the pipes' fds, how a server ended (exit code,
the stderr tail) and the detached stop a one-shot command hands its servers to. Nothing here
imports ``mcp``.
"""

from __future__ import annotations

import os
from pathlib import Path

RECORDS_DIR = "procs"  # under the global state dir: one record per server process group


def has_group_records(state_dir: Path) -> bool:
    """Whether a run left a process-group record. Standard library only: a one-shot ``status``
    with nothing to connect asks it before skipping the session whose start reaps a crashed run's
    servers (``reaper.GroupRegistry.reap_stale``)."""
    try:
        with os.scandir(state_dir / RECORDS_DIR) as entries:
            return any(entry.name.endswith(".json") for entry in entries)
    except OSError:
        return False
