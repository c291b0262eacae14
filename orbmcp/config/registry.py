"""Servers that Python extensions register in code: the lowest config layer (source "extension").

Entries use the same schema as the files and are checked at registration, so a broken entry fails
in the extension that wrote it. Config files with the same server name win over these.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from orbmcp.config.model import Settings
from orbmcp.config.schema import is_partial, parse_server
from orbmcp.errors import ConfigError


@dataclass(frozen=True)
class RegisteredServer:
    name: str
    entry: Mapping[str, object]  # the raw entry, as registered (a private copy)
    owner: str


_lock = threading.Lock()
_servers: dict[str, RegisteredServer] = {}


def register_server(name: str, entry: Mapping[str, object], *, owner: str = "extension") -> None:
    """Register (or replace) server ``name``. Raises ConfigError when the entry is invalid."""
    raw = copy.deepcopy(dict(entry))
    where = f"server {name!r} registered by {owner}"
    if is_partial(raw):
        raise ConfigError(
            f'{where}: no transport: set "command" (stdio) or "url" (HTTP)',
            server=name,
            reason="invalid_entry",
        )
    server, warnings = parse_server(name, raw, file=None, source="extension", settings=Settings())
    if server is None:
        problems = "; ".join(w.message for w in warnings)
        raise ConfigError(f"{where}: {problems}", server=name, reason="invalid_entry")
    with _lock:
        _servers[name] = RegisteredServer(name, MappingProxyType(raw), owner)


def unregister_server(name: str) -> bool:
    """Remove a registered server; False when it was not registered."""
    with _lock:
        return _servers.pop(name, None) is not None


def registered_servers() -> Mapping[str, RegisteredServer]:
    """A snapshot, in registration order."""
    with _lock:
        return MappingProxyType(dict(_servers))


def registered_entries() -> list[tuple[str, dict[str, object], str]]:
    """(name, a fresh copy of the raw entry, owner) for the loader."""
    with _lock:
        snapshot = list(_servers.values())
    return [(s.name, copy.deepcopy(dict(s.entry)), s.owner) for s in snapshot]
