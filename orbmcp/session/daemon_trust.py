"""Is the process at the scope's socket path our own daemon? Standard library only.

The socket's name is predictable (uid, global dir, project dir), and without ``XDG_RUNTIME_DIR``
it lives under the shared ``/tmp``: another local user may create that directory and a socket in
it first. Such a "daemon" would receive the command line, the working directory and the
``ORBMCP_*`` environment, could write to this terminal, read its stdin and ask for URLs to be
opened. So every client of the socket (the forwarding client, ``serve`` through it, ``daemon
status/stop``) connects through ``connect_verified``: the directory and the socket must be this
user's and closed to group and others *before* connecting, and the process that listens must run
as this user (``SO_PEERCRED``) *before* anything is sent. The daemon checks its clients the same
way (``server.peer_uid``).
"""

from __future__ import annotations

# ``_socket``, the C module under ``socket``: the daemon's client connects on every command, and
# ``socket`` (with ``selectors``, ``array``, its enums) costs ~2 ms to import, ``_socket`` ~0.3 ms.
# A caller that needs a ``socket.socket`` (anyio's streams) wraps the descriptor (``detach()``).
import _socket
import os
import stat
import sys


class UntrustedDaemon(Exception):
    """What answers (or would answer) on the socket path is not this user's own daemon."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


def check_private(path: str, *, kind: str) -> None:
    """``path`` (a directory or a socket, as ``kind`` says) is this user's alone, or UntrustedDaemon."""
    info = os.lstat(path)
    is_kind = stat.S_ISDIR(info.st_mode) if kind == "directory" else stat.S_ISSOCK(info.st_mode)
    if not is_kind:
        raise UntrustedDaemon(path, f"is not a {kind} (a symlink or another kind of file)")
    if info.st_uid != os.getuid():
        raise UntrustedDaemon(path, f"belongs to uid {info.st_uid}, not to you (uid {os.getuid()})")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise UntrustedDaemon(path, f"is open to group or others (mode {mode:04o}; 0700/0600 expected)")


def peer_uid(sock: _socket.socket) -> int | None:
    """The uid the listening process had (Linux ``SO_PEERCRED``); None where the OS cannot say."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:  # pragma: no cover - Linux is where this runs
        return None
    creds = sock.getsockopt(_socket.SOL_SOCKET, option, 12)  # struct ucred: three C ints
    return int.from_bytes(creds[4:8], sys.byteorder, signed=True)


def connect_verified(path: str, *, timeout: float) -> _socket.socket | None:
    """A connection to this user's daemon at ``path``; None when there is none (no directory, no
    socket, nobody listening). ``UntrustedDaemon`` when something else is there: nothing has been
    sent to it."""
    directory = os.path.dirname(path) or "."
    try:
        check_private(directory, kind="directory")
        check_private(path, kind="socket")
    except FileNotFoundError:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
        uid = peer_uid(sock)
    except OSError:
        sock.close()
        return None
    if uid is not None and uid != os.getuid():
        sock.close()
        raise UntrustedDaemon(
            path, f"the process listening on it runs as uid {uid}, not as you (uid {os.getuid()})"
        )
    return sock
