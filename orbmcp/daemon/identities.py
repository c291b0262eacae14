"""The daemon's sessions, one per configuration identity.

Every directory of the user reaches the one daemon of their configuration (``scope.Scope.key``);
what a command sees depends on what its directory adds:

- a directory whose project adds nothing (no ``.orb`` file, no other client's project file) has
  the *shared* identity: all such directories use one session, so one process per server. Its
  default root follows the directory of the latest command (as ``serve`` gives servers the roots
  of the agent that declared them last);
- a directory with project configuration is its own identity: its own session, loaded with that
  project's files and trust, its own roots, so the same server name in two projects never
  collides and one project's approval never shows its servers to another directory. Such a
  session runs the global servers it sees as well (their own processes: definitions are not
  shared across identities).

A persistent ``Sessions`` must be entered and left by one task, so each session lives in a task of this
map's task group; leaving the map closes them all, stopping every server (process trees included).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import anyio

from orbmcp.config import imports
from orbmcp.config.clients import client_files
from orbmcp.config.loader import load_config
from orbmcp.config.paths import project_files
from orbmcp.daemon.session import DaemonSession
from orbmcp.errors import ConnectionFailed, cmd
from orbmcp.session.daemon_scope import Scope

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus

    from orbmcp.config.settings import Settings

SHARED = ""  # the identity of every directory whose project adds no configuration
# Each project session holds its own server processes: a client naming ever new directories must
# not grow the daemon without bound.
MAX_PROJECT_SESSIONS = 32
MAX_REMEMBERED_DIRECTORIES = 256  # directories whose candidate files identity_of remembers


def project_adds_config(project_dir: Path, settings: Settings, environ: Mapping[str, str]) -> bool:
    """Whether ``project_dir`` has a file that may add servers: its ``.orb`` files, or a project
    file of another client that the global settings import."""
    return any(os.path.isfile(path) for path in project_config_candidates(project_dir, settings, environ))


def project_config_candidates(
    project_dir: Path, settings: Settings, environ: Mapping[str, str]
) -> tuple[str, ...]:
    """Every file of ``project_dir`` that would add servers if it existed: its ``.orb`` files,
    then the project files of the other clients the global settings import."""
    others = (
        str(f.path)
        for client in imports.active_clients(settings)
        for f in client_files(client, project_dir, environ=environ)
        if f.scope == "project"
    )
    return (*(str(path) for path in project_files(project_dir)), *others)


class SessionMap:
    """The daemon's live sessions by identity (``SHARED`` or a project directory)."""

    def __init__(self, scope: Scope, environ: Mapping[str, str], cwd: Path) -> None:
        self.scope = scope  # the daemon's: its key, and the directory it started in
        self.environ = dict(environ)
        self.cwd = cwd
        # One nonce for the daemon: the client's hello cannot know which session it will use.
        self.nonce = secrets.token_hex(16)
        self.sessions: dict[str, DaemonSession] = {}
        self._tg: TaskGroup | None = None
        self._closing = anyio.Event()
        self._lock = anyio.Lock()
        # Per directory, the files whose existence would make it a project session, for the
        # settings they were worked out under: every command asks (``identity_of``), and only
        # whether they exist may change between commands, not where they are.
        self._candidates: dict[str, tuple[Settings, tuple[str, ...]]] = {}

    @property
    def shared(self) -> DaemonSession:
        return self.sessions[SHARED]

    def identity_of(self, scope: Scope) -> str:
        """``SHARED``, or the project directory when the project adds configuration."""
        if scope.config_file is not None:
            return SHARED  # --config replaces every file layer, the project's included
        settings = self.shared.config.settings
        known = self._candidates.get(scope.project_dir)
        if known is None or known[0] is not settings:
            if len(self._candidates) >= MAX_REMEMBERED_DIRECTORIES:
                self._candidates.clear()
            candidates = project_config_candidates(Path(scope.project_dir), settings, self.environ)
            known = self._candidates[scope.project_dir] = (settings, candidates)
        if any(os.path.isfile(path) for path in known[1]):
            return scope.project_dir
        return SHARED

    async def session_for(self, scope: Scope) -> DaemonSession:
        """The session of ``scope``'s directory, opened on first use."""
        identity = self.identity_of(scope)
        async with self._lock:
            found = self.sessions.get(identity)
            if found is None:
                if len(self.sessions) > MAX_PROJECT_SESSIONS:
                    raise ConnectionFailed(
                        f"the session daemon already holds {MAX_PROJECT_SESSIONS} project sessions",
                        hint=f"run `{cmd('daemon', 'restart')}` to drop them, or use --no-daemon",
                        reason="daemon_sessions_full",
                    )
                found = await self._open(identity, scope)
        if identity == SHARED:
            found.use_directory(Path(scope.project_dir))
        return found

    def referenced_variables(self) -> list[str]:
        names: set[str] = set()
        for session in list(self.sessions.values()):
            names.update(session.referenced_variables())
        return sorted(names)

    # -- lifetime --------------------------------------------------------------------------------

    async def __aenter__(self) -> SessionMap:
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        try:
            await self._open(SHARED, self._shared_start_scope())
        except BaseException as exc:
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        self._closing.set()  # every session leaves its block: its servers stop
        tg, self._tg = self._tg, None
        if tg is None:
            return None
        return await tg.__aexit__(et, ev, tb)

    def _shared_start_scope(self) -> Scope:
        """The daemon's own directory, unless it is a project: then the global dir, which no
        project file names (the shared session never shows a project's entries)."""
        if self.scope.config_file is not None:
            return self.scope
        settings = load_config(
            project=Path(self.scope.global_dir),
            global_dir=Path(self.scope.global_dir),
            environ=self.environ,
            cwd=self.cwd,
            host_trust=False,
        ).settings
        if project_adds_config(Path(self.scope.project_dir), settings, self.environ):
            return self.scope._replace(project_dir=self.scope.global_dir)
        return self.scope

    async def _open(self, identity: str, scope: Scope) -> DaemonSession:
        assert self._tg is not None
        session = DaemonSession(scope, self.environ, self.cwd, shared=identity == SHARED, nonce=self.nonce)
        await self._tg.start(self._own, session)
        self.sessions[identity] = session
        return session

    async def _own(self, session: DaemonSession, *, task_status: TaskStatus[None]) -> None:
        async with session.sessions:
            task_status.started()
            await self._closing.wait()


__all__ = [
    "MAX_PROJECT_SESSIONS",
    "SHARED",
    "SessionMap",
    "project_adds_config",
    "project_config_candidates",
]
