"""Reading other clients' config files: bounded, each file once per load, big ones cached.

``~/.claude.json`` also holds Claude Code's project history and grows to many megabytes, while
completion loads the configuration on every Tab. So a file of ``CACHE_FROM_BYTES`` or more is
parsed only when it changed, and so is a TOML file of any size (Codex's ``config.toml``: parsing
one costs importing ``tomllib``, ~12 ms, more than the rest of the imports together). Their servers
(the few keys the readers use, nothing else) are kept in
``<global dir>/cache/client-configs.json`` (0600, like every file orbmcp keeps there), keyed by the
file's path, inode, size and modification time. A cache that cannot be read or written is simply
not used. A file over ``MAX_FILE_BYTES`` is not read at all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from orbmcp import fs
from orbmcp.config.clients import ClientFile
from orbmcp.config.jsonc import parse_jsonc
from orbmcp.config.translate import Malformed
from orbmcp.errors import ConfigError

MAX_FILE_BYTES = 32 * 1024 * 1024
CACHE_FROM_BYTES = 256 * 1024
CACHE_FILE = "client-configs.json"
MAX_CACHE_BYTES = 8 * 1024 * 1024
# The top-level keys some reader of translate.py uses; a cached document keeps only these.
_SERVER_KEYS = ("mcpServers", "servers", "inputs", "mcp", "mcp.servers", "mcp_servers")


def _reduced(document: dict[str, object]) -> dict[str, object]:
    out = {key: document[key] for key in _SERVER_KEYS if key in document}
    projects = document.get("projects")
    if isinstance(projects, dict):  # ~/.claude.json: each project's servers, not its history
        out["projects"] = {
            key: {"mcpServers": value["mcpServers"]}
            for key, value in projects.items()
            if isinstance(value, dict) and "mcpServers" in value
        }
    return out


class Documents:
    """The documents of one load: each file read once (Claude Code reads ``~/.claude.json`` for two
    scopes), big files through the cache in ``cache_dir`` (None: no cache)."""

    def __init__(self, cache_dir: Path | None) -> None:
        self._cache_path = cache_dir / CACHE_FILE if cache_dir is not None else None
        self._cache: dict[str, object] | None = None
        self._dirty = False
        self._seen: dict[Path, dict[str, object] | None] = {}

    def read(self, file: ClientFile) -> dict[str, object] | None:
        """The file's content as an object, or None when it does not exist; Malformed says why not."""
        if file.path not in self._seen:
            self._seen[file.path] = self._read(file)
        return self._seen[file.path]

    def _read(self, file: ClientFile) -> dict[str, object] | None:
        path = file.path
        try:
            info = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise Malformed(f"cannot read it ({exc.strerror or exc})") from None
        if not path.is_file():
            raise Malformed("not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise Malformed(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; not read")
        stamp = [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns]
        big = (info.st_size >= CACHE_FROM_BYTES or file.format == "codex") and self._cache_path is not None
        if big:
            hit = self._cached(str(path), stamp)
            if hit is not None:
                return hit
        document = _parse(file, _text(path))
        if big:
            self._store(str(path), stamp, _reduced(document))
        return document

    def _entries(self) -> dict[str, object]:
        if self._cache is None:
            assert self._cache_path is not None
            loaded = fs.read_json_object(self._cache_path, max_bytes=MAX_CACHE_BYTES)
            entries = loaded.get("files") if loaded is not None else None
            self._cache = dict(entries) if isinstance(entries, dict) else {}
        return self._cache

    def _cached(self, key: str, stamp: list[int]) -> dict[str, object] | None:
        entry = self._entries().get(key)
        if (
            isinstance(entry, dict)
            and entry.get("stamp") == stamp
            and isinstance(entry.get("document"), dict)
        ):
            document: dict[str, object] = entry["document"]
            return document
        return None

    def _store(self, key: str, stamp: list[int], document: dict[str, object]) -> None:
        try:
            json.dumps(document)
        except (TypeError, ValueError):  # a TOML date: JSON cannot hold it, so this file is not cached
            return
        self._entries()[key] = {"stamp": stamp, "document": document}
        self._dirty = True

    def save(self) -> None:
        """Write the cache if a big file was parsed; a failure leaves it as it was."""
        if not self._dirty or self._cache_path is None or self._cache is None:
            return
        present = {key: value for key, value in self._cache.items() if os.path.exists(key)}
        try:
            fs.atomic_write(self._cache_path, json.dumps({"files": present}), durable=False)
        except (OSError, ValueError):
            pass
        self._dirty = False


def _text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise Malformed(f"cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise Malformed("not valid UTF-8") from None


def _parse(file: ClientFile, text: str) -> dict[str, object]:
    try:
        if file.format == "codex":
            import tomllib  # ~12 ms: only for Codex's file, and only when it changed (see above)

            try:
                return tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise Malformed(f"not valid TOML ({exc})") from None
        try:
            value = json.loads(text)  # most clients write plain JSON: the fast path for big files
        except ValueError:
            try:
                return parse_jsonc(text, file=str(file.path))
            except ConfigError as exc:
                raise Malformed(exc.message.removeprefix(f"{file.path}")) from None
    except RecursionError:
        raise Malformed("nested too deeply") from None
    if not isinstance(value, dict):
        raise Malformed("the top level is not a JSON object")
    return value
