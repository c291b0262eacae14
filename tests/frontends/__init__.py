"""Shared helpers for the front-end tests: configs, environments, and orbmcp on a pseudo-terminal.

Command lines whose process is not the point run in-process through ``tests.cli.run_cli``.
"""

from __future__ import annotations

import json
import os
import platform
import pty
import select
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.servers.launch import server_cmd
from tests.timeouts import generous_servers, scaled

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
PY = sys.executable
# The syscalls that tell a child's main thread waits for terminal input (``/proc/PID/syscall``),
# per architecture: numbers differ between them. poll/select and their p-variants (aarch64 and
# riscv64 only have the p-variants).
INPUT_SYSCALLS: dict[str, frozenset[str]] = {
    "x86_64": frozenset({"7", "23", "270", "271"}),
    "aarch64": frozenset({"72", "73"}),
    "riscv64": frozenset({"72", "73"}),
}


def input_syscalls() -> frozenset[str]:
    """The terminal-input syscall numbers of this machine; skips the test where they are not known."""
    import pytest

    numbers = INPUT_SYSCALLS.get(platform.machine())
    if numbers is None:
        pytest.skip(f"no syscall numbers for {platform.machine()!r} in tests/frontends/__init__.py")
    return numbers


def env_for(config: Path | None = None, **extra: str) -> dict[str, str]:
    """The test's environment (its isolated ORB_AGENT_DIR included) for an orbmcp run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORBMCP_")}
    env["PYTHONPATH"] = str(ROOT)
    env.pop("NO_COLOR", None)
    env.pop("CI", None)
    if config is not None:
        env["ORBMCP_CONFIG"] = str(config)
    env.update(extra)
    return env


def write_config(directory: Path, servers: Mapping[str, Any], name: str = "mcp.json") -> Path:
    """``servers`` as a config file, each with the suite's connect timeout unless it states one."""
    path = directory / name
    path.write_text(json.dumps({"mcpServers": generous_servers(servers)}))
    return path


def everything_entry(**extra: Any) -> dict[str, Any]:
    """A stdio server entry running tests/servers/everything.py."""
    command, *args = server_cmd("everything")
    return {"command": command, "args": args, **extra}


# Servers that need no connection: completion, status and config commands stay offline.
OFFLINE_SERVERS: dict[str, Any] = {
    "alpha": {"command": "true", "enabled": False},
    "beta": {"command": "true", "disabled": True, "lifecycle": "eager"},
    "web": {"url": "https://example.invalid/mcp", "auth": {"type": "oauth"}, "enabled": False},
}


class Pty:
    """A child process on a pseudo-terminal, read with deadlines (no tmux, no sleeps)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], *, cols: int = 120) -> None:
        import fcntl
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))

        def controlling_terminal() -> None:
            # A session of its own with the pty as controlling terminal, so Ctrl-C typed into
            # the pty becomes a SIGINT for the child, as in a real terminal.
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            env=dict(env),
            preexec_fn=controlling_terminal,
            close_fds=True,
        )
        os.close(slave)
        self.buffer = b""

    def read_until(self, needle: bytes, timeout: float = 30) -> bytes:
        """Everything read so far up to and including ``needle``; consumes it from the buffer."""
        deadline = time.monotonic() + scaled(timeout)
        while needle not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {needle!r}; got {self.buffer[-2000:]!r}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    if needle not in self.buffer:
                        raise AssertionError(
                            f"terminal closed before {needle!r}; got {self.buffer[-2000:]!r}"
                        )
                    break
                self.buffer += chunk
        head, _, rest = self.buffer.partition(needle)
        self.buffer = rest
        return head + needle

    def wait_idle(self, timeout: float = 30) -> None:
        """Until the child waits for terminal input (poll/select). A Ctrl-C that arrives while
        readline is busy is only seen at the next key (a CPython readline limitation)."""
        self._wait_main_thread_in(input_syscalls(), timeout)

    def _wait_main_thread_in(self, syscalls: frozenset[str], timeout: float) -> None:
        deadline = time.monotonic() + scaled(timeout)
        path = f"/proc/{self.proc.pid}/syscall"
        while time.monotonic() < deadline:
            try:
                with open(path) as f:
                    nr = f.read().split(" ", 1)[0]
            except OSError:
                return  # no /proc: best effort
            if nr in syscalls:
                return
            select.select([], [], [], 0.01)
        raise AssertionError(f"the child's main thread never entered {sorted(syscalls)}")

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + scaled(timeout)
        while self.proc.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError("the child did not exit in time")
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self.buffer += os.read(self.master, 65536)
                except OSError:
                    pass
        return int(self.proc.returncode)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=scaled(30))
        try:
            os.close(self.master)
        except OSError:
            pass
