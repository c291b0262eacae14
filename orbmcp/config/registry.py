"""Servers that Python extensions register in code: the lowest config layer (source "extension").

Entries use the same schema as the files and are checked at registration, so a broken entry fails
in the extension that wrote it. Config files with the same server name win over these.

A running agent session follows the registry: ``add_listener`` is told of every change, so servers
registered, replaced or removed after start-up are picked up without a restart.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from orbmcp.config.documents import is_partial
from orbmcp.config.entries import parse_server
from orbmcp.config.settings import Settings
from orbmcp.errors import ConfigError
from orbmcp.log import get_logger

RegistryListener = Callable[[], None]


@dataclass(frozen=True)
class RegisteredServer:
    name: str
    entry: Mapping[str, object]  # the raw entry, as registered (a private copy)
    owner: str


_lock = threading.Lock()
_servers: dict[str, RegisteredServer] = {}
_listeners: list[RegistryListener] = []


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
        previous = _servers.get(name)
        if previous is not None and previous.owner == owner and dict(previous.entry) == raw:
            return  # the same entry again: nothing for a session to apply
        _servers[name] = RegisteredServer(name, MappingProxyType(raw), owner)
    _notify()


def unregister_server(name: str) -> bool:
    """Remove a registered server; False when it was not registered."""
    with _lock:
        removed = _servers.pop(name, None) is not None
    if removed:
        _notify()
    return removed


def add_listener(listener: RegistryListener) -> Callable[[], None]:
    """Call ``listener()`` after each change to the registered servers; returns its remover.

    Listeners run on the thread that made the change, after the registry lock is released (so a
    listener may read the registry), one after another. An exception in one is logged and does
    not reach the code that registered the server.
    """
    with _lock:
        _listeners.append(listener)

    def remove() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return remove


def _notify() -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener()
        except Exception as exc:
            get_logger(__name__).warning("server registry listener failed: %s", type(exc).__name__)


def registered_servers() -> Mapping[str, RegisteredServer]:
    """A snapshot, in registration order."""
    with _lock:
        return MappingProxyType(dict(_servers))


def registered_entries() -> list[tuple[str, dict[str, object], str]]:
    """(name, a fresh copy of the raw entry, owner) for the loader."""
    with _lock:
        snapshot = list(_servers.values())
    return [(s.name, copy.deepcopy(dict(s.entry)), s.owner) for s in snapshot]
