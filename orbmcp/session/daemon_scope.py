"""Which daemon serves this command line: the scope, and where its socket lives. Standard library only.

A daemon serves one user's configuration: the user, the global dir and the explicit ``--config``
file make its key, so every directory of that user shares it. The project dir is part of each
command's scope, not of the daemon's: the daemon keeps one session per configuration identity
(``daemon/identities.py``), so a project that adds servers or trust gets its own session inside
the same daemon. Commands of another key never reach it. Its socket and state file sit in a private
directory (0700, owned by the user: one that is not is refused, never repaired; the client checks
the same before it connects, ``trust.py``): ``$XDG_RUNTIME_DIR/orbmcp`` when
that is the user's own, else ``<tmp>/orbmcp-<uid>``. Names are hashes of the scope, so a socket
path stays under the OS limit whatever the directories' names.
"""

from __future__ import annotations

import os
import stat
import sys
from collections import namedtuple
from collections.abc import Mapping

from orbmcp import environment
from orbmcp.session.daemon_trust import UntrustedDaemon, check_private

# The daemon's client computes a scope on every invocation, so this module imports neither
# ``typing`` (its own TYPE_CHECKING), ``pathlib`` nor ``hashlib``, whose import loads OpenSSL
# (~2.5 ms): SHA-256 comes from the interpreter's builtin module, the same digest.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
    from typing import NamedTuple

    class _ScopeFields(NamedTuple):
        uid: int
        global_dir: str
        project_dir: str
        config_file: str | None

else:
    _ScopeFields = namedtuple("_ScopeFields", "uid global_dir project_dir config_file")
    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256
        else:
            from _sha256 import sha256
    except ImportError:  # a build without the builtin module
        from hashlib import sha256

# sun_path is 108 bytes on Linux, 104 on the BSDs and macOS; keep room for the terminating NUL.
MAX_SOCKET_PATH = 100
DEFAULT_GLOBAL_DIR = "~/.orb/agent"


class UnsafeDirectory(Exception):
    """The runtime directory exists but is not private to this user: refuse to use it."""


def sha256_hex(data: bytes) -> str:
    """``hashlib.sha256(data).hexdigest()``, without loading OpenSSL (see above)."""
    return sha256(data).hexdigest()


class Scope(_ScopeFields):
    """The user, and normalised absolute paths (strings: the client computes this on every
    invocation and must not import pathlib): ``uid``, ``global_dir``, ``project_dir``,
    ``config_file`` (None: the config files of the global and project dirs)."""

    __slots__ = ()

    @property
    def key(self) -> str:
        """The daemon's key: the project dir is left out, so every directory shares one daemon."""
        parts = [str(self.uid), self.global_dir, self.config_file or ""]
        return sha256_hex("\0".join(parts).encode("utf-8", "surrogatepass"))[:20]

    def describe(self) -> dict[str, str | int | None]:
        return {
            "uid": self.uid,
            "globalDir": self.global_dir,
            "projectDir": self.project_dir,
            "configFile": self.config_file,
        }


def _absolute(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def current_scope(
    *,
    project: str | os.PathLike[str] | None = None,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Scope:
    """The scope of a command line: its ``--project``/``--config`` (or their env vars) and cwd.

    The global and project dirs resolve as the config loader resolves them (``~`` expanded,
    relative to the working directory).
    """
    env = os.environ if environ is None else environ
    work = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
    project_text = os.fspath(project) if project is not None else environment.text(environment.PROJECT, env)
    config_text = (
        os.fspath(config_file) if config_file is not None else environment.text(environment.CONFIG, env)
    )
    gdir = environment.text(environment.GLOBAL_DIR, env) or DEFAULT_GLOBAL_DIR
    return Scope(
        os.getuid(),
        _absolute(gdir, work),
        _absolute(project_text, work) if project_text else work,
        _absolute(config_text, work) if config_text else None,
    )


def runtime_dir(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg):
        try:
            info = os.stat(xdg)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            return os.path.join(xdg, "orbmcp")
    tmp = env.get("TMPDIR", "")
    return os.path.join(tmp if os.path.isabs(tmp) else "/tmp", f"orbmcp-{os.getuid()}")  # noqa: S108


def socket_path(scope: Scope, environ: Mapping[str, str] | None = None) -> str:
    path = os.path.join(runtime_dir(environ), f"{scope.key}.sock")
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    # A long XDG_RUNTIME_DIR or TMPDIR: /tmp is short on every POSIX system.
    # The directory is created 0700 and checked (owner, mode) before use: no /tmp race.
    return os.path.join("/tmp", f"orbmcp-{os.getuid()}", f"{scope.key[:16]}.sock")  # noqa: S108


def state_path(sock: str | os.PathLike[str]) -> str:
    """The daemon's state file (pid, start time, protocol) beside its socket."""
    return os.path.splitext(os.fspath(sock))[0] + ".json"


def check_private_dir(directory: str | os.PathLike[str]) -> None:
    """Refuse, naming the path, a directory that is not ours alone (see the module docstring).

    The same rule the client applies (``trust.check_private``): owned by this user, a real
    directory, no permission for group or others. A directory orbmcp made is 0700; one that is
    not was made, or loosened, by someone else: it is refused, never repaired."""

    try:
        check_private(os.fspath(directory), kind="directory")
    except FileNotFoundError:
        return
    except UntrustedDaemon as exc:
        raise UnsafeDirectory(f"{exc.path} {exc.why}: refusing to use it") from None


def make_private_dir(directory: str | os.PathLike[str]) -> None:
    """Create the runtime directory 0700 (``fs.ensure_private_dir``), or check the one there: one
    open to others is refused before anything could tighten it."""
    from pathlib import Path  # the daemon's, never the client's: see the top of this module

    from orbmcp import fs

    check_private_dir(directory)
    try:
        fs.ensure_private_dir(Path(directory))
    except fs.UnsafePathError as exc:
        raise UnsafeDirectory(f"{exc}") from None
    check_private_dir(directory)
