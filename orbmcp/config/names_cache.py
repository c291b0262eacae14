"""The server names completion offers, cached by the loader so that completion never loads pydantic.

Shells run completion on every Tab; validating the config takes pydantic (~100 ms to import). So
each load that reads files (``loader.load_config``) records, per project directory and ``--config``
file, the names it loaded (with what completion filters on: OAuth, on/off) and what decided them:
the stat of every file the loader would read (existing or not) and a keyed digest of every
environment variable it read. Completion (``server_names``) uses the record only while all of that
is unchanged; otherwise it runs the loader once in a child process (which rewrites the record) and
reads again. Stdlib only: completion imports this module, never the loader.

The file (``<global dir>/cache/servers.json``) is private (0600, ``orbmcp.fs``), bounded in size
and in records, and holds no variable's value: only a digest keyed by a random salt of its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from orbmcp import environment, fs
from orbmcp.config import paths

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig

CACHE_FILE = "servers.json"
VERSION = 1
MAX_BYTES = 1 << 20
MAX_RECORDS = 32
REFRESH_TIMEOUT_S = 30.0


class CachedServer:
    __slots__ = ("enabled", "has_oauth")

    def __init__(self, *, enabled: bool, has_oauth: bool) -> None:
        self.enabled = enabled
        self.has_oauth = has_oauth


class CachedNames:
    """What completion needs of a loaded config: the servers (by name) and the global dir."""

    __slots__ = ("global_dir", "servers")

    def __init__(self, servers: dict[str, CachedServer], global_dir: Path) -> None:
        self.servers = servers
        self.global_dir = global_dir


class RecordingEnviron(Mapping[str, str]):
    """An environment that remembers which variables were read (present or not)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return self._environ[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.add(key)
        return key in self._environ

    def __iter__(self):  # type: ignore[no-untyped-def]  # iterating reads every variable
        self.read.update(self._environ)
        return iter(self._environ)

    def __len__(self) -> int:
        return len(self._environ)


def cache_path(global_dir: Path) -> Path:
    return global_dir / "cache" / CACHE_FILE


def record_key(project_dir: Path, config_file: Path | None) -> str:
    return json.dumps([str(project_dir), None if config_file is None else str(config_file)])


def _stat(path: Path) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]


def _digest(salt: str, value: str | None) -> str:
    import hashlib

    if value is None:
        return "-"
    data = value.encode("utf-8", "surrogateescape")
    return hashlib.blake2b(data, key=bytes.fromhex(salt), digest_size=16).hexdigest()


def watched_files(config: ResolvedConfig) -> list[Path]:
    """Every file whose content decides the loaded servers, existing or not."""
    if config.config_override is not None:
        return [config.config_override]
    gdir, pdir = config.global_dir, config.project.dir
    found = [
        *paths.global_files(gdir),
        *paths.project_files(pdir),
        paths.trust_store_path(gdir),
        *config.files,
        *config.import_candidates,
    ]
    return list(dict.fromkeys(found))


def record(config: ResolvedConfig, environ: Mapping[str, str], read: Iterable[str]) -> None:
    """Store what completion needs of ``config``; a failure is ignored: completion then loads in
    a child process. A global dir that does not exist is not created for it."""
    if not config.global_dir.is_dir():
        return
    servers = recorded_servers(config)
    files = {str(p): _stat(p) for p in watched_files(config)}
    key = record_key(config.project.dir, config.config_override)
    path = cache_path(config.global_dir)
    current = fs.read_json_object(path, max_bytes=MAX_BYTES)
    salt = current.get("salt") if current is not None else None
    if _unchanged(current, key, salt, servers, files, environ):
        return

    def change(data: dict[str, object]) -> dict[str, object] | None:
        salt = data.get("salt")
        if data.get("version") != VERSION or not isinstance(salt, str):
            data = {"version": VERSION, "salt": os.urandom(16).hex(), "records": {}}
            salt = str(data["salt"])
        records = data.get("records")
        records = dict(records) if isinstance(records, dict) else {}
        records.pop(key, None)
        env = {name: _digest(salt, environ.get(name)) for name in sorted(read)}
        records[key] = {"servers": servers, "files": files, "env": env}
        while len(records) > MAX_RECORDS:
            records.pop(next(iter(records)))
        return {**data, "records": records}

    try:
        fs.json_update(path, change, max_bytes=MAX_BYTES, durable=False)
    except (OSError, ValueError):
        pass


def recorded_servers(config: ResolvedConfig) -> dict[str, dict[str, bool]]:
    return {
        name: {"enabled": s.enabled, "oauth": s.has_oauth}
        for name, s in config.servers.items()
        if s.source != "extension"  # registered in this process only: another cannot see them
    }


def _unchanged(  # noqa: PLR0917  # one private caller
    data: dict[str, object] | None,
    key: str,
    salt: object,
    servers: dict[str, dict[str, bool]],
    files: dict[str, list[int] | None],
    environ: Mapping[str, str],
) -> bool:
    entry = _record(data, key)
    return (
        entry is not None
        and isinstance(salt, str)
        and entry.get("servers") == servers
        and entry.get("files") == files
        and _env_matches(entry, salt, environ)
    )


def _record(data: dict[str, object] | None, key: str) -> dict[str, object] | None:
    if data is None or data.get("version") != VERSION:
        return None
    records = data.get("records")
    entry = records.get(key) if isinstance(records, dict) else None
    return entry if isinstance(entry, dict) else None


def _env_matches(entry: Mapping[str, object], salt: str, environ: Mapping[str, str]) -> bool:
    env = entry.get("env")
    if not isinstance(env, dict):
        return False
    try:
        return all(_digest(salt, environ.get(name)) == digest for name, digest in env.items())
    except ValueError:  # a salt that is not hex: a damaged file
        return False


def lookup(
    project: Path | None, config_file: Path | None, *, environ: Mapping[str, str] | None = None
) -> CachedNames | None:
    """The names recorded for this project and ``--config`` file, if nothing they depend on has
    changed since; else None."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    work = Path.cwd()
    gdir = paths.global_dir(env)
    gdir = gdir if gdir.is_absolute() else work / gdir
    override = config_file if config_file is not None else environment.config_file(env)
    if override is not None:
        override = override.expanduser()
        override = override if override.is_absolute() else work / override
    data = fs.read_json_object(cache_path(gdir), max_bytes=MAX_BYTES)
    entry = _record(data, record_key(paths.project_dir(project, cwd=work), override))
    salt = data.get("salt") if data is not None else None
    if entry is None or not isinstance(salt, str) or not _env_matches(entry, salt, env):
        return None
    files = entry.get("files")
    if not isinstance(files, dict) or any(_stat(Path(p)) != st for p, st in files.items()):
        return None
    servers = entry.get("servers")
    if not isinstance(servers, dict):
        return None
    return _names(servers, gdir)


def _names(servers: dict[object, object], gdir: Path) -> CachedNames:
    return CachedNames(
        {
            str(name): CachedServer(
                enabled=flags.get("enabled") is True, has_oauth=flags.get("oauth") is True
            )
            for name, flags in servers.items()
            if isinstance(flags, dict)
        },
        gdir,
    )


def server_names(project: Path | None, config_file: Path | None) -> CachedNames | None:
    """The recorded names; when there is no current record, the loader runs once in a child
    process, which records them (creating the private global dir if need be) and prints them.
    None when the config cannot load."""
    found = lookup(project, config_file)
    if found is not None:
        return found
    import subprocess
    import sys

    argv = [sys.executable, "-m", "orbmcp.config.names_refresh"]
    argv += ["" if project is None else str(project), "" if config_file is None else str(config_file)]
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=REFRESH_TIMEOUT_S, check=False
        )
        printed = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError, RecursionError):
        return None
    if not isinstance(printed, dict) or not isinstance(printed.get("servers"), dict):
        return None
    return _names(printed["servers"], Path(str(printed.get("global_dir", ""))))
