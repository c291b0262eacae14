"""Helpers that run the servers of this folder as real processes (usable without pytest).

- ``server_cmd("raw", "--hang")`` gives the argv of a stdio server.
- ``run_http_server([...])`` / ``http_server([...])`` run ``everything.py`` on a free loopback port;
  ``http_server_process([...])`` is the same for synchronous tests (e.g. around an in-process CLI run).
- ``LivenessServer`` collects ``"<pid> <role>"`` lines from ``raw.py --liveness`` process trees and
  tells a test when every one of those processes has died (EOF on its connection).
- ``use_forkserver()`` (the suite's conftest, per worker) starts the SDK-built servers as forks of
  a process that imported the SDK once (``forkserver.py``); ``NOT_FORKED`` in an entry's env opts out.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import anyio
from anyio.abc import Process, SocketAttribute, SocketStream, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.servers.sdk_site import FORKSERVER_ENV
from tests.timeouts import HANG_GUARD_S, scaled

SERVERS_DIR = Path(__file__).resolve().parent
LISTENING = b"LISTENING "
MAX_LINE = 256
KILL_WAIT = scaled(10.0)


def python_exe() -> str:
    return sys.executable


# Servers that need nothing outside the standard library run with ``-S``: no site-packages, so
# none of the .pth start-ups either (coverage's subprocess measurement costs ~0.1 s of CPU per
# process, and these are not what it measures). Their liveness descendants do the same.
STDLIB_ONLY = frozenset({"raw", "hostile", "light", "tasks", "relay"})
# The SDK-built servers run with ``-S`` too and put site-packages on their path themselves,
# without its .pth files (the coverage start-up among them): no orbmcp code runs in them.
SDK_BUILT = frozenset({"everything", "asks", "choices", "paged", "reference"})
# An entry's env with this hands its SDK-built server no fork server (tests/servers/sdk_site.py).
NOT_FORKED = {FORKSERVER_ENV: ""}


def server_cmd(name: str, *args: str) -> list[str]:
    """argv running ``tests/servers/<name>.py`` with the test interpreter."""
    script = SERVERS_DIR / (name if name.endswith(".py") else f"{name}.py")
    if not script.is_file():
        raise FileNotFoundError(f"no test server {script}")
    flags = ["-S"] if script.stem in STDLIB_ONLY | SDK_BUILT else []
    return [python_exe(), *flags, str(script), *args]


def use_forkserver() -> None:
    """Start this process's SDK-built servers through a fork server (``forkserver.py``), which
    ends with this process (its stdin's EOF). Not waited for: until it listens, servers start on
    their own."""
    # The minder waits on its server with a pidfd (Linux 5.3+); elsewhere servers start directly.
    if not os.environ.get(FORKSERVER_ENV) and hasattr(os, "pidfd_open"):
        process, socket_path = start_forkserver()
        _FORKSERVERS.append(process)
        os.environ[FORKSERVER_ENV] = socket_path


_FORKSERVERS: list[subprocess.Popen[bytes]] = []


def start_forkserver() -> tuple[subprocess.Popen[bytes], str]:
    """A fork server and the socket it will listen on; closing its stdin ends it."""
    base = tempfile.mkdtemp(prefix="orbmcp-fork-")
    socket_path = os.path.join(base, "sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_") and k != FORKSERVER_ENV}
    with open(os.path.join(base, "stderr"), "wb") as errors:
        process = subprocess.Popen(
            [python_exe(), str(SERVERS_DIR / "forkserver.py"), socket_path],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=env,
            cwd=SERVERS_DIR,
        )
    return process, socket_path


async def stop_process(proc: Process) -> None:
    """SIGKILL (if still running) and reap, even when the caller is being cancelled."""
    with anyio.CancelScope(shield=True):
        if proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        with anyio.move_on_after(KILL_WAIT):
            await proc.aclose()


@dataclass
class HttpServer:
    url: str
    port: int
    process: Process


async def _read_port(proc: Process) -> int:
    assert proc.stdout is not None
    reader = BufferedByteReceiveStream(proc.stdout)
    try:
        line = await reader.receive_until(b"\n", MAX_LINE)
    except anyio.DelimiterNotFound as exc:
        raise RuntimeError(f"everything.py printed {MAX_LINE}+ bytes instead of 'LISTENING <port>'") from exc
    except (anyio.IncompleteRead, anyio.EndOfStream) as exc:
        code = await proc.wait()
        raise RuntimeError(f"everything.py exited with code {code} before announcing its port") from exc
    if not line.startswith(LISTENING):
        raise RuntimeError(f"everything.py printed {line!r} instead of 'LISTENING <port>'")
    return int(line[len(LISTENING) :])


@asynccontextmanager
async def http_server(
    script_args: Sequence[str] = (), *, timeout: float = HANG_GUARD_S, env: Mapping[str, str] | None = None
) -> AsyncIterator[HttpServer]:
    """Run ``everything.py`` over HTTP (``--http 0`` unless ``--sse``/``--http`` is given).

    ``env`` is merged over this process's environment. The process is killed on exit; use
    ``stop_process(server.process)`` to kill it earlier (e.g. to test a server that goes away).
    """
    args = list(script_args)
    sse = "--sse" in args
    if not sse and "--http" not in args:
        args = ["--http", "0", *args]
    proc = await anyio.open_process(
        server_cmd("everything", *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=None,
        env={**os.environ, **env} if env is not None else None,
    )
    try:
        with anyio.fail_after(timeout):
            port = await _read_port(proc)
        path = "/sse" if sse else "/mcp"
        yield HttpServer(url=f"http://127.0.0.1:{port}{path}", port=port, process=proc)
    finally:
        await stop_process(proc)


@dataclass
class HttpServerProcess:
    url: str
    port: int
    process: subprocess.Popen[bytes]


@contextmanager
def http_server_process(
    script_args: Sequence[str] = (),
    *,
    timeout: float = HANG_GUARD_S,
    env: Mapping[str, str] | None = None,
    script: str = "everything",
) -> Iterator[HttpServerProcess]:
    """``http_server`` without an event loop, for synchronous tests. Killed on exit. ``script``
    may name another server of this folder that announces ``LISTENING <port>`` (hostile_http)."""
    args = list(script_args)
    sse = "--sse" in args
    if script == "everything" and not sse and "--http" not in args:
        args = ["--http", "0", *args]
    proc = subprocess.Popen(
        server_cmd(script, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        env={**os.environ, **env} if env is not None else None,
    )
    try:
        assert proc.stdout is not None
        line = b""
        deadline = time.monotonic() + timeout
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or len(line) > MAX_LINE:
                raise RuntimeError(f"everything.py did not announce its port: {line!r}")
            if select.select([proc.stdout], [], [], left)[0]:
                byte = os.read(proc.stdout.fileno(), 1)
                if not byte:
                    raise RuntimeError(f"everything.py exited with code {proc.wait()} before its port")
                line += byte
        if not line.startswith(LISTENING):
            raise RuntimeError(f"everything.py printed {line!r} instead of 'LISTENING <port>'")
        port = int(line[len(LISTENING) :])
        path = "/sse" if sse else "/mcp"
        yield HttpServerProcess(url=f"http://127.0.0.1:{port}{path}", port=port, process=proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=KILL_WAIT)
        if proc.stdout is not None:
            proc.stdout.close()


@asynccontextmanager
async def run_http_server(
    script_args: Sequence[str] = (), *, timeout: float = HANG_GUARD_S, env: Mapping[str, str] | None = None
) -> AsyncIterator[str]:
    """Like ``http_server`` but yields only the URL (``http://127.0.0.1:<port>/mcp`` or ``/sse``)."""
    async with http_server(script_args, timeout=timeout, env=env) as server:
        yield server.url


@dataclass
class Peer:
    pid: int
    role: str
    alive: bool = True


class LivenessServer:
    """TCP listener on 127.0.0.1:0 for ``raw.py --liveness HOST:PORT``.

    Each process of the tree connects, sends ``"<pid> <role>\\n"`` and keeps the connection open
    until it dies, so EOF is proof of death (immune to pid reuse and zombies). On exit, processes
    still connected are SIGKILLed so a failing test leaks nothing; their connection being open
    proves the pid is still theirs.
    """

    def __init__(self, *, kill_survivors: bool = True) -> None:
        self.peers: list[Peer] = []
        self.port = 0
        self._kill_survivors = kill_survivors
        self._changed = anyio.Event()
        self._stack = AsyncExitStack()
        self._tg: TaskGroup | None = None

    @property
    def address(self) -> str:
        """The ``HOST:PORT`` to pass as ``--liveness``."""
        return f"127.0.0.1:{self.port}"

    async def __aenter__(self) -> LivenessServer:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        await self._stack.enter_async_context(listener)
        self.port = listener.extra(SocketAttribute.local_port)
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._tg.start_soon(listener.serve, self._handle)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._kill_survivors:
            self.kill_survivors()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        await self._stack.__aexit__(exc_type, exc, tb)

    def alive_pids(self) -> list[int]:
        return [p.pid for p in self.peers if p.alive]

    def roles(self) -> dict[str, int]:
        """role -> pid of every process that registered (dead or alive)."""
        return {p.role: p.pid for p in self.peers}

    def kill_survivors(self) -> None:
        for pid in self.alive_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    async def wait_registered(self, count: int, timeout: float) -> list[Peer]:
        """Wait until ``count`` processes have registered; raises TimeoutError (``timeout`` is on
        the suite's scale)."""
        with anyio.fail_after(scaled(timeout)):
            while len(self.peers) < count:
                await self._wait_change()
        return list(self.peers)

    async def wait_all_dead(self, timeout: float) -> None:
        """Wait for EOF on every registered connection; raises TimeoutError.

        Raises RuntimeError if nothing ever registered, so an empty tree cannot pass vacuously.
        """
        if not self.peers:
            raise RuntimeError("no process registered with the liveness server")
        with anyio.fail_after(scaled(timeout)):
            while self.alive_pids():
                await self._wait_change()

    async def _wait_change(self) -> None:
        await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _handle(self, stream: SocketStream) -> None:
        async with stream:
            reader = BufferedByteReceiveStream(stream)
            try:
                line = await reader.receive_until(b"\n", MAX_LINE)
                pid, _, role = line.decode().partition(" ")
                peer = Peer(int(pid), role.strip() or "?")
            except (anyio.IncompleteRead, anyio.DelimiterNotFound, anyio.BrokenResourceError, ValueError):
                return
            self.peers.append(peer)
            self._notify()
            try:
                while True:
                    await reader.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                peer.alive = False
                self._notify()
