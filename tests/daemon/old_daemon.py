"""A stand-in for a daemon of an older orbmcp: it answers every hello with protocol 0.

Usage: old_daemon.py SOCKET_PATH. It writes the state file beside the socket (as a real daemon
does), serves until SIGTERM, then removes both.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
from pathlib import Path


def main() -> None:
    path = Path(sys.argv[1])
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.umask(0o177)  # a socket of our own, 0600, as a real daemon makes it
    if path.exists():
        path.unlink()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    path.with_suffix(".json").write_text(json.dumps({"pid": os.getpid(), "protocol": 0}))

    def stop(signum: int, frame: object) -> None:
        path.unlink(missing_ok=True)
        path.with_suffix(".json").unlink(missing_ok=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)  # the client's hello, whatever version it speaks
            body = json.dumps({"t": "hello", "protocol": 0}).encode()
            conn.sendall(struct.pack(">I", len(body)) + body)


if __name__ == "__main__":
    main()
