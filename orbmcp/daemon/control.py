"""``orbmcp daemon start|stop|restart|status``: start, stop and ask the scope's session daemon.

``start`` spawns ``orbmcp daemon start --foreground`` detached (its own session, no terminal, the
environment of this command: that is what ``${VAR}`` expands with) and waits until it answers.
Two starts at once leave one daemon: the daemons race for the scope's lock and the loser exits;
both starters then find the winner. ``--foreground`` serves in this process (for a service
manager, or to watch it). Liveness is always asked of the daemon itself (its status answer, its
pid), never read from the socket file alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orbmcp import fs, processes
from orbmcp.commands.context import CommandContext
from orbmcp.commands.durations import parse_duration
from orbmcp.commands.results.daemon import DaemonStatus
from orbmcp.errors import ConfigError, ConnectionFailed, TimeoutFailed, UsageError
from orbmcp.session import daemon_protocol as protocol
from orbmcp.session.daemon_scope import Scope, UnsafeDirectory, current_scope, socket_path, state_path
from orbmcp.session.daemon_trust import UntrustedDaemon, connect_verified

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
STARTUP_SETTLE_TIMEOUT_S = 300.0
ALREADY_RUNNING_STATUS = 75  # what a daemon that lost the race for the lock exits with


def idle_timeout_s(text: str | None) -> float:
    """``--idle-timeout``: ``30m``, ``90s``, ``1h``, ``0`` (never); the default when not given."""
    if text is None:
        from orbmcp.daemon.server import DEFAULT_IDLE_TIMEOUT_S

        return DEFAULT_IDLE_TIMEOUT_S
    return parse_duration(text, option="--idle-timeout", zero="never")


def _scope(ctx: CommandContext) -> Scope:
    return current_scope(project=ctx.project, config_file=ctx.config_file)


# -- talking to a daemon ---------------------------------------------------------------------------


def ask(sock_path: Path, request: dict[str, Any], *, timeout: float = 5.0) -> dict[str, Any] | None:
    """One request to the daemon at ``sock_path``; its answer, or None when nobody answers.
    ConfigError when what is there is not this user's daemon (``trust``): nothing is sent."""
    try:
        sock = connect_verified(str(sock_path), timeout=timeout)
    except UntrustedDaemon as exc:
        raise ConfigError(
            f"not using the session daemon at {exc.path}: {exc.why}",
            reason="unsafe_runtime_dir",
            hint="remove it, or set XDG_RUNTIME_DIR to a directory of your own",
        ) from None
    if sock is None:
        return None
    try:
        protocol.send(sock, {"t": "hello", "protocol": protocol.PROTOCOL_VERSION})
        hello = protocol.receive(sock)
        if hello is None or hello.get("protocol") != protocol.PROTOCOL_VERSION:
            return {"t": "hello", **hello} if hello is not None else None
        protocol.send(sock, request)
        return protocol.receive(sock)
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        sock.close()


def status_of(sock_path: Path, *, settled: bool = False, timeout: float = 5.0) -> dict[str, Any] | None:
    """The daemon's status answer; ``settled``: after its eager servers' first attempts."""
    answer = ask(sock_path, {"t": "status", "settled": settled}, timeout=timeout)
    return answer if answer is not None and answer.get("t") == "status" else None


def _state_pid(sock_path: Path) -> int | None:
    import json

    try:
        data = json.loads(Path(state_path(sock_path)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pid = data.get("pid") if isinstance(data, dict) else None
    return pid if isinstance(pid, int) and pid > 0 else None


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.005
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutFailed(
                f"the session daemon did not {what} within {timeout:g} s", reason="daemon_timeout"
            )
        time.sleep(delay)  # polling another process: nothing to wait on but its socket and pid
        delay = min(delay * 2, 0.1)


# -- start -----------------------------------------------------------------------------------------


def spawn(
    scope: Scope,
    *,
    idle_timeout_s: float,
    environ: Mapping[str, str] | None = None,
    owner_pid: int | None = None,
) -> DaemonStatus:
    """Start the scope's daemon detached, or find the one already running."""
    sock = Path(socket_path(scope))
    info = status_of(sock)
    if info is not None:
        return DaemonStatus("already-running", str(sock), info)
    env = dict(os.environ if environ is None else environ)
    argv = [sys.executable, "-m", "orbmcp", "--project", scope.project_dir]
    if scope.config_file is not None:
        argv += ["--config", scope.config_file]
    argv += ["daemon", "start", "--foreground", "--idle-timeout", f"{idle_timeout_s:g}"]
    if owner_pid is not None:
        argv += ["--owner-pid", str(owner_pid)]
    errors = sock.with_suffix(".err")
    try:
        from orbmcp.session.daemon_scope import make_private_dir

        make_private_dir(sock.parent)
    except UnsafeDirectory as exc:
        raise ConfigError(str(exc), reason="unsafe_runtime_dir") from None
    with os.fdopen(fs.open_private(errors), "wb") as err_file:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            env=env,
            cwd=os.getcwd(),
            start_new_session=True,  # no terminal, no signals from this shell's Ctrl-C
            close_fds=True,
        )

    found: list[dict[str, Any]] = []

    def answered() -> bool:
        answer = status_of(sock)
        if answer is not None:
            found.append(answer)
            return True
        code = proc.poll()
        if code is not None and code != ALREADY_RUNNING_STATUS:
            detail = _first_line(errors)
            raise ConnectionFailed(
                f"the session daemon exited at start (status {code})" + (f": {detail}" if detail else ""),
                reason="daemon_start_failed",
            )
        return False

    _wait(answered, START_TIMEOUT_S, "answer")
    with contextlib.suppress(OSError):
        errors.unlink()
    # Each eager server's first attempt is bounded by its own timeoutMs; wait for them all.
    settled = status_of(sock, settled=True, timeout=STARTUP_SETTLE_TIMEOUT_S) or found[-1]
    return DaemonStatus("started" if proc.poll() is None else "already-running", str(sock), settled)


def _first_line(path: Path) -> str:
    from orbmcp.redact import redact

    try:
        text = path.read_text(encoding="utf-8", errors="replace")[-4000:]
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    return redact(lines[-1])[:300] if lines else ""


def start(
    ctx: CommandContext,
    idle_timeout: str | None = None,
    foreground: bool = False,
    owner_pid: int | None = None,
) -> DaemonStatus:
    from orbmcp.daemon.owner import OwnerGone, check_owner

    timeout = idle_timeout_s(idle_timeout)
    if owner_pid is not None:
        try:
            check_owner(owner_pid)
        except OwnerGone as exc:
            raise UsageError(f"--owner-pid {owner_pid}: {exc}", reason="no_such_process") from None
    scope = _scope(ctx)
    if not foreground:
        return spawn(scope, idle_timeout_s=timeout, owner_pid=owner_pid)
    return _foreground(ctx, scope, timeout, owner_pid)


def _foreground(ctx: CommandContext, scope: Scope, timeout: float, owner_pid: int | None) -> DaemonStatus:
    from orbmcp.daemon.owner import OwnerGone
    from orbmcp.daemon.server import AlreadyRunning, run_foreground

    sock = Path(socket_path(scope))
    try:
        reason = run_foreground(
            scope,
            environ=os.environ,
            cwd=Path.cwd(),
            idle_timeout_s=timeout,
            notify=lambda: ctx.ui.notify(f"session daemon serving on {sock} (pid {os.getpid()})"),
            owner_pid=owner_pid,
        )
    except OwnerGone as exc:
        raise UsageError(f"--owner-pid {owner_pid}: {exc}", reason="no_such_process") from None
    except AlreadyRunning:
        raise SystemExit(ALREADY_RUNNING_STATUS) from None
    except UnsafeDirectory as exc:
        raise ConfigError(str(exc), reason="unsafe_runtime_dir") from None
    return DaemonStatus("stopped-foreground", str(sock), None, reason=reason)


# -- stop, restart, status -----------------------------------------------------------------------------


def stop_scope(scope: Scope) -> DaemonStatus:
    sock = Path(socket_path(scope))
    info = status_of(sock)
    if info is None:
        pid = _state_pid(sock)
        if pid is not None and processes.alive(pid) and sock.exists():
            # It does not answer (hung, or another protocol version): ask the process itself.
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
            _wait(lambda: not processes.alive(pid), STOP_TIMEOUT_S, "stop")
            return DaemonStatus("stopped", str(sock))
        return DaemonStatus("not-running", str(sock))
    pid = info.get("pid")
    ask(sock, {"t": "stop"})
    _wait(
        lambda: not sock.exists() and not (isinstance(pid, int) and processes.alive(pid)),
        STOP_TIMEOUT_S,
        "stop",
    )
    return DaemonStatus("stopped", str(sock), None)


def stop(ctx: CommandContext) -> DaemonStatus:
    here = _serving_here(ctx)
    if here is not None:
        # Run inside the daemon (a forwarded `/mcp daemon stop`): asking its own socket would
        # block the loop that answers it. It stops once this answer has reached the client.
        here.stop_after_this_connection()
        return DaemonStatus("stopped", str(here.socket_file), None)
    return stop_scope(_scope(ctx))


def _serving_here(ctx: CommandContext) -> Any:
    """The daemon that runs this command, when it runs inside one (it answers about itself)."""
    if ctx.sessions is None or ctx.sessions.daemon_pid != os.getpid():
        return None
    from orbmcp.daemon.server import running

    return running[0] if running else None


def restart(ctx: CommandContext, idle_timeout: str | None = None) -> DaemonStatus:
    if _serving_here(ctx) is not None:
        raise UsageError(
            "the session daemon cannot restart itself from a command it runs",
            hint="run `orbmcp daemon restart` in a shell",
            reason="daemon_restart_inside",
        )
    scope = _scope(ctx)
    timeout = idle_timeout_s(idle_timeout)
    stop_scope(scope)
    started = spawn(scope, idle_timeout_s=timeout)
    return DaemonStatus("restarted", started.socket, started.info)


def status(ctx: CommandContext) -> DaemonStatus:
    here = _serving_here(ctx)
    if here is not None:
        return DaemonStatus("status", str(here.socket_file), here.status())
    sock = Path(socket_path(_scope(ctx)))
    return DaemonStatus("status", str(sock), status_of(sock))
