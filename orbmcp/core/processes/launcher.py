"""A parent-death signal for stdio servers (Linux): they get SIGTERM when the orbmcp process or
daemon that spawned them dies, even by SIGKILL.

``PR_SET_PDEATHSIG`` must be set by the child itself, between fork and exec. ``preexec_fn`` could
do it, but running Python in a forked child of a threaded process (the daemon, an agent host, the
SDK's worker threads) can deadlock on a lock another thread held at the fork, and it makes
``subprocess`` give up its ``vfork`` fast path. So the child execs a tiny launcher instead, which
sets the signal on itself and execs the server (same pid, same process group, the signal kept
across that exec):

- ``setpriv --pdeathsig TERM --`` from util-linux where it knows the option: a C binary, ~1-2 ms
  per spawn (checked once per process);
- else ``python -I -S -c`` with ctypes' ``prctl``: ~30 ms per spawn, and it exits at once when
  orbmcp died before the signal was set (``getppid`` changed).

The signal is tied to the spawning *thread*: orbmcp spawns on its event loop's thread, which lives
as long as the servers it owns. It is a backstop: a server also sees stdin EOF when orbmcp dies,
and the next run reaps whatever survived (``reaper``). Elsewhere (macOS) nothing is wrapped.

Because the launcher, not ``subprocess``, execs the server, a missing or non-executable command
would surface only as an exit; ``check_command`` finds those first, as ``subprocess`` would.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

PDEATHSIG = "TERM"
# argv: <expected parent pid> <command> [args...]
_PYTHON_LAUNCHER = (
    "import ctypes,os,signal,sys\n"
    "ctypes.CDLL(None,use_errno=True).prctl(1,signal.SIGTERM)\n"
    "os.getppid()==int(sys.argv[1]) or os._exit(1)\n"
    "try:os.execvp(sys.argv[2],sys.argv[2:])\n"
    "except OSError as e:\n"
    " sys.stderr.write(f'orbmcp: cannot run {sys.argv[2]}: {e.strerror}\\n');os._exit(127)\n"
)


class _Unchecked:
    pass


_setpriv: str | _Unchecked | None = _Unchecked()


def _setpriv_with_pdeathsig() -> str | None:
    """util-linux's setpriv, if it is there and knows ``--pdeathsig`` (2.33+); checked once."""
    global _setpriv
    if isinstance(_setpriv, _Unchecked):
        found = shutil.which("setpriv")
        if found is not None:
            try:
                probe = subprocess.run(
                    [found, "--pdeathsig", PDEATHSIG, "--", "true"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=5,
                    check=False,
                )
                found = found if probe.returncode == 0 else None
            except (OSError, subprocess.SubprocessError):
                found = None
        _setpriv = found
    return _setpriv


def launch_argv(argv: Sequence[str], *, platform: str = sys.platform) -> list[str]:
    """``argv`` wrapped so the server gets the parent-death signal; unchanged off Linux."""
    if platform != "linux":
        return list(argv)
    setpriv = _setpriv_with_pdeathsig()
    if setpriv is not None:
        return [setpriv, "--pdeathsig", PDEATHSIG, "--", *argv]
    if sys.executable and os.access(sys.executable, os.X_OK):
        return [sys.executable, "-I", "-S", "-c", _PYTHON_LAUNCHER, str(os.getpid()), *argv]
    return list(argv)


class BrokenSymlink(FileNotFoundError):
    """The command is a symbolic link whose target does not exist (an uninstalled package's
    leftover): said as such, since "command not found" would send the person looking on PATH."""

    def __init__(self, command: str, link: str, target: str) -> None:
        super().__init__(errno.ENOENT, f"broken symlink to {target}", command)
        self.link = link
        self.target = target


def _broken_link(command: str, path: str) -> BrokenSymlink | None:
    if not os.path.islink(path):
        return None
    try:
        target = os.readlink(path)
    except OSError:
        return None
    resolved = os.path.join(os.path.dirname(path), target)
    return BrokenSymlink(command, path, os.path.normpath(resolved))


def check_command(command: str, env: Mapping[str, str], cwd: str | None) -> None:
    """Raise what ``subprocess`` would for a command that cannot start: ``FileNotFoundError``
    (no such file, or not on ``PATH``; ``BrokenSymlink`` when what is there is a dangling link),
    ``PermissionError`` (not executable, a directory) or ``OSError(ENOEXEC)`` (neither a script
    with ``#!`` nor an ELF binary)."""
    if os.sep in command:
        path = command if os.path.isabs(command) else os.path.join(cwd or os.getcwd(), command)
        if not os.path.exists(path):
            raise _broken_link(command, path) or FileNotFoundError(
                errno.ENOENT, os.strerror(errno.ENOENT), command
            )
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), command)
    else:
        search = env.get("PATH", os.defpath)
        found = shutil.which(command, path=search)
        if found is None:
            # Not on PATH: a dangling link of that name in a PATH directory is why, say so.
            links = (_broken_link(command, os.path.join(d, command)) for d in search.split(os.pathsep) if d)
            raise next((b for b in links if b is not None), None) or FileNotFoundError(
                errno.ENOENT, os.strerror(errno.ENOENT), command
            )
        path = found
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError:
        return  # unreadable but executable: let the exec decide
    if not magic.startswith((b"#!", b"\x7fELF")):
        raise OSError(errno.ENOEXEC, os.strerror(errno.ENOEXEC), command)


__all__ = ["PDEATHSIG", "BrokenSymlink", "check_command", "launch_argv"]
