"""Helpers for the session daemon tests: a scope of its own per test, the CLI as real processes.

The daemon and its clients are real processes talking over the real Unix socket: that is the
point of these tests. Every daemon a test starts is stopped at teardown (and killed, by the pid
in its state file, if it does not stop).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orbmcp.session.daemon_scope import current_scope, socket_path, state_path
from tests.timeouts import LONG_GUARD_S, generous_servers, scaled

ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT_S = LONG_GUARD_S


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Scoped:
    """One scope (global dir + project dir) with its config file, and the CLI run inside it."""

    home: Path
    project: Path
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def config(self) -> Path:
        return self.home / "mcp.json"

    def write(self, servers: Mapping[str, Any], **top: Any) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.config.write_text(json.dumps({"mcpServers": generous_servers(servers), **top}), encoding="utf-8")

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ORBMCP_")}
        env.update({"ORB_AGENT_DIR": str(self.home), "PYTHONPATH": str(ROOT), **self.extra_env, **extra})
        env.pop("NO_COLOR", None)
        return env

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "orbmcp", *args]

    def run(
        self,
        *args: str,
        stdin: str | None = None,
        timeout: float = CLI_TIMEOUT_S,
        process: bool = False,
        **env: str,
    ) -> Run:
        """``orbmcp ARGS`` as a client of the scope's daemon: run in this process (``run_cli``,
        which goes through the same client code to the daemon, a real process on the real socket)
        where it can be, else as a process of its own: with ``process``, for a daemon in the
        foreground (the command is the daemon), and from a thread or inside an event loop (a
        concurrent client; ``run_cli`` swaps process-wide state and runs its own loop). A daemon
        started in this process is its child, as one a command auto-starts is: ended, it is a
        zombie until reaped, which orbmcp and ``alive`` count as gone."""
        if not (process or "--foreground" in args or _busy_here()):
            from tests.cli import run_cli

            done = run_cli(*args, env=self.env(**env), cwd=self.project, stdin=stdin or "", timeout=timeout)
            return Run(done.code, done.stdout, done.stderr)
        proc = subprocess.run(
            self.argv(*args),
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(**env),
            cwd=self.project,
            timeout=timeout,
            check=False,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def run_here(self, *args: str, stdin: str = "", **env: str) -> Run:
        """The same command line run one-shot in this process (``tests.cli.run_cli``): what a
        daemon's answer is compared with, without an interpreter start per line."""
        from tests.cli import run_cli

        done = run_cli(*args, "--no-daemon", env=self.env(**env), cwd=self.project, stdin=stdin)
        return Run(done.code, done.stdout, done.stderr)

    def popen(self, *args: str, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(**env),
            cwd=self.project,
        )

    @property
    def socket(self) -> Path:
        scope = current_scope(environ={"ORB_AGENT_DIR": str(self.home)}, cwd=self.project)
        return Path(socket_path(scope))

    def daemon_pid(self) -> int | None:
        try:
            data = json.loads(Path(state_path(self.socket)).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        pid = data.get("pid")
        return pid if isinstance(pid, int) else None

    def start(self, *extra: str) -> Any:
        started = self.run("daemon", "start", "--json", *extra)
        assert started.code == 0, started.err
        return started.json()

    def stop(self) -> None:
        pid = self.daemon_pid()
        self.run("daemon", "stop")
        if pid is not None and alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _busy_here() -> bool:
    """Whether this is a thread or an event loop, where ``run_cli`` cannot run."""
    if threading.current_thread() is not threading.main_thread():
        return True
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def scope_in(tmp_path: Path) -> Scoped:
    """A scope of its own under ``tmp_path``: an agent home and an empty project directory."""
    project = tmp_path / "project"
    project.mkdir()
    return Scoped(home=tmp_path / "agent", project=project)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (our own child, not yet waited for) is dead for these tests.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def accepting(path: Path) -> bool:
    """Whether something still listens on the Unix socket at ``path``: a SIGKILLed daemon's
    threads may close its descriptors a moment after its pid turned into a zombie."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def wait_for(predicate: Any, timeout: float = 30.0, what: str = "condition") -> None:
    """Poll a condition of another process (its pid, a file it writes); fail after ``timeout``
    seconds on the suite's timeout scale."""
    deadline = time.monotonic() + scaled(timeout)
    delay = 0.01
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def records(path: Path) -> list[dict[str, Any]]:
    """Messages a ``raw.py --record`` server received."""
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def methods(path: Path) -> list[str]:
    return [str(m.get("method")) for m in records(path) if "method" in m]


@contextlib.contextmanager
def daemon(scoped: Scoped, *extra: str) -> Iterator[Any]:
    info = scoped.start(*extra)
    try:
        yield info
    finally:
        scoped.stop()
