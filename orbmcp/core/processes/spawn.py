"""Starting a stdio server: its own session and process group, pipes orbmcp owns, no leak on failure.

orbmcp does not use the SDK's ``stdio_client``: spawning here needs neither ``mcp`` nor its import
cost (a server boots while the SDK imports), and the process it returns stops its whole tree.

Lifetimes: ``spawn`` starts two small tasks (stderr drain, exit watcher) in a task group the
caller owns; both end on their own once ``stop()`` has closed the fds, so the caller's task
group closes cleanly right after. ``open_process`` bundles a private task group, ``spawn`` and a
shielded ``stop()`` for callers that want one ``async with`` block per process.

Reasons of the errors raised here: ``command_not_found`` (no such command), ``spawn_failed``
(anything else that kept the command from starting).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from orbmcp import environment
from orbmcp.core.processes.launcher import BrokenSymlink, check_command, launch_argv
from orbmcp.core.processes.pipes import close_fd
from orbmcp.core.processes.process import ManagedProcess
from orbmcp.core.processes.proctree import new_tag, signal_group
from orbmcp.core.processes.stderr_tail import StderrTail
from orbmcp.errors import ConnectionFailed
from orbmcp.text import one_line

if TYPE_CHECKING:
    from orbmcp.core.processes.reaper import GroupRegistry


def _identity(text: str) -> str:
    return text


@dataclass(frozen=True)
class SpawnSpec:
    """What to run for one stdio server. ``env`` is applied over the inherited ``os.environ``."""

    name: str
    command: str
    args: Sequence[str]
    env: Mapping[str, str]
    cwd: str | None


def _spawn_error(spec: SpawnSpec, exc: OSError | ValueError) -> ConnectionFailed:
    command = one_line(spec.command)
    reason = "spawn_failed"
    if spec.cwd is not None and isinstance(exc, FileNotFoundError) and exc.filename == spec.cwd:
        what = f"cwd does not exist: {one_line(spec.cwd)}"
        hint = "fix the server's cwd"
    elif isinstance(exc, BrokenSymlink):
        shown = command if exc.link == spec.command else f"{command} ({one_line(exc.link)})"
        what = f"command {shown} is a broken symlink to {one_line(exc.target)} (which does not exist)"
        hint = "reinstall the server, or point the command at where it is now"
        reason = "command_not_found"
    elif isinstance(exc, FileNotFoundError):
        what, hint = f"command not found: {command}", "check the command and PATH"
        reason = "command_not_found"
    elif isinstance(exc, PermissionError):
        what, hint = f"command is not executable: {command}", "check the file's permissions"
    elif isinstance(exc, OSError):
        cause = exc.strerror or type(exc).__name__
        what, hint = f"cannot run command {command}: {cause}", None
    else:
        what, hint = f"invalid command {command}: {exc}", None
    return ConnectionFailed(f"server '{spec.name}': {what}", server=spec.name, hint=hint, reason=reason)


async def spawn(
    spec: SpawnSpec,
    *,
    task_group: TaskGroup,
    registry: GroupRegistry | None = None,
    redact: Callable[[str], str] = _identity,
    stderr_tail: StderrTail | None = None,
) -> ManagedProcess:
    """Start a stdio server in its own session and process group.

    The child inherits ``os.environ`` with ``spec.env`` applied over it, plus its tag
    (``proctree``), and on Linux gets SIGTERM should orbmcp die (``launcher``). Its stdin and stdout
    are pipes orbmcp owns (so orbmcp's death is the child's stdin EOF); stderr is drained into
    ``stderr_tail`` (a new tail using ``redact`` unless one is passed, e.g. to keep one tail
    across restarts) by a task in ``task_group``, which also runs the exit watcher. The caller
    must ``stop()`` the process; after that both tasks end by themselves.

    Raises ``ConnectionFailed`` (one line naming the server) for a missing command, a file that
    cannot be executed or a missing cwd; nothing is left behind then.
    """
    await anyio.lowlevel.checkpoint()
    if not spec.command:
        raise ConnectionFailed(
            f"server '{spec.name}': empty command", server=spec.name, reason="spawn_failed"
        )
    if spec.cwd is not None and not os.path.isdir(spec.cwd):
        raise _spawn_error(spec, FileNotFoundError(2, "No such file or directory", spec.cwd))
    tag = new_tag()
    env = {**os.environ, **spec.env, environment.SERVER_TAG: tag}
    try:
        check_command(spec.command, env, spec.cwd)
    except (OSError, ValueError) as exc:
        raise _spawn_error(spec, exc) from None
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_r, stderr_w = os.pipe()
    try:
        popen = subprocess.Popen(
            launch_argv([spec.command, *spec.args]),
            stdin=stdin_r,
            stdout=stdout_w,
            stderr=stderr_w,
            env=env,
            cwd=spec.cwd,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        for fd in (stdin_w, stdout_r, stderr_r):
            close_fd(fd)
        raise _spawn_error(spec, exc) from None
    finally:
        for fd in (stdin_r, stdout_w, stderr_w):
            close_fd(fd)
    # No await from here on: a cancellation in between would leak a live process.
    process: ManagedProcess | None = None
    record: Path | None = None
    try:
        process = ManagedProcess(
            name=spec.name,
            popen=popen,
            stdin_fd=stdin_w,
            stdout_fd=stdout_r,
            stderr_fd=stderr_r,
            stderr_tail=stderr_tail if stderr_tail is not None else StderrTail(redact=redact),
            registry=registry,
            tag=tag,
        )
        if registry is not None:
            record = registry.add(spec.name, popen.pid, popen.pid, tag=tag, start_ticks=process.start_ticks)
        process.start_tasks(task_group, record)
    except BaseException:
        signal_group(popen.pid, signal.SIGKILL)
        popen.wait()
        if process is not None:
            process.release()
        else:
            for fd in (stdin_w, stdout_r, stderr_r):
                close_fd(fd)
        if registry is not None and record is not None:
            registry.remove(record)
        raise
    return process


@asynccontextmanager
async def open_process(
    spec: SpawnSpec,
    *,
    registry: GroupRegistry | None = None,
    redact: Callable[[str], str] = _identity,
    stderr_tail: StderrTail | None = None,
    stdin_grace: float = 2.0,
    term_grace: float = 2.0,
) -> AsyncIterator[ManagedProcess]:
    """``spawn`` with a private task group; the whole tree is stopped when the block exits.

    An exception from the block comes out as itself, not wrapped in an ``ExceptionGroup`` by the
    private task group (whose two tasks never raise).
    """
    error: BaseException | None = None
    async with anyio.create_task_group() as task_group:
        process = await spawn(
            spec, task_group=task_group, registry=registry, redact=redact, stderr_tail=stderr_tail
        )
        try:
            yield process
        except BaseException as exc:
            error = exc
        finally:
            await process.stop(stdin_grace=stdin_grace, term_grace=term_grace)
    if error is not None:
        raise error


__all__ = ["SpawnSpec", "open_process", "spawn"]
