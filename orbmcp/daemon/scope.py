"""Which daemon serves this command line: the scope, and where its socket lives. Standard library only.

A daemon serves one scope: the user, the global dir, the project dir and the explicit ``--config``
file. Commands of another scope never reach it. Its socket and state file sit in a private
directory (0700, owned by the user, nobody else may write to it): ``$XDG_RUNTIME_DIR/orbmcp`` when
that is the user's own, else ``<tmp>/orbmcp-<uid>``. Names are hashes of the scope, so a socket
path stays under the OS limit whatever the directories' names.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from orbmcp import environment
from orbmcp.config import paths

# sun_path is 108 bytes on Linux, 104 on the BSDs and macOS; keep room for the terminating NUL.
MAX_SOCKET_PATH = 100


class UnsafeDirectory(Exception):
    """The runtime directory exists but is not private to this user: refuse to use it."""


@dataclass(frozen=True)
class Scope:
    uid: int
    global_dir: Path
    project_dir: Path
    config_file: Path | None

    @property
    def key(self) -> str:
        parts = [str(self.uid), str(self.global_dir), str(self.project_dir), str(self.config_file or "")]
        return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:20]

    def describe(self) -> dict[str, str | int | None]:
        return {
            "uid": self.uid,
            "globalDir": str(self.global_dir),
            "projectDir": str(self.project_dir),
            "configFile": None if self.config_file is None else str(self.config_file),
        }


def current_scope(
    *,
    project: Path | None = None,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Scope:
    """The scope of a command line: its ``--project``/``--config`` (or their env vars) and cwd."""
    env = os.environ if environ is None else environ
    work = (cwd if cwd is not None else Path.cwd()).absolute()
    if project is None:
        project = environment.project_dir(env)
    if config_file is None:
        config_file = environment.config_file(env)
    gdir = paths.global_dir(env)
    gdir = gdir if gdir.is_absolute() else work / gdir
    config = None
    if config_file is not None:
        config = config_file.expanduser()
        config = config if config.is_absolute() else work / config
    return Scope(os.getuid(), gdir, paths.project_dir(project, cwd=work), config)


def runtime_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg):
        try:
            info = os.stat(xdg)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            return Path(xdg) / "orbmcp"
    return Path(tempfile.gettempdir()) / f"orbmcp-{os.getuid()}"


def socket_path(scope: Scope, environ: Mapping[str, str] | None = None) -> Path:
    base = runtime_dir(environ)
    path = base / f"{scope.key}.sock"
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    # A long XDG_RUNTIME_DIR or TMPDIR: /tmp is short on every POSIX system.
    # The directory is created 0700 and checked (owner, mode) before use: no /tmp race.
    return Path("/tmp") / f"orbmcp-{os.getuid()}" / f"{scope.key[:16]}.sock"  # noqa: S108


def state_path(sock: Path) -> Path:
    """The daemon's state file (pid, start time, protocol) beside its socket."""
    return sock.with_suffix(".json")


def check_private_dir(directory: Path) -> None:
    """Refuse, naming the path, a directory that is not ours alone (see the module docstring)."""
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeDirectory(f"{directory} is not a directory (a symlink or a file): refusing to use it")
    if info.st_uid != os.getuid():
        raise UnsafeDirectory(f"{directory} belongs to uid {info.st_uid}, not to you: refusing to use it")
    if stat.S_IMODE(info.st_mode) & 0o022:
        raise UnsafeDirectory(f"{directory} is writable by others (mode {stat.S_IMODE(info.st_mode):o})")


def make_private_dir(directory: Path) -> None:
    """Create the runtime directory 0700 (its parent must exist), then check it as above."""
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    check_private_dir(directory)
    if stat.S_IMODE(os.lstat(directory).st_mode) & 0o077:
        os.chmod(directory, 0o700)
