"""A fork server for the SDK-built test servers: one process per test worker imports the SDK once
and forks a server for each start, instead of every start importing it again (~0.7 s of CPU each:
building the SDK's pydantic models is most of it, and the suite starts hundreds of servers).

    python tests/servers/forkserver.py SOCKET      (stdin: a pipe; its EOF ends the fork server)

A server started with ``-S`` while ``$ORB_TEST_FORKSERVER`` names SOCKET connects to it
(``sdk_site.start()``) and sends its argv, environment and working directory with its stdin,
stdout and stderr. Per start the fork server forks a minder, and the minder forks the server: the
minder relays the signals the stand-in receives, SIGKILLs the server when the stand-in is gone
(killed), and sends back the server's exit status (one line), which the stand-in exits with.
"""

from __future__ import annotations

import json
import os
import random
import runpy
import select
import signal
import socket
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("everything", "asks", "choices", "paged", "reference")
MAX_REQUEST = 1 << 20


def _preload() -> None:
    """Import what the servers import (their module bodies, not their ``__main__`` blocks)."""
    for name in SCRIPTS:
        runpy.run_path(str(HERE / f"{name}.py"), run_name=f"_preload_{name}")


def _read_request(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    head, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
    if len(head) != 4:
        raise ValueError("short request")
    (size,) = struct.unpack("!I", head)
    if size > MAX_REQUEST:
        raise ValueError("request too large")
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("truncated request")
        body += chunk
    return json.loads(body), fds


def _serve(request: dict[str, object], fds: list[int]) -> None:
    """In the server process: become the server the request names (never returns)."""
    code: object = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        env = request["env"]
        assert isinstance(env, dict)
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in env.items()})
        os.chdir(str(request["cwd"]))
        script = str(request["script"])
        argv = request["argv"]
        assert isinstance(argv, list)
        sys.argv = [script, *map(str, argv)]
        random.seed()
        # Standard streams over the descriptors just installed.
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        code = 0
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        code = stop.code
    except BaseException as error:  # reported like an uncaught exception
        import traceback

        traceback.print_exception(error)
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    if code is None:
        os._exit(0)
    if isinstance(code, int):
        os._exit(code & 0xFF)
    print(code, file=sys.stderr, flush=True)
    os._exit(1)


def _mind(conn: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    """In the minder: fork the server, relay signals to it, report how it ended (never returns)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _serve(request, fds)
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    # The server is this process's child until waited for: a signal never misses its pid.
    while True:
        ready, _, _ = select.select([conn, pidfd], [], [])
        if pidfd in ready:
            _, status = os.waitpid(pid, 0)
            try:
                conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            except OSError:
                pass  # the stand-in is gone: nobody to tell
            os._exit(0)
        data = conn.recv(64)
        if not data:  # the stand-in is gone (killed): so is its server
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os._exit(0)
        for signum in data:
            os.kill(pid, signum)


def main(argv: list[str]) -> int:
    path = argv[0]
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # minders are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # Bound only now: until then a server finds no socket and starts on its own.
    listener.bind(path + ".tmp")
    os.rename(path + ".tmp", path)
    listener.listen(64)
    try:
        _accept(listener)
    finally:
        _remove(Path(path))
    return 0


def _remove(socket_path: Path) -> None:
    """The socket, and its directory when nothing went to stderr."""
    socket_path.unlink(missing_ok=True)
    errors = socket_path.parent / "stderr"
    if errors.exists() and errors.stat().st_size == 0:
        errors.unlink()
        socket_path.parent.rmdir()


def _accept(listener: socket.socket) -> None:
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            return  # the test worker is gone
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        try:
            request, fds = _read_request(conn)
        except (OSError, ValueError) as error:
            print(f"forkserver: bad request: {error}", file=sys.stderr, flush=True)
            conn.close()
            continue
        if os.fork() == 0:
            try:
                listener.close()
                _mind(conn, request, fds)
            finally:
                os._exit(1)  # never back into the fork server's loop (or its clean-up)
        conn.close()
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
