"""Red-team kit: a fake session daemon on the socket path an orbmcp client would use.

Usage: fake_daemon.py SOCKET RECORD [--dir-mode OCTAL] [--owner UID] [--listen-as UID] [--script JSON]
                      [--leave-after-hello]

It creates the socket's directory (mode ``--dir-mode``, 0700 by default) and listens there, the
way another local user could before the real daemon ever starts. Run as root it can impersonate
another user: ``--owner UID`` hands the directory to UID and becomes UID before binding (another
user's directory and socket); ``--listen-as UID`` binds as root in a private directory, then
becomes UID before ``listen()`` (a private-looking socket whose listening process is someone
else: only ``SO_PEERCRED`` tells). It records to RECORD (JSON lines) every connection, every byte
and every frame it receives, answers a hello (protocol 2, asking for the digests of ``env`` names
with its own nonce), then sends the frames of ``--script`` (a JSON list) after the client's
request, recording the answer to each one that has an ``id``, and ends with ``exit`` 0. It prints
``ready`` once listening and serves until killed. ``--leave-after-hello`` closes each connection
right after its hello, the request unread (what a daemon that stops on its idle timeout does to a
client that said hello but had not yet said what it wants).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import sys
from typing import Any, TextIO

PROTOCOL_VERSION = 2
NOBODY = 65534


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return struct.pack(">I", len(body)) + body


def _become(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


class Recorder:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, **event: Any) -> None:
        self.out.write(json.dumps(event) + "\n")
        self.out.flush()


def _receive(conn: socket.socket, record: Recorder) -> dict[str, Any] | None:
    header = b""
    while len(header) < 4:
        chunk = conn.recv(4 - len(header))
        if not chunk:
            record(event="bytes", data=header.decode("latin-1"))
            return None
        header += chunk
    (length,) = struct.unpack(">I", header)
    body = b""
    while len(body) < length:
        chunk = conn.recv(min(length - len(body), 65536))
        if not chunk:
            break
        body += chunk
    record(event="bytes", data=(header + body).decode("latin-1"))
    frame: dict[str, Any] = json.loads(body)
    record(event="frame", frame=frame)
    return frame


def _converse(
    conn: socket.socket, script: list[dict[str, Any]], record: Recorder, leave: bool = False
) -> None:
    hello = _receive(conn, record)
    if hello is None:
        return
    conn.sendall(
        _frame({"t": "hello", "protocol": PROTOCOL_VERSION, "env": ["SECRET_PIN", "OTHER"], "nonce": "n"})
    )
    if leave:
        record(event="left")
        return
    if _receive(conn, record) is None:  # the request: argv, cwd, env, digests
        return
    for frame in script:
        conn.sendall(_frame(frame))
        if "id" in frame and frame.get("t") != "out":
            record(event="answer", to=frame["t"], answer=_receive(conn, record))
    conn.sendall(_frame({"t": "exit", "code": 0}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("socket")
    parser.add_argument("record")
    parser.add_argument("--dir-mode", default="700")
    parser.add_argument("--owner", type=int)
    parser.add_argument("--listen-as", type=int)
    parser.add_argument("--script", default="[]")
    parser.add_argument("--leave-after-hello", action="store_true")
    args = parser.parse_args()
    script = json.loads(args.script)
    record = Recorder(open(args.record, "a", encoding="utf-8"))  # noqa: SIM115 - kept for the life of the process
    directory = os.path.dirname(args.socket)
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, int(args.dir_mode, 8))
    if args.owner is not None:
        os.chown(directory, args.owner, args.owner)
        _become(args.owner)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177 if args.owner is None else 0o111)  # another user's socket: open to all
    server.bind(args.socket)
    os.umask(old)
    if args.listen_as is not None:
        _become(args.listen_as)
    server.listen()
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        record(event="accepted")
        with conn:
            try:
                _converse(conn, script, record, args.leave_after_hello)
            except (OSError, ValueError) as exc:
                record(event="ended", reason=type(exc).__name__)


if __name__ == "__main__":
    sys.exit(main())
