"""stdio server processes that orbmcp owns end to end: spawn, pipes, stderr tail, tree stop.

orbmcp does not use the SDK's ``stdio_client``: spawning here needs neither ``mcp`` nor its
import cost, every server leads its own session and process group so a stop reaches the whole
tree (launchers such as ``npx``/``uvx``/``sh -c`` included, also when the leader exited first),
and every pipe is a plain fd that is closed exactly once. Nothing here imports ``mcp``.

Lifetimes: ``spawn`` starts two small tasks (stderr drain, exit watcher) in a task group the
caller owns; both end on their own once ``stop()`` has closed the fds, so the caller's task
group closes cleanly right after. ``open_process`` bundles a private task group, ``spawn`` and a
shielded ``stop()`` for callers that want one ``async with`` block per process.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from orbmcp.errors import ConnectionFailed
from orbmcp.log import get_logger

if TYPE_CHECKING:
    from orbmcp.core.reaper import GroupRegistry

_log = get_logger(__name__)

# How often a stop probes the leader and the group (the SDK's and VS Code's value).
_GROUP_POLL_INTERVAL = 0.01
# Exit-watcher poll where pidfds are unavailable (macOS, Linux < 5.3).
_WATCH_POLL_INTERVAL = 0.05
# wait() re-polls this often in case the exit watcher was cancelled with its task group.
_WAIT_BACKSTOP_INTERVAL = 0.5
# After SIGKILL: how long to wait for the group to vanish before abandoning it with a warning.
_KILL_REAP_TIMEOUT = 2.0
_READ_CHUNK = 65536
# Leftover stderr read synchronously at release; bounded because a member that escaped the
# group (setsid) can keep writing forever.
_FINAL_STDERR_LIMIT = 1 << 20
# Bound on the processes walked when looking for descendants that left the group.
_MAX_TREE = 4096


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


# --- text hygiene -------------------------------------------------------------------------------

# CSI (colours, cursor moves), OSC (titles, hyperlinks) and the remaining two-byte escapes.
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# C0 (except tab), DEL, C1, bidi overrides/isolates (display spoofing), line/paragraph separators.
_CONTROL_CHARS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def strip_control(text: str) -> str:
    """Remove terminal escape sequences and control characters, so text is one inert line."""
    return _CONTROL_CHARS.sub("", _ANSI_ESCAPE.sub("", text))


class StderrTail:
    """The last ``max_lines`` stderr lines of a server, cleaned and redacted when read.

    Raw lines are kept (each capped at 4 bytes per allowed character) and only cleaned and
    redacted in ``lines()``: a flood of millions of lines then costs one ``split`` per chunk
    instead of a regex pass and a redactor call per line. Memory stays below roughly
    ``max_lines * max_line_chars * 4`` bytes whatever the server writes.
    """

    def __init__(
        self,
        *,
        redact: Callable[[str], str] = _identity,
        max_lines: int = 100,
        max_line_chars: int = 2000,
    ) -> None:
        self._redact = redact
        self._max_line_chars = max_line_chars
        self._max_line_bytes = max_line_chars * 4
        self._max_lines = max_lines
        self._raw: deque[tuple[bytes, bool]] = deque(maxlen=max_lines)
        self._pending = bytearray()
        self._pending_truncated = False

    def feed(self, data: bytes) -> None:
        """Add a chunk of raw stderr bytes."""
        parts = data.split(b"\n")
        self._extend_pending(parts[0])
        if len(parts) == 1:
            return
        self._commit(bytes(self._pending), self._pending_truncated)
        # Only the last max_lines complete lines of a chunk can survive in the deque.
        for part in parts[1:-1][-self._max_lines :]:
            limit = self._max_line_bytes
            self._commit(part[:limit], len(part) > limit)
        self._pending = bytearray()
        self._pending_truncated = False
        self._extend_pending(parts[-1])

    def flush(self) -> None:
        """Commit a final line that ended without a newline (the stream reached EOF)."""
        if self._pending:
            self._commit(bytes(self._pending), self._pending_truncated)
        self._pending = bytearray()
        self._pending_truncated = False

    def lines(self) -> list[str]:
        """The retained lines, oldest first: control characters stripped, redacted, bounded."""
        out: list[str] = []
        for raw, truncated in self._raw:
            line = self._clean(raw, truncated)
            if line:
                out.append(line)
        return out

    def _extend_pending(self, part: bytes) -> None:
        room = self._max_line_bytes - len(self._pending)
        if len(part) > room:
            self._pending_truncated = True
            part = part[: max(room, 0)]
        self._pending += part

    def _commit(self, raw: bytes, truncated: bool) -> None:
        if raw.strip():
            self._raw.append((raw, truncated))

    def _clean(self, raw: bytes, truncated: bool) -> str:
        text = raw.decode("utf-8", "replace")
        if "\r" in text:
            # A terminal would show only what the last carriage return left (progress bars).
            segments = [segment for segment in text.split("\r") if segment]
            text = segments[-1] if segments else ""
        text = strip_control(self._redact(strip_control(text))).strip()
        if truncated or len(text) > self._max_line_chars:
            text = text[: self._max_line_chars - 1] + "…"
        return text


# --- pipe streams -------------------------------------------------------------------------------


class _PipeReceiveStream(ByteReceiveStream):
    """The parent's non-blocking read end of a pipe.

    Every wait is followed by a check that the fd is still ours: a close may happen while a
    reader is between its wake-up and its ``os.read``, and the fd number may already belong
    to another pipe by then.
    """

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd

    async def receive(self, max_bytes: int = _READ_CHUNK) -> bytes:
        await anyio.lowlevel.checkpoint()
        while True:
            fd = self._fd
            if fd < 0:
                raise anyio.ClosedResourceError
            try:
                data = os.read(fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            return data

    def read_nowait(self, limit: int) -> bytes:
        """Whatever is buffered right now, up to ``limit`` bytes, without waiting."""
        chunks: list[bytes] = []
        total = 0
        while self._fd >= 0 and total < limit:
            try:
                data = os.read(self._fd, min(_READ_CHUNK, limit - total))
            except OSError:  # BlockingIOError: nothing buffered; anything else: nothing to read
                break
            if not data:
                break
            chunks.append(data)
            total += len(data)
        return b"".join(chunks)

    def detach(self) -> int:
        """Close the stream for its users but hand the fd to the caller (-1 if already closed)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            anyio.notify_closing(fd)
        return fd

    def close_now(self) -> None:
        _close_fd(self.detach())

    async def aclose(self) -> None:
        self.close_now()
        await anyio.lowlevel.checkpoint()


class _PipeSendStream(ByteSendStream):
    """The parent's non-blocking write end of a pipe; each ``send`` lands whole and in order."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._lock = anyio.Lock()
        self._broken = False

    async def send(self, item: bytes) -> None:
        async with self._lock:
            await anyio.lowlevel.checkpoint()
            view = memoryview(item)
            while view:
                fd = self._fd
                if fd < 0:
                    raise anyio.ClosedResourceError
                if self._broken:
                    raise anyio.BrokenResourceError
                try:
                    written = os.write(fd, view)
                except BlockingIOError:
                    try:
                        await anyio.wait_writable(fd)
                    except anyio.get_cancelled_exc_class():
                        # Half a message on the wire: later messages would be misframed.
                        if len(view) < len(item):
                            self._broken = True
                        raise
                    continue
                except OSError as exc:  # EPIPE: the reader is gone
                    self._broken = True
                    raise anyio.BrokenResourceError from exc
                view = view[written:]

    def close_now(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            anyio.notify_closing(fd)
            _close_fd(fd)

    async def aclose(self) -> None:
        self.close_now()
        await anyio.lowlevel.checkpoint()


def _close_fd(fd: int) -> None:
    if fd >= 0:
        with suppress(OSError):
            os.close(fd)


# --- process groups -----------------------------------------------------------------------------


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    # ESRCH: the group is gone. EPERM never proves that (macOS zombies, foreign-euid members):
    # the caller keeps polling and escalating.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _GroupProbe:
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
        try:
            entries = os.listdir("/proc")
        except OSError:
            return True  # no procfs (macOS): trust killpg
        for entry in entries:
            if entry.isdigit() and self._is_running_member(int(entry)):
                self._known_member = int(entry)
                return True
        return False

    def _is_running_member(self, pid: int) -> bool:
        state = _proc_state(pid)
        return state is not None and state[1] == self.pgid and state[0] not in (b"Z", b"X")


def _proc_state(pid: int) -> tuple[bytes, int, int] | None:
    """(state, pgrp, start time in clock ticks since boot) of a process from /proc/<pid>/stat,
    or None if it is unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        # comm may hold spaces and parentheses: the fixed fields start after the last ')'.
        fields = stat[stat.rindex(b")") + 2 :].split()
        return fields[0], int(fields[2]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _escaped_descendants(leader: int, pgid: int) -> list[tuple[int, int]]:
    """Live descendants of ``leader`` that left process group ``pgid`` (``setsid``, ``setpgid``),
    as (pid, start ticks). Follows /proc/<pid>/task/<tid>/children, so it reads only this tree;
    [] where that file does not exist (macOS, kernels without CONFIG_PROC_CHILDREN)."""
    escaped: list[tuple[int, int]] = []
    seen = {leader}
    todo = [leader]
    while todo and len(seen) < _MAX_TREE:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                    children = [int(c) for c in handle.read().split()]
            except (OSError, ValueError):
                continue
            for child in children:
                if child in seen:
                    continue
                seen.add(child)
                todo.append(child)
                state = _proc_state(child)
                if state is not None and state[1] != pgid and state[0] not in (b"Z", b"X"):
                    escaped.append((child, state[2]))
    return escaped


def _still_running(pid: int, ticks: int) -> bool:
    """The same process (not a recycled pid) is alive and not a zombie."""
    state = _proc_state(pid)
    return state is not None and state[0] not in (b"Z", b"X") and state[2] == ticks


def exit_reason(returncode: int) -> str:
    """How a process ended, for one-line errors: ``exited with code 1`` / ``killed by SIGKILL``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exited with code {returncode}"


# --- the managed process ------------------------------------------------------------------------


class ManagedProcess:
    """A spawned stdio server: its pipes, its stderr tail, and the stop that ends its whole tree.

    ``returncode`` follows ``subprocess``: negative for a signal. ``pgid`` is the leader pid,
    captured at spawn: ``getpgid`` fails once the leader is reaped while members live on.
    """

    def __init__(
        self,
        *,
        spec: SpawnSpec,
        popen: subprocess.Popen[bytes],
        stdin_fd: int,
        stdout_fd: int,
        stderr_fd: int,
        stderr_tail: StderrTail,
        registry: GroupRegistry | None,
    ) -> None:
        self.name = spec.name
        self.pid = popen.pid
        self.pgid = popen.pid
        self._group = _GroupProbe(popen.pid)
        self.stderr_tail = stderr_tail
        self._popen = popen
        self._stdin = _PipeSendStream(stdin_fd)
        self._stdout = _PipeReceiveStream(stdout_fd)
        self._stderr = _PipeReceiveStream(stderr_fd)
        self._pidfd = _open_pidfd(popen.pid)
        self._registry = registry
        self._record: Path | None = None
        self._exited = anyio.Event()
        self._stopped = anyio.Event()
        self._stopping = False
        self._escalated = False
        self._released = False

    @property
    def stdin(self) -> ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def returncode(self) -> int | None:
        return self._reap()

    @property
    def stopping(self) -> bool:
        """True from the first ``stop()`` call on."""
        return self._stopping

    async def wait(self) -> int:
        """Wait for the leader to exit and return its code (members of its group may live on)."""
        while (code := self._reap()) is None:
            with anyio.move_on_after(_WAIT_BACKSTOP_INTERVAL):
                await self._exited.wait()
        return code

    async def stop(self, *, stdin_grace: float = 2.0, term_grace: float = 2.0) -> None:
        """Close stdin, wait, SIGTERM the group, wait, SIGKILL the group; release every fd.

        Idempotent. A second ``stop()`` while one runs sends SIGKILL to the group at once and
        returns when the first has finished. Shielded: cancelling the caller cannot skip it,
        and every wait inside is bounded.
        """
        with anyio.CancelScope(shield=True):
            if self._stopped.is_set():
                return
            if self._stopping:
                self._escalated = True
                if self._group.alive():
                    _signal_group(self.pgid, signal.SIGKILL)
                await self._stopped.wait()
                return
            self._stopping = True
            try:
                await self._shutdown(stdin_grace, term_grace)
            finally:
                self._release()
                self._stopped.set()

    def _attach(self, task_group: TaskGroup, record: Path | None) -> None:
        self._record = record
        task_group.start_soon(self._drain_stderr, name=f"orbmcp stderr drain: {self.name}")
        task_group.start_soon(self._watch_exit, name=f"orbmcp exit watcher: {self.name}")

    def _reap(self) -> int | None:
        code = self._popen.poll()
        if code is not None and not self._exited.is_set():
            self._exited.set()
        return code

    async def _shutdown(self, stdin_grace: float, term_grace: float) -> None:
        # Take stdout from its reader and discard it while stopping: a server blocked writing
        # to a full stdout pipe would never see stdin EOF.
        stdout_fd = self._stdout.detach()
        # Found while the tree is intact: once their parent exits they belong to init.
        escaped = _escaped_descendants(self.pid, self.pgid) if self._reap() is None else []
        async with anyio.create_task_group() as discard:
            if stdout_fd >= 0:
                discard.start_soon(_discard_until_eof, stdout_fd)
            self._stdin.close_now()
            exited = await self._wait_leader(stdin_grace)
            if not (exited and not self._group.alive()):
                await self._terminate_group(term_grace)
            if escaped:
                await self._stop_escaped(escaped, term_grace)
            discard.cancel_scope.cancel()
        _close_fd(stdout_fd)

    async def _stop_escaped(self, escaped: list[tuple[int, int]], term_grace: float) -> None:
        """Stop descendants that left the server's process group: a group kill misses them, and
        nothing the server started may outlive its stop. Start times guard against pid reuse."""
        from orbmcp.log import log_event

        for pid, _ in escaped:
            log_event(
                "process.escaped",
                level="warn",
                server=self.name,
                pid=pid,
                message=f"process {pid} of server {self.name} left its process group; stopping it too",
            )
        for sig, grace in ((signal.SIGTERM, term_grace), (signal.SIGKILL, _KILL_REAP_TIMEOUT)):
            live = [(pid, ticks) for pid, ticks in escaped if _still_running(pid, ticks)]
            for pid, _ in live:
                with suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            deadline = anyio.current_time() + grace
            while live and anyio.current_time() < deadline:
                await anyio.sleep(_GROUP_POLL_INTERVAL)
                live = [(pid, ticks) for pid, ticks in live if _still_running(pid, ticks)]
            if not live:
                return
            escaped = live
        _log.warning(
            "server %r: %d escaped process(es) survived SIGKILL; abandoning them", self.name, len(escaped)
        )

    async def _terminate_group(self, term_grace: float) -> None:
        # Also when the leader already exited: its children (npx/uvx launchers, forked helpers)
        # keep the group alive, and the SDK skips exactly this case.
        if not self._escalated:
            _signal_group(self.pgid, signal.SIGTERM)
            if await self._wait_group_gone(term_grace):
                return
        _signal_group(self.pgid, signal.SIGKILL)
        if not await self._wait_group_gone(_KILL_REAP_TIMEOUT):
            _log.warning(
                "server %r: process group %d still alive %.1fs after SIGKILL; abandoning it",
                self.name,
                self.pgid,
                _KILL_REAP_TIMEOUT,
            )

    async def _wait_leader(self, timeout: float) -> bool:
        deadline = anyio.current_time() + timeout
        while self._reap() is None:
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                return False
            with anyio.move_on_after(min(_GROUP_POLL_INTERVAL, remaining)):
                await self._exited.wait()
        return True

    async def _wait_group_gone(self, timeout: float) -> bool:
        deadline = anyio.current_time() + timeout
        # Reaping first matters: an unreaped leader is a zombie member of its own group.
        while self._reap() is None or self._group.alive():
            if anyio.current_time() >= deadline:
                return False
            await anyio.sleep(_GROUP_POLL_INTERVAL)
        return True

    def _release(self) -> None:
        if self._released:
            return
        self._released = True
        self._stdin.close_now()
        self._stdout.close_now()
        # The group is dead, so what is left in the stderr pipe is the final output (a crash
        # traceback): read it here rather than wait for the drain task, which may be gone.
        self.stderr_tail.feed(self._stderr.read_nowait(_FINAL_STDERR_LIMIT))
        self.stderr_tail.flush()
        self._stderr.close_now()
        pidfd, self._pidfd = self._pidfd, -1
        if pidfd >= 0:
            anyio.notify_closing(pidfd)
            _close_fd(pidfd)
        if self._registry is not None and self._record is not None:
            self._registry.remove(self._record)
            self._record = None

    async def _drain_stderr(self) -> None:
        # Without a reader the child blocks once the 64 KiB pipe is full and stops answering.
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            while True:
                self.stderr_tail.feed(await self._stderr.receive())

    async def _watch_exit(self) -> None:
        pidfd = self._pidfd
        if pidfd >= 0:
            # A pidfd turns readable when the process exits: no polling while it runs.
            with suppress(anyio.ClosedResourceError):
                await anyio.wait_readable(pidfd)
        while self._reap() is None and not self._released:
            await anyio.sleep(_WATCH_POLL_INTERVAL)


def _open_pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


async def _discard_until_eof(fd: int) -> None:
    with suppress(OSError, anyio.ClosedResourceError):
        while True:
            try:
                if not os.read(fd, _READ_CHUNK):
                    return
            except BlockingIOError:
                await anyio.wait_readable(fd)


# --- spawning -----------------------------------------------------------------------------------


def _spawn_error(spec: SpawnSpec, exc: OSError | ValueError) -> ConnectionFailed:
    command = strip_control(spec.command)
    if spec.cwd is not None and isinstance(exc, FileNotFoundError) and exc.filename == spec.cwd:
        what = f"cwd does not exist: {strip_control(spec.cwd)}"
        hint = "fix the server's cwd"
    elif isinstance(exc, FileNotFoundError):
        what, hint = f"command not found: {command}", "check the command and PATH"
    elif isinstance(exc, PermissionError):
        what, hint = f"command is not executable: {command}", "check the file's permissions"
    elif isinstance(exc, OSError):
        reason = exc.strerror or type(exc).__name__
        what, hint = f"cannot run command {command}: {reason}", None
    else:
        what, hint = f"invalid command {command}: {exc}", None
    return ConnectionFailed(f"server '{spec.name}': {what}", server=spec.name, hint=hint)


async def spawn(
    spec: SpawnSpec,
    *,
    task_group: TaskGroup,
    registry: GroupRegistry | None = None,
    redact: Callable[[str], str] = _identity,
    stderr_tail: StderrTail | None = None,
) -> ManagedProcess:
    """Start a stdio server in its own session and process group.

    The child inherits ``os.environ`` with ``spec.env`` applied over it. Its stdin and stdout
    are pipes orbmcp owns (so orbmcp's death is the child's stdin EOF); stderr is drained into
    ``stderr_tail`` (a new tail using ``redact`` unless one is passed, e.g. to keep one tail
    across restarts) by a task in ``task_group``, which also runs the exit watcher. The caller
    must ``stop()`` the process; after that both tasks end by themselves.

    Raises ``ConnectionFailed`` (one line naming the server) for a missing command, a file that
    cannot be executed or a missing cwd; nothing is left behind then.
    """
    await anyio.lowlevel.checkpoint()
    if not spec.command:
        raise ConnectionFailed(f"server '{spec.name}': empty command", server=spec.name)
    if spec.cwd is not None and not os.path.isdir(spec.cwd):
        raise _spawn_error(spec, FileNotFoundError(2, "No such file or directory", spec.cwd))
    env = {**os.environ, **spec.env}
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_r, stderr_w = os.pipe()
    try:
        popen = subprocess.Popen(
            [spec.command, *spec.args],
            stdin=stdin_r,
            stdout=stdout_w,
            stderr=stderr_w,
            env=env,
            cwd=spec.cwd,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        for fd in (stdin_w, stdout_r, stderr_r):
            _close_fd(fd)
        raise _spawn_error(spec, exc) from None
    finally:
        for fd in (stdin_r, stdout_w, stderr_w):
            _close_fd(fd)
    # No await from here on: a cancellation in between would leak a live process.
    process: ManagedProcess | None = None
    record: Path | None = None
    try:
        process = ManagedProcess(
            spec=spec,
            popen=popen,
            stdin_fd=stdin_w,
            stdout_fd=stdout_r,
            stderr_fd=stderr_r,
            stderr_tail=stderr_tail if stderr_tail is not None else StderrTail(redact=redact),
            registry=registry,
        )
        if registry is not None:
            record = registry.add(spec.name, popen.pid, popen.pid)
        process._attach(task_group, record)
    except BaseException:
        _signal_group(popen.pid, signal.SIGKILL)
        popen.wait()
        if process is not None:
            process._release()
        else:
            for fd in (stdin_w, stdout_r, stderr_r):
                _close_fd(fd)
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


__all__ = [
    "ManagedProcess",
    "SpawnSpec",
    "StderrTail",
    "exit_reason",
    "open_process",
    "spawn",
    "strip_control",
]
