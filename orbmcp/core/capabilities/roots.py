"""Roots: the directories orbmcp tells servers they may work in (``roots/list``).

By default one root, the project directory. ``roots`` in the settings, or in a server's entry,
replaces that list (paths expanded like ``cwd``; a project's settings count only once the project
is trusted, like everything else in its files). When the list a connected server would get
changes during a session, the server is sent ``notifications/roots/list_changed``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Root:
    uri: str  # file:// URI
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, **({"name": self.name} if self.name else {})}


def root_of(path: str | Path) -> Root:
    """The root of one directory: an absolute ``file://`` URI, named after the directory."""
    p = Path(path)
    if not p.is_absolute():
        p = Path.cwd() / p
    return Root(p.as_uri(), p.name or str(p))


def roots_of(paths: Iterable[str | Path]) -> tuple[Root, ...]:
    seen: dict[str, Root] = {}
    for path in paths:
        root = root_of(path)
        seen.setdefault(root.uri, root)
    return tuple(seen.values())


__all__ = ["Root", "root_of", "roots_of"]
