"""The start of an SDK-built test server run with ``python -S`` (``tests/servers/launch.py``):
through the test worker's fork server when there is one, else with site-packages put on the path
by hand, without running their .pth files (the coverage start-up among them would trace a server
in which no orbmcp code runs, ~0.08 s of CPU per start).

Imported by the server scripts as a top-level module (their directory is ``sys.path[0]``);
standard library only, as nothing else is importable before ``add()``.

The fork server (``forkserver.py``, started by ``launch.use_forkserver()``, named by
``$ORB_TEST_FORKSERVER``) imported the SDK once; importing it again costs ~0.7 s of CPU per
start, and the suite starts hundreds of servers. ``start()`` hands it this process's argv,
environment, working directory, stdin, stdout and stderr: the forked server reads and writes the
very pipes the client gave this process, which stays as its stand-in (same pid for the client,
same command line): the signals it gets go to the server, it exits as the server did, and killed,
its server is killed too. A config entry that sets ``ORB_TEST_FORKSERVER`` to "" opts out, for
tests about the server's own process (its ancestry, SIGSTOP).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import sysconfig
from pathlib import Path

FORKSERVER_ENV = "ORB_TEST_FORKSERVER"
RELAYED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def start() -> None:
    """Run the server through the fork server (never returns), or prepare to run it here."""
    path = os.environ.get(FORKSERVER_ENV)
    if path:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(path)
        except OSError:  # not listening yet, or gone: run here
            conn.close()
        else:
            sys.exit(_stand_in(conn))
    add()


def add() -> None:
    """Add the interpreter's site-packages (its venv's, under a venv) to ``sys.path``."""
    prefix = Path(sys.executable).parent.parent
    if not (prefix / "pyvenv.cfg").exists():
        prefix = Path(sys.prefix)
    paths = sysconfig.get_paths(vars={"base": str(prefix), "platbase": str(prefix)})
    for key in ("purelib", "platlib"):
        if paths[key] not in sys.path:
            sys.path.append(paths[key])


def _stand_in(conn: socket.socket) -> int:
    script = os.path.abspath(sys.argv[0])
    body = json.dumps(
        {"script": script, "argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}
    ).encode()
    socket.send_fds(conn, [struct.pack("!I", len(body))], [0, 1, 2])
    conn.sendall(body)
    # The server holds the pipes now; this process keeps none of them open (EOF is the server's).
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    def relay(signum: int, _frame: object) -> None:
        try:
            conn.send(bytes([signum]))
        except OSError:
            pass  # the minder is gone: the server has ended

    for signum in RELAYED:
        signal.signal(signum, relay)
    status = conn.makefile("rb").readline().strip()  # empty: the minder died without a word
    code = int(status) if status else 1
    if code < 0:  # ended by a signal: so does its stand-in
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code & 0xFF
