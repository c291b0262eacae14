"""One live session of the daemon: its configuration (kept fresh) and its servers.

The daemon holds one per configuration identity (``identities.py``). The *shared* session serves
every directory whose project adds nothing: it never loads a project's entries (it loads as if the
host had declined the project's trust), and its default root follows the latest command's
directory.

``${VAR}`` references expand with the environment captured when the daemon started. Before each
command the session checks the content of every file its configuration was read from (and the
trust store); when one changed it reloads and applies the difference to the running servers:
changed definitions restart, removed ones stop, new eager ones start, trust changes show or hide
a project's servers. The warnings of the new configuration reach the client that triggered it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import anyio

from orbmcp import log
from orbmcp.config.loader import load_config
from orbmcp.config.model import ResolvedConfig
from orbmcp.config.paths import global_files, project_files, trust_store_path
from orbmcp.daemon.policy import MAX_CONFIG_BYTES, digest, digest_key, variables_in_texts
from orbmcp.session.daemon_scope import Scope
from orbmcp.session.holder import PERSISTENT, Sessions


class DaemonSession:
    def __init__(
        self,
        scope: Scope,
        environ: Mapping[str, str],
        cwd: Path,
        *,
        shared: bool = False,
        nonce: str | None = None,
    ) -> None:
        self.scope = scope
        self.environ = dict(environ)
        self.cwd = cwd
        self.shared = shared
        self.project_dir = Path(scope.project_dir)  # the shared session's moves with its commands
        self.nonce = nonce if nonce is not None else secrets.token_hex(16)
        self.config = self._load()
        # The watched files' paths, for the config they were listed from; the variables they
        # reference, for the fingerprint they were found under (every command reads the files,
        # once: a change must be seen at once, but the paths and names change only with it).
        self._watched: tuple[ResolvedConfig, tuple[str, ...]] | None = None
        self._variables: tuple[str, list[str]] = ("", [])
        self.fingerprint = self._fingerprint()
        self.sessions = Sessions(PERSISTENT, self.config, interactive=False, daemon_pid=os.getpid())
        # One reload at a time, and none seen as done before it is: a command that arrives while
        # another's reload is applying waits for it (it would otherwise find the new fingerprint
        # recorded, skip the reload, and look its server up in the old set: "unknown server").
        self._reloading = anyio.Lock()

    def _load(self) -> ResolvedConfig:
        return load_config(
            project=self.project_dir,
            config_file=None if self.scope.config_file is None else Path(self.scope.config_file),
            global_dir=Path(self.scope.global_dir),
            environ=self.environ,
            cwd=self.cwd,
            host_trust=False if self.shared else None,
        )

    def watched_files(self) -> list[Path]:
        """Every file whose content decides this session's servers: every path the loader would
        read, existing or not (another client's config created after the daemon started counts)."""
        scope = self.scope
        if scope.config_file is not None:
            return [Path(scope.config_file)]
        gdir, pdir = Path(scope.global_dir), Path(scope.project_dir)
        if self.shared:  # no project's files or trust decide what it runs
            return [*global_files(gdir), *self.config.files, *self.config.import_candidates]
        return [
            *global_files(gdir),
            *project_files(pdir),
            trust_store_path(gdir),
            *self.config.files,
            *self.config.import_candidates,
        ]

    def _watched_paths(self) -> tuple[str, ...]:
        if self._watched is None or self._watched[0] is not self.config:
            paths = tuple(sorted({str(path) for path in self.watched_files()}))
            self._watched = (self.config, paths)
        return self._watched[1]

    def _fingerprint(self) -> str:
        """A digest of every watched file's path and content (or why it could not be read); the
        variables those contents reference are worked out here when it changed."""
        h = hashlib.sha256()
        contents: list[bytes] = []
        for path in self._watched_paths():
            h.update(path.encode("utf-8", "surrogateescape") + b"\0")
            try:
                with open(path, "rb") as f:
                    data = f.read(MAX_CONFIG_BYTES + 1)
            except OSError as exc:
                data = b""
                h.update(f"<{type(exc).__name__}>".encode())
            else:
                h.update(data)
                contents.append(data)
            h.update(b"\0")
        fingerprint = h.hexdigest()
        if fingerprint != self._variables[0]:
            texts = (data[:MAX_CONFIG_BYTES].decode("utf-8", "replace") for data in contents)
            self._variables = (fingerprint, variables_in_texts(texts))
        return fingerprint

    def referenced_variables(self) -> list[str]:
        """Names of the environment variables the configuration files reference (read now)."""
        self._fingerprint()
        return self._variables[1]

    def env_drift(self, client_digests: Mapping[str, object], client_salt: str = "") -> list[str]:
        """Variables the config references whose value in the client differs from the daemon's
        (of those the client digested: the ones its own config files reference)."""
        key = digest_key(self.nonce, client_salt)
        drift = []
        for name in self._variables[1]:  # as the files were at this command's ``refresh``
            if name not in client_digests:
                continue
            mine = self.environ.get(name)
            theirs = client_digests[name]
            mine_digest = None if mine is None else digest(key, mine)
            if theirs != mine_digest:
                drift.append(name)
        return drift

    def use_directory(self, project_dir: Path) -> None:
        """The shared session serves a command of ``project_dir`` (a directory that adds no
        configuration): that directory becomes the default root, and its servers are told."""
        if project_dir == self.project_dir:
            return
        self.project_dir = project_dir
        self.config = replace(self.config, project=replace(self.config.project, dir=project_dir))
        self.sessions.config = self.config
        manager = getattr(self.sessions, "_manager", None)
        if manager is None:
            return
        runtime = manager.runtime
        supervisors = list(manager.supervisors.values())
        before = [runtime.roots_for(sup.cfg) for sup in supervisors]
        runtime.project_dir = project_dir
        for sup, old in zip(supervisors, before, strict=True):
            if runtime.roots_for(sup.cfg) != old:
                sup.roots_changed()

    async def refresh(self) -> ResolvedConfig | None:
        """Reload and apply when a watched file changed; the new config, or None when unchanged."""
        async with self._reloading:
            if self._fingerprint() == self.fingerprint:
                return None
            return await self._reload()

    async def _reload(self) -> ResolvedConfig:
        config = self._load()
        # The Manager first, with the configuration it ran under: a daemon whose config had no
        # eager server makes it on first need, and one made from the new config would start with
        # the new servers already in it, so apply_config would start none of them.
        manager = await self.sessions.manager()
        self.config = config
        self.sessions.config = config
        self.fingerprint = self._fingerprint()
        change = await manager.apply_config(config)
        log.log_event(
            "daemon.config_reloaded",
            count=len(change.added) + len(change.changed) + len(change.removed),
            reason=",".join(change.changed)[:200],
        )
        return config
