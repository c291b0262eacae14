"""Other clients' servers, read through (never copied): which files, which entries win.

The global setting ``imports`` names the clients, in precedence order; unset means every client
orbmcp knows (a client whose files do not exist simply adds nothing), ``[]`` none. Within one client
its own precedence holds (clients.py); between clients the first in the list wins, and a name two
clients define differently is a warning naming both files, never a silent choice. orbmcp's own files
win over every import (loader.py). Another client's file that cannot be read is a warning: it is
that client's business, and must never stop orbmcp or the other servers.

Project-level files (``.cursor/mcp.json``, ``.mcp.json``, ...) are project files: the loader passes
only the entries the trust store approved (trust.py reviews them with orbmcp's own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from orbmcp import environment
from orbmcp.config.client_documents import Documents
from orbmcp.config.clients import CLIENTS, LABELS, ClientFile, Scope, client_files
from orbmcp.config.entries import parse_server
from orbmcp.config.model import ClientName, ConfigWarning, ServerConfig, Source
from orbmcp.config.settings import Settings
from orbmcp.config.translate import MAX_SERVERS_PER_FILE, Imported, Malformed, servers_of, translate_file


@dataclass(frozen=True)
class ClientRead:
    """One existing file of another client and its servers, translated."""

    file: ClientFile
    servers: tuple[Imported, ...]


def import_key(client: str, name: str) -> str:
    """How an imported project server is told apart from orbmcp's own of the same name."""
    return f"import:{client}/{name}"


def source_of(client: ClientName) -> Source:
    return _SOURCES[client]


_SOURCES: Mapping[ClientName, Source] = {
    "claude-code": "import:claude-code",
    "claude-desktop": "import:claude-desktop",
    "cursor": "import:cursor",
    "vscode": "import:vscode",
    "windsurf": "import:windsurf",
    "codex": "import:codex",
    "gemini": "import:gemini",
    "opencode": "import:opencode",
    "pi": "import:pi",
}


def active_clients(settings: Settings) -> tuple[ClientName, ...]:
    return CLIENTS if settings.imports is None else settings.imports


def tagged(warning: ConfigWarning, client: str) -> ConfigWarning:
    """A warning about an imported entry, saying whose file it is."""
    return replace(warning, message=f"import:{client}: {warning.message}")


# ---- reading --------------------------------------------------------------------------------------


def read_clients(
    clients: Sequence[ClientName],
    project_dir: Path,
    *,
    environ: Mapping[str, str] | None,
    warnings: list[ConfigWarning],
    scope: Scope | None = None,
    cache_dir: Path | None = None,
) -> list[ClientRead]:
    """Every existing file of ``clients`` (of one ``scope``, or both), in precedence order; a file
    that cannot be read warns. Reading runs nothing and expands nothing. ``cache_dir``: where the
    servers of big files are kept between runs (client_documents.py)."""
    home = environment.home(environ)
    out: list[ClientRead] = []
    documents = Documents(cache_dir)
    for client in clients:
        for file in client_files(client, project_dir, environ=environ):
            if scope is not None and file.scope != scope:
                continue
            try:
                document = documents.read(file)
                if document is None:
                    continue
                servers = translate_file(file, document, project_dir=project_dir, home=home)
                stated = len(servers_of(file, document, project_dir))
            except Malformed as exc:
                warnings.append(
                    ConfigWarning(
                        f"import:{client}: {LABELS[client]} config not read: {str(exc).lstrip(': ')}",
                        str(file.path),
                        reason="import_unreadable",
                    )
                )
                continue
            if stated > MAX_SERVERS_PER_FILE:
                warnings.append(
                    ConfigWarning(
                        f"import:{client}: {LABELS[client]} config has {stated} servers; only the first "
                        f"{MAX_SERVERS_PER_FILE} are read, the rest are ignored",
                        str(file.path),
                        reason="import_capped",
                    )
                )
            out.append(ClientRead(file, tuple(servers)))
    documents.save()
    return out


# ---- choosing -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chosen:
    """An imported entry in effect (before orbmcp's own files are merged over it)."""

    file: ClientFile
    name: str
    entry: dict[str, object]
    server: ServerConfig


def choose(
    reads: Sequence[ClientRead],
    *,
    approved: frozenset[str],
    settings: Settings,
    warnings: list[ConfigWarning],
    dropped: dict[str, tuple[Source, ConfigWarning]],
) -> list[Chosen]:
    """The imported entry in effect for each name: user files, and project files' approved entries.
    ``dropped`` gets, per name, the first entry skipped as unusable, and why (a name some file
    names is then reported as what it is, not as unknown)."""
    chosen: dict[str, Chosen] = {}

    def skip(client: ClientName, name: str, warning: ConfigWarning) -> None:
        warnings.append(warning)
        if name not in chosen:
            dropped.setdefault(name, (source_of(client), warning))

    for read in reads:
        file = read.file
        client = file.client
        for imported in read.servers:
            name = imported.name
            if file.scope == "project" and import_key(client, name) not in approved:
                continue  # invisible until the project is trusted
            if imported.entry is None:
                message = "; ".join(imported.problems) + "; entry skipped"
                warning = ConfigWarning(message, str(file.path), name, "invalid_entry", skipped=True)
                skip(client, name, tagged(warning, client))
                continue
            server, entry_warnings = parse_server(
                name, imported.entry, file=str(file.path), source=source_of(client), settings=settings
            )
            if server is None:
                tagged_warnings = [tagged(w, client) for w in entry_warnings]
                fatal = next((w for w in tagged_warnings if w.skipped), None)
                warnings.extend(w for w in tagged_warnings if w is not fatal)
                if fatal is not None:
                    skip(client, name, fatal)
                continue
            winner = chosen.get(name)
            if winner is not None:
                if winner.file.client != client and winner.server.definition() != server.definition():
                    warnings.append(_collision(file, name, winner))
                continue
            warnings.extend(
                tagged(ConfigWarning(p, str(file.path), name, "ignored_key"), client)
                for p in imported.problems
            )
            chosen[name] = Chosen(file, name, imported.entry, server)
    return list(chosen.values())


def _collision(file: ClientFile, name: str, winner: Chosen) -> ConfigWarning:
    return tagged(
        ConfigWarning(
            f"ignored: import:{winner.file.client} ({winner.file.path}) defines '{name}' differently "
            'and comes first in "imports"',
            str(file.path),
            name,
            "import_collision",
        ),
        file.client,
    )
