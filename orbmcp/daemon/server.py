"""The session daemon: one per user and configuration, on a private Unix socket.

Every directory of the user reaches it; it keeps one live session per configuration identity
(``identities.py``: one shared by all directories whose project adds nothing, one per project that
adds servers). Lifetime: it holds an exclusive lock on ``<socket>.lock`` while it lives, so two
``daemon start`` at once leave one daemon. It serves until ``daemon stop``, SIGTERM/SIGINT/SIGHUP,
the idle timeout (no client for that long) or the end of its owner process (``--owner-pid``);
then it stops every server (their process trees included), removes its socket and state file, and
exits. Its servers' process groups are recorded like any
session's, so a daemon killed with SIGKILL is cleaned up by the next orbmcp run's reaper.

Security: a Unix socket only, in a directory that is the user's alone (0700, owned, checked); the
socket itself 0600; every connection's peer uid is checked (SO_PEERCRED) and others are refused;
frames are bounded, and a bad frame ends that connection only.

Careless and hostile clients: a connection must say hello (and then what it wants) within
``hello_timeout_s``; at most ``max_connections`` are served at once (the next ones are refused
with a line saying so); running out of file descriptors makes ``accept`` wait and retry, never
stops the daemon; and only a connection that asked for something counts as activity for the idle
timeout, so a silent connection cannot keep the daemon alive.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import socket
import struct
import time
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import SocketAttribute, SocketStream

from orbmcp import fs, log, processes
from orbmcp._version import __version__
from orbmcp.daemon.owner import OwnerHandle
from orbmcp.fastpath.argv import ProgramLine
from orbmcp.session import daemon_protocol as protocol
from orbmcp.session.daemon_scope import Scope, current_scope, make_private_dir, socket_path, state_path

if TYPE_CHECKING:
    from filelock import FileLock

DEFAULT_IDLE_TIMEOUT_S = 30 * 60.0
HELLO_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 64
# accept() failures that are about this moment, not the listener: out of descriptors or memory,
# or a client gone before it was accepted. Wait (doubling, up to the cap) and accept again.
_TRANSIENT_ACCEPT = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED})
_ACCEPT_BACKOFF_S = (0.05, 1.0)
# The daemon serving in this process: a command it runs (``daemon status``) asks it directly, as
# asking over its own socket would block its own event loop.
running: list[Daemon] = []
# Per connection: set when the command asked the daemon to stop once its answer is sent.
_stop_after: ContextVar[list[bool] | None] = ContextVar("_stop_after", default=None)


class AlreadyRunning(Exception):
    """Another daemon holds this scope's lock."""


def peer_uid(stream: SocketStream) -> int | None:
    """The uid of the process at the other end of a Unix socket (Linux SO_PEERCRED)."""
    raw = stream.extra(SocketAttribute.raw_socket, None)  # noqa: S610 - anyio's typed attribute
    if raw is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = raw.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


class Daemon:
    def __init__(
        self,
        scope: Scope,
        *,
        environ: Mapping[str, str],
        cwd: Path,
        idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
        socket_file: Path | None = None,
        allowed_uid: int | None = None,
        hello_timeout_s: float = HELLO_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
        owner_pid: int | None = None,
    ) -> None:
        self.scope = scope
        self.environ = dict(environ)
        self.cwd = cwd
        self.idle_timeout_s = idle_timeout_s if idle_timeout_s and idle_timeout_s > 0 else None
        self.socket_file = Path(socket_file or socket_path(scope, environ))
        self.allowed_uid = os.getuid() if allowed_uid is None else allowed_uid
        self.hello_timeout_s = hello_timeout_s
        self.max_connections = max_connections
        self.owner_pid = owner_pid
        self.sessions: Any = None  # SessionMap, once serving
        self.started_at = time.time()
        self.clients_served = 0
        self.agent_requests = 0  # lines of agent protocols (``slash --stdio``) run here
        self.active = 0  # connections that asked for something and are being served
        self.connections = 0  # every open connection, silent ones included (the cap counts these)
        self.refused = 0
        self.accept_failures = 0
        self.writers: set[Any] = set()  # each connection's FrameWriter: its backlog is in status
        self._last_activity = time.monotonic()
        self._stop = anyio.Event()
        self._stop_reason = ""
        self._lock: FileLock | None = None

    # -- lifetime --------------------------------------------------------------------------------

    def acquire(self) -> None:
        """Take the scope's lock (``AlreadyRunning`` when another daemon has it)."""
        make_private_dir(self.socket_file.parent)
        lock = fs.try_lock(self.socket_file.with_suffix(".lock"))
        if lock is None:
            raise AlreadyRunning(str(self.socket_file))
        self._lock = lock

    def release(self) -> None:
        for path in (self.socket_file, Path(state_path(self.socket_file))):
            with contextlib.suppress(OSError):
                path.unlink()
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    async def serve(self, *, on_ready: Any = None) -> str:
        """Serve until stopped; returns why it stopped. The caller holds the lock (``acquire``)."""
        from orbmcp.daemon.identities import SessionMap

        owner = OwnerHandle(self.owner_pid) if self.owner_pid is not None else None  # OwnerGone: no start
        self.sessions = SessionMap(self.scope, self.environ, self.cwd)
        with contextlib.suppress(FileNotFoundError):
            self.socket_file.unlink()  # a stale socket: we hold the lock, so its daemon is gone
        old_umask = os.umask(0o177)  # the socket is created 0600: no window where others may connect
        try:
            listener = await anyio.create_unix_listener(self.socket_file)
        finally:
            os.umask(old_umask)
        async with self.sessions, listener, anyio.create_task_group() as tg:
            running.append(self)
            self._write_state()
            log.log_event("daemon.started", pid=os.getpid(), message=str(self.socket_file))
            if on_ready is not None:
                on_ready()
            tg.start_soon(self._accept, listener)
            tg.start_soon(self._watch_signals)
            if self.idle_timeout_s is not None:
                tg.start_soon(self._watch_idle)
            if owner is not None:
                tg.start_soon(self._watch_owner, owner)
            await self._stop.wait()
            running.remove(self)
            # Gone from the socket's path at once: stopping the servers may take seconds, and a
            # client must not find a socket nobody answers (and call the daemon "gone").
            with contextlib.suppress(OSError):
                self.socket_file.unlink()
            tg.cancel_scope.cancel()
        log.log_event("daemon.stopped", pid=os.getpid(), reason=self._stop_reason)
        return self._stop_reason

    def request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()

    @property
    def session(self) -> Any:
        """The shared session (every directory whose project adds no configuration)."""
        return self.sessions.shared if self.sessions is not None else None

    def stop_after_this_connection(self) -> None:
        """``daemon stop`` run inside the daemon: stop once this command's answer is sent."""
        flag = _stop_after.get()
        if flag is None:  # not within a connection: now
            self.request_stop("a client asked")
        else:
            flag[0] = True

    async def _watch_owner(self, owner: OwnerHandle) -> None:
        await owner.wait()
        self.request_stop(f"its owner (pid {self.owner_pid}) ended")

    async def _accept(self, listener: Any) -> None:
        backoff = 0.0
        async with anyio.create_task_group() as tg:
            while True:
                try:
                    stream = await listener.accept()
                except anyio.BrokenResourceError as exc:
                    cause = exc.__cause__
                    if not isinstance(cause, OSError) or cause.errno not in _TRANSIENT_ACCEPT:
                        raise
                    backoff = min(max(backoff * 2, _ACCEPT_BACKOFF_S[0]), _ACCEPT_BACKOFF_S[1])
                    self.accept_failures += 1
                    log.log_event(
                        "daemon.accept_failed", level="warn", error=cause, delay_ms=round(backoff * 1000)
                    )
                    await anyio.sleep(backoff)
                    continue
                backoff = 0.0
                tg.start_soon(self._handle, stream)

    async def _handle(self, stream: SocketStream) -> None:
        async with stream:
            uid = peer_uid(stream)
            if uid is not None and uid != self.allowed_uid:
                await self._refuse(stream, f"peer uid {uid}", "not your daemon")
                return
            if self.connections >= self.max_connections:
                await self._refuse(
                    stream,
                    f"{self.connections} connections open",
                    f"the session daemon is serving {self.max_connections} connections, its limit; "
                    "try again, or run the command with --no-daemon",
                )
                return
            self.connections += 1
            stop_after = [False]
            _stop_after.set(stop_after)
            try:
                await self._serve_connection(stream)
            finally:
                self.connections -= 1
                if stop_after[0]:
                    self.request_stop("a client asked")

    async def _refuse(self, stream: SocketStream, reason: str, message: str) -> None:
        self.refused += 1
        log.log_event("daemon.refused", level="warn", reason=reason)
        with contextlib.suppress(Exception):
            await stream.send(protocol.encode({"t": "error", "message": message}))

    async def _serve_connection(self, stream: SocketStream) -> None:
        from orbmcp.daemon.connection import Connection

        connection = Connection(self, stream)
        try:
            await connection.serve()
        except Exception as exc:  # one connection's failure never stops the daemon
            log.log_event("daemon.connection_failed", level="warn", error=exc)
        finally:
            if connection.counted:
                self.active -= 1
                self._last_activity = time.monotonic()

    def begin_request(self, connection: Any) -> None:
        """A connection asked for something: from now on it keeps the daemon from idling."""
        self.active += 1
        self._last_activity = time.monotonic()
        connection.counted = True

    async def _watch_signals(self) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for signum in signals:
                self.request_stop(signal.Signals(signum).name)
                return

    async def _watch_idle(self) -> None:
        assert self.idle_timeout_s is not None
        while True:
            idle_for = time.monotonic() - self._last_activity
            if self.active == 0 and idle_for >= self.idle_timeout_s:
                self.request_stop("idle timeout")
                return
            await anyio.sleep(max(self.idle_timeout_s - idle_for, 0.05) if self.active == 0 else 1.0)

    # -- what status shows -------------------------------------------------------------------------

    def _write_state(self) -> None:
        state = {
            "pid": os.getpid(),
            "startedAt": self.started_at,
            "protocol": protocol.PROTOCOL_VERSION,
            "version": __version__,
            "socket": str(self.socket_file),
            "scope": self.scope.describe(),
        }
        fs.atomic_write(Path(state_path(self.socket_file)), json.dumps(state).encode("utf-8"), durable=False)

    def status(self) -> dict[str, Any]:
        by_identity = dict(self.sessions.sessions) if self.sessions is not None else {}
        shared = by_identity.pop("", None)
        return {
            "pid": os.getpid(),
            "version": __version__,
            "uptimeS": round(time.time() - self.started_at, 3),
            "socket": str(self.socket_file),
            "idleTimeoutS": self.idle_timeout_s if self.idle_timeout_s is not None else 0,
            "ownerPid": self.owner_pid,
            "scope": self.scope.describe(),
            "servers": _server_rows(shared),
            # The sessions of projects that add configuration, each with its own servers.
            "projects": [
                {"dir": identity, "servers": _server_rows(session)}
                for identity, session in by_identity.items()
            ],
            "clientsServed": self.clients_served,
            "agentRequests": self.agent_requests,
            "activeClients": max(self.active - 1, 0),  # the asker itself does not count
            "refusedClients": self.refused,
            "acceptFailures": self.accept_failures,
            "outputBacklogBytes": sum(writer.backlog for writer in self.writers),
            "residentMemoryBytes": processes.own_rss_bytes(),
        }

    def scope_of(self, line: ProgramLine, request: Mapping[str, Any]) -> Scope:
        """The scope the client's command line names (its options, environment and cwd)."""
        cwd = request.get("cwd")
        env = request.get("env")
        return current_scope(
            project=line.project,
            config_file=line.config,
            environ={str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
            cwd=cwd if isinstance(cwd, str) else None,
        )


def _server_rows(session: Any) -> list[dict[str, Any]]:
    if session is None:
        return []
    manager = getattr(session.sessions, "_manager", None)
    rows = []
    for name in session.config.servers:
        sup = manager.supervisors.get(name) if manager is not None else None
        rows.append({"name": name, "state": str(sup.state) if sup is not None else "stopped"})
    return rows


def run_foreground(
    scope: Scope,
    *,
    environ: Mapping[str, str],
    cwd: Path,
    idle_timeout_s: float | None,
    notify: Any = None,
    owner_pid: int | None = None,
) -> str:
    """Run a daemon in this process until it stops; returns why it stopped."""
    daemon = Daemon(scope, environ=environ, cwd=cwd, idle_timeout_s=idle_timeout_s, owner_pid=owner_pid)
    daemon.acquire()
    try:
        return anyio.run(lambda: daemon.serve(on_ready=notify))
    finally:
        daemon.release()


__all__ = ["DEFAULT_IDLE_TIMEOUT_S", "AlreadyRunning", "Daemon", "peer_uid", "run_foreground"]
