"""Resolve the layered configuration into one ResolvedConfig.

Layers, lowest first: servers registered by extensions, other clients' files (imports.py: the
global ``imports`` setting, project-level ones only when approved), global ``settings.json``, global
``mcp.json``, project ``.orb/settings.json``, project ``.orb/mcp.json`` (project layers only for
servers the user approved). ``--config FILE`` / ``ORBMCP_CONFIG`` replaces all file layers and
imports. A full entry replaces a lower one with the same name (replacing a different imported
definition warns); an entry without command/url/type/transport partially overrides a lower one: in
a project file any lower one, in a global file an imported or extension-registered one. Only the
winners are expanded, and only after trust, so an entry nobody approved never reads the environment.

Entries and settings are validated by pydantic models (entries.py, settings.py), so shell
completion never runs this: it reads the names each load records (names_cache.py). Writes nothing
but those two caches (and the cache of other clients' big files, client_documents.py), and only
inside a global dir that exists.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from orbmcp import environment, log
from orbmcp.config import imports, names_cache, paths, registry
from orbmcp.config.documents import apply_override, document_warnings, is_partial, servers_block
from orbmcp.config.entries import parse_override, parse_server
from orbmcp.config.expand import expand_roots, finalize
from orbmcp.config.jsonc import read_jsonc
from orbmcp.config.model import (
    ConfigWarning,
    ProjectInfo,
    ResolvedConfig,
    ServerConfig,
    Source,
    TrustState,
    UnavailableEntry,
)
from orbmcp.config.settings import Settings, SettingsLayer
from orbmcp.config.unavailable import unavailable_entries, untrusted_entry
from orbmcp.errors import ConfigError

if TYPE_CHECKING:
    from orbmcp.config.trust import ProjectReview


class _Layer:
    """One source of entries. Plain classes, not dataclasses: each dataclass costs import time."""

    __slots__ = ("document", "file", "servers", "source")

    def __init__(
        self, source: Source, file: Path | None, servers: Mapping[str, object], document: Mapping[str, object]
    ) -> None:
        self.source = source
        self.file = file
        self.servers = servers
        self.document = document  # for settings; empty for the extension layer

    @property
    def imported(self) -> bool:
        return self.source.startswith("import:")

    def allows_partial(self, base: _Winner | None) -> bool:
        """A project entry may partially override any lower one; a global entry one that comes
        from another client's file or an extension (so that it can switch those off)."""
        if self.source == "project":
            return True
        return self.source == "global" and base is not None and base.source not in ("global", "config")


class _Winner:
    """The entry currently in effect for one name (raw kept so a partial override can re-merge)."""

    __slots__ = ("file", "override_file", "raw", "server", "source")

    def __init__(
        self,
        raw: Mapping[str, object],
        source: Source,
        file: str | None,
        server: ServerConfig,
        override_file: str | None = None,
    ) -> None:
        self.raw = raw
        self.source = source
        self.file = file
        self.server = server
        self.override_file = override_file


def load_config(
    *,
    project: Path | None = None,
    config_file: Path | None = None,
    global_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    host_trust: bool | None = None,
) -> ResolvedConfig:
    """Resolve every layer. ``host_trust``: an agent host's own project-trust answer (True loads
    the project's servers as they are now, False hides them); None uses orbmcp's trust store."""
    env = names_cache.RecordingEnviron(os.environ if environ is None else environ)
    work = (cwd if cwd is not None else Path.cwd()).absolute()
    gdir = global_dir if global_dir is not None else paths.global_dir(env)
    gdir = gdir if gdir.is_absolute() else work / gdir
    log.configure_default(gdir)
    pdir = paths.project_dir(project, cwd=work)
    warnings: list[ConfigWarning] = []

    override = _config_override(config_file, env, work)
    file_layers, project_info, reads, approved, untrusted = _file_layers(
        override, gdir, pdir, host_trust, env, warnings
    )
    settings, settings_warnings = Settings.from_files(
        [
            SettingsLayer(layer.document, _str(layer.file), project=layer.source == "project")
            for layer in file_layers
        ]
    )
    warnings.extend(settings_warnings)
    if settings.roots is not None:
        roots, root_warnings = expand_roots(settings.roots, environ=env, cwd=work, file=None)
        settings = settings.model_copy(update={"roots": roots})
        warnings.extend(root_warnings)
    extension = _Layer(
        "extension",
        None,
        {name: entry for name, entry, _ in registry.registered_entries()},
        {},
    )
    dropped: dict[str, tuple[Source, ConfigWarning]] = {}
    chosen = imports.choose(reads, approved=approved, settings=settings, warnings=warnings, dropped=dropped)
    import_layers = [
        _Layer(imports.source_of(c.file.client), c.file.path, {c.name: c.entry}, {}) for c in chosen
    ]
    winners = _merge([extension, *import_layers, *file_layers], settings, warnings, dropped)

    servers: dict[str, ServerConfig] = {}
    for name, winner in winners.items():
        final, final_warnings = finalize(winner.server, environ=env, cwd=work)
        warnings.extend(final_warnings)
        if final is not None:
            if final.auth is not None and final.auth.credential_store != settings.credential_store:
                final = replace(final, auth=replace(final.auth, credential_store=settings.credential_store))
            servers[name] = replace(final, override_file=winner.override_file)
        else:
            fatal = next((w for w in final_warnings if w.skipped), None)
            if fatal is not None:
                dropped[name] = (winner.source, fatal)

    config = ResolvedConfig(
        servers=servers,
        settings=settings,
        warnings=tuple(dict.fromkeys(warnings)),
        project=project_info,
        global_dir=gdir,
        files=tuple(layer.file for layer in file_layers if layer.file is not None)
        + tuple(dict.fromkeys(read.file.path for read in reads)),
        config_override=override,
        unavailable=unavailable_entries(servers, dropped, untrusted),
        import_candidates=_candidates(override, settings, pdir, env),
    )
    if host_trust is None:  # an agent host's own trust answer is not what another process sees
        names_cache.record(config, env, env.read)
    return config


def _candidates(
    override: Path | None, settings: Settings, pdir: Path, env: Mapping[str, str]
) -> tuple[Path, ...]:
    if override is not None:
        return ()
    from orbmcp.config.clients import client_files

    files = (f.path for c in imports.active_clients(settings) for f in client_files(c, pdir, environ=env))
    return tuple(dict.fromkeys(files))


def _config_override(config_file: Path | None, env: Mapping[str, str], work: Path) -> Path | None:
    """``--config FILE``, else ``ORBMCP_CONFIG``, made absolute; None when neither is given."""
    override = config_file
    if override is None:
        override = environment.config_file(env)
    if override is not None:
        override = override.expanduser()
        override = override if override.is_absolute() else work / override
    return override


def _file_layers(  # noqa: PLR0917  # one private caller, each argument a different thing
    override: Path | None,
    gdir: Path,
    pdir: Path,
    host_trust: bool | None,
    env: Mapping[str, str],
    warnings: list[ConfigWarning],
) -> tuple[list[_Layer], ProjectInfo, list[imports.ClientRead], frozenset[str], dict[str, UnavailableEntry]]:
    """The file layers, lowest first: the one ``--config`` file, or the global and trusted project
    files; then the other clients' files that were read, the keys of the approved imported project
    servers, and the project servers left out because nobody approved them."""
    file_layers: list[_Layer] = []
    if override is not None:
        document = read_jsonc(override)
        if document is None:
            raise ConfigError(
                f"{override}: config file not found",
                file=str(override),
                hint=f"--config and {environment.CONFIG} must name an existing file",
                reason="file_not_found",
            )
        file_layers.append(_file_layer("config", override, document))
        warnings.extend(document_warnings(document, file=str(override)))
        return file_layers, _project_info(gdir, pdir, load=False, reads=[])[0], [], frozenset(), {}
    for path in paths.global_files(gdir):
        document = read_jsonc(path)
        if document is not None:
            file_layers.append(_file_layer("global", path, document))
            if path.name != paths.SETTINGS_FILE:  # the agent's settings file holds much else
                warnings.extend(document_warnings(document, file=str(path)))
    clients = imports.active_clients(_global_settings(file_layers))
    reads = (
        imports.read_clients(clients, pdir, environ=env, warnings=warnings, cache_dir=gdir / "cache")
        if clients
        else []
    )
    project_reads = [read for read in reads if read.file.scope == "project"]
    project_info, project_layers, project_warnings, approved, untrusted = _project_info(
        gdir, pdir, load=True, host_trust=host_trust, reads=project_reads
    )
    file_layers.extend(project_layers)
    warnings.extend(project_warnings)
    return file_layers, project_info, reads, approved, untrusted


def _global_settings(layers: list[_Layer]) -> Settings:
    """The settings the global files state (what decides which other clients are read)."""
    return Settings.from_files([SettingsLayer(layer.document, _str(layer.file)) for layer in layers])[0]


def _str(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _file_layer(source: Source, path: Path, document: Mapping[str, object]) -> _Layer:
    return _Layer(source, path, servers_block(document, file=str(path)), document)


def _project_info(
    gdir: Path,
    pdir: Path,
    *,
    load: bool,
    reads: list[imports.ClientRead],
    host_trust: bool | None = None,
) -> tuple[ProjectInfo, list[_Layer], list[ConfigWarning], frozenset[str], dict[str, UnavailableEntry]]:
    """What the project contributes: nothing unless trusted, and then only approved servers (its
    own files' layers, the keys of the approved servers of other clients' project files, and the
    servers left out because nobody approved them)."""
    own = tuple(p for p in paths.project_files(pdir) if p.is_file())
    imported = tuple(read.file.path for read in reads)
    existing = own + imported
    if not existing:
        return ProjectInfo(pdir, (), trusted=False, loaded=False), [], [], frozenset(), {}
    # Only now: most directories have no project config, and trust costs hashing and imports.
    from orbmcp.config.trust import (
        approval_recorded,
        check_trust,
        project_server_names,
        read_project,
        review_documents,
    )

    recorded, store_warnings = approval_recorded(gdir, pdir)
    if not recorded and host_trust is None:
        # Never approved (a cloned repository, say): the status line needs only its server
        # names, so nothing else is checked, hashed or warned about, and a broken or hostile
        # file costs one bounded read and never touches the user's own servers.
        names = project_server_names(pdir)
        pending = [*names]
        waiting = {
            name: untrusted_entry(name, file, "project", changed=False) for name, file in names.items()
        }
        for read in reads:
            source = imports.source_of(read.file.client)
            for server in read.servers:
                if server.name not in waiting:
                    waiting[server.name] = untrusted_entry(
                        server.name, str(read.file.path), source, changed=False
                    )
                pending.append(imports.import_key(read.file.client, server.name))
        return (
            ProjectInfo(
                pdir, existing, trusted=False, loaded=False, pending=tuple(pending), import_files=imported
            ),
            [],
            list(store_warnings),
            frozenset(),
            waiting,
        )
    try:
        documents = read_project(pdir)
        review: ProjectReview | None = review_documents(pdir, documents, reads)
    except ConfigError:
        # In a project the user trusted, the files are the user's own config: fail loudly.
        if load and recorded:
            raise
        documents, review = [], None
    if review is None:
        return (
            ProjectInfo(pdir, existing, trusted=False, loaded=False, import_files=imported),
            [],
            [],
            frozenset(),
            {},
        )
    check = check_trust(gdir, review)
    if host_trust is not None:
        # The host asked its user (an agent host's own project-trust prompt); its answer covers the
        # project as it is right now, every server included.
        from orbmcp.config.trust import TrustCheck

        keys = frozenset(s.key for s in review.servers) if host_trust else frozenset()
        check = TrustCheck("trusted" if host_trust else "untrusted", keys, (), check.warnings)
    state: TrustState = check.state
    info = ProjectInfo(
        pdir,
        existing,
        trusted=state == "trusted",
        loaded=load and state != "untrusted",
        trust_state=state,
        pending=check.pending,
        import_files=imported,
    )
    warnings = list(check.warnings)
    untrusted: dict[str, UnavailableEntry] = {}
    for s in review.servers:  # the project's own files first: theirs is the name's entry
        if s.key not in check.approved:
            label: Source = "project" if s.client is None else imports.source_of(s.client)
            untrusted.setdefault(s.name, untrusted_entry(s.name, s.file, label, changed=state == "changed"))
    if not info.loaded:
        return info, [], warnings, frozenset(), untrusted
    warnings.extend(review.warnings)
    layers = []
    for path, document in documents:
        block = servers_block(document, file=str(path))
        approved = {name: entry for name, entry in block.items() if name in check.approved}
        layers.append(_Layer("project", path, approved, document))
        warnings.extend(document_warnings(document, file=str(path)))
    return info, layers, warnings, check.approved, untrusted


def _merge(
    layers: list[_Layer],
    settings: Settings,
    warnings: list[ConfigWarning],
    dropped: dict[str, tuple[Source, ConfigWarning]],
) -> dict[str, _Winner]:
    """The winning entry per name; ``dropped`` gets the entries skipped as invalid, and why."""
    winners: dict[str, _Winner] = {}
    invalid: set[str] = set()  # names some layer defined with an invalid entry
    for layer in layers:
        file = _str(layer.file)
        for name, raw in layer.servers.items():
            if is_partial(raw) and layer.allows_partial(winners.get(name)):
                _apply_partial(
                    name=name,
                    raw=raw,
                    file=file,
                    winners=winners,
                    invalid=invalid,
                    settings=settings,
                    warnings=warnings,
                )
                continue
            server, entry_warnings = parse_server(
                name, raw, file=file, source=layer.source, settings=settings
            )
            if layer.imported:
                entry_warnings = [
                    imports.tagged(w, layer.source.removeprefix("import:")) for w in entry_warnings
                ]
            warnings.extend(entry_warnings)
            if server is None:
                invalid.add(name)  # skipped: whatever a lower layer defined stays in effect
                fatal = next((w for w in entry_warnings if w.skipped), None)
                if fatal is not None and name not in winners:
                    dropped[name] = (layer.source, fatal)
                continue
            dropped.pop(name, None)
            assert isinstance(raw, dict)  # parse_server accepted it
            base = winners.get(name)
            if base is not None and _shadows_import(layer, base, server):
                warnings.append(
                    ConfigWarning(
                        f"replaces the different '{name}' of {base.source} ({base.file}): orbmcp's "
                        "own files win over imports",
                        file,
                        name,
                        "import_shadowed",
                    )
                )
            winners[name] = _Winner(raw, layer.source, file, server)
    return winners


def _shadows_import(layer: _Layer, base: _Winner, server: ServerConfig) -> bool:
    """An own entry replacing another client's entry of the same name that runs something else."""
    imported_base = base.source.startswith("import:")
    return imported_base and not layer.imported and base.server.definition() != server.definition()


def _apply_partial(
    *,
    name: str,
    raw: object,
    file: str | None,
    winners: dict[str, _Winner],
    invalid: set[str],
    settings: Settings,
    warnings: list[ConfigWarning],
) -> None:
    assert isinstance(raw, dict)  # is_partial checked it
    override, override_warnings = parse_override(name, raw, file=file)
    warnings.extend(override_warnings)
    if override is None:
        return
    base = winners.get(name)
    if base is None:
        if name in invalid:
            why = "the entry it overrides is invalid (see the warning above)"
            reason = "partial_override_invalid_base"
        else:
            why = "no lower layer (global config or extension) defines this server"
            reason = "partial_override_unknown"
        warnings.append(
            ConfigWarning(
                f'partial override ignored: {why}; give "command" or "url" to define a server here',
                file,
                name,
                reason,
            )
        )
        return
    merged = apply_override(base.raw, override)
    server, merged_warnings = parse_server(
        name, merged, file=base.file, source=base.source, settings=settings
    )
    warnings.extend(merged_warnings)
    if server is not None:
        winners[name] = _Winner(merged, base.source, base.file, server, override_file=file)
