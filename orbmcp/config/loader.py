"""Resolve the layered configuration into one ResolvedConfig.

Layers, lowest first: servers registered by extensions, global ``settings.json``, global
``mcp.json``, project ``.orb/settings.json``, project ``.orb/mcp.json`` (project layers only for
servers the user approved). ``--config FILE`` / ``ORBMCP_CONFIG`` replaces all file layers. A full
entry replaces a lower one with the same name; a project entry without command/url/type/transport
partially overrides it. Only the winners are expanded, and only after trust, so an entry nobody
approved never reads the environment.

Kept to stdlib + json5: shell completion runs this on every keystroke. Never writes anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from orbmcp import environment, log
from orbmcp.config import paths, registry
from orbmcp.config.expand import finalize
from orbmcp.config.jsonc import read_jsonc
from orbmcp.config.model import (
    ConfigWarning,
    ProjectInfo,
    ResolvedConfig,
    ServerConfig,
    Settings,
    Source,
    TrustState,
    UnavailableEntry,
)
from orbmcp.config.schema import (
    apply_override,
    document_warnings,
    is_partial,
    parse_override,
    parse_server,
    servers_block,
)
from orbmcp.config.settings import GLOBAL_ONLY, apply_settings, parse_settings
from orbmcp.errors import ConfigError, cmd

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
    def allows_partial(self) -> bool:
        return self.source == "project"


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
    env: Mapping[str, str] = os.environ if environ is None else environ
    work = (cwd if cwd is not None else Path.cwd()).absolute()
    gdir = global_dir if global_dir is not None else paths.global_dir(env)
    gdir = gdir if gdir.is_absolute() else work / gdir
    log.configure_default(gdir)
    pdir = paths.project_dir(project, cwd=work)
    warnings: list[ConfigWarning] = []

    override = _config_override(config_file, env, work)
    file_layers, project_info, untrusted = _file_layers(override, gdir, pdir, host_trust, warnings)
    settings = Settings()
    for layer in file_layers:
        stated, settings_warnings = parse_settings(layer.document, file=_str(layer.file))
        if layer.source == "project":
            for key in GLOBAL_ONLY & stated.keys():
                del stated[key]
                warnings.append(
                    ConfigWarning(
                        f'"{key}" is a global setting; a project cannot set it (ignored)',
                        file=_str(layer.file),
                        reason="global_only_setting",
                    )
                )
        settings = apply_settings(settings, stated)
        warnings.extend(settings_warnings)
    extension = _Layer(
        "extension",
        None,
        {name: entry for name, entry, _ in registry.registered_entries()},
        {},
    )
    dropped: dict[str, tuple[Source, ConfigWarning]] = {}
    winners = _merge([extension, *file_layers], settings, warnings, dropped)

    servers: dict[str, ServerConfig] = {}
    for name, winner in winners.items():
        final, final_warnings = finalize(winner.server, environ=env, cwd=work)
        warnings.extend(final_warnings)
        if final is not None:
            servers[name] = replace(final, override_file=winner.override_file)
        else:
            fatal = next((w for w in final_warnings if w.skipped), None)
            if fatal is not None:
                dropped[name] = (winner.source, fatal)

    return ResolvedConfig(
        servers=servers,
        settings=settings,
        warnings=tuple(dict.fromkeys(warnings)),
        project=project_info,
        global_dir=gdir,
        files=tuple(layer.file for layer in file_layers if layer.file is not None),
        config_override=override,
        unavailable=_unavailable(servers, dropped, untrusted),
    )


def _unavailable(
    servers: Mapping[str, ServerConfig],
    dropped: Mapping[str, tuple[Source, ConfigWarning]],
    untrusted: Mapping[str, UnavailableEntry],
) -> dict[str, UnavailableEntry]:
    """Every name a file defines that did not load, and why (a loaded name is never listed)."""
    out: dict[str, UnavailableEntry] = {}
    for name, (source, warning) in dropped.items():
        if name in servers:
            continue
        skipped = warning.reason == "env_missing"
        fix = warning.fix or f"fix the entry (`{cmd('config', 'validate')}` lists every problem)"
        out[name] = UnavailableEntry(
            name=name,
            kind="skipped" if skipped else "invalid",
            file=warning.file,
            source=source,
            message=warning.message.removesuffix("; entry skipped"),
            reason=warning.reason,
            fix=fix,
        )
    for name, entry in untrusted.items():
        if name not in servers and name not in out:
            out[name] = entry
    return out


def _config_override(config_file: Path | None, env: Mapping[str, str], work: Path) -> Path | None:
    """``--config FILE``, else ``ORBMCP_CONFIG``, made absolute; None when neither is given."""
    override = config_file
    if override is None:
        override = environment.config_file(env)
    if override is not None:
        override = override.expanduser()
        override = override if override.is_absolute() else work / override
    return override


def _file_layers(
    override: Path | None,
    gdir: Path,
    pdir: Path,
    host_trust: bool | None,
    warnings: list[ConfigWarning],
) -> tuple[list[_Layer], ProjectInfo, dict[str, UnavailableEntry]]:
    """The file layers, lowest first: the one ``--config`` file, or the global and trusted project
    files; and the project servers left out because nobody approved them."""
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
        return file_layers, _project_info(gdir, pdir, load=False)[0], {}
    for path in paths.global_files(gdir):
        document = read_jsonc(path)
        if document is not None:
            file_layers.append(_file_layer("global", path, document))
            if path.name != paths.SETTINGS_FILE:  # the agent's settings file holds much else
                warnings.extend(document_warnings(document, file=str(path)))
    project_info, project_layers, project_warnings, untrusted = _project_info(
        gdir, pdir, load=True, host_trust=host_trust
    )
    file_layers.extend(project_layers)
    warnings.extend(project_warnings)
    return file_layers, project_info, untrusted


def _str(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _file_layer(source: Source, path: Path, document: Mapping[str, object]) -> _Layer:
    return _Layer(source, path, servers_block(document, file=str(path)), document)


def _project_info(
    gdir: Path, pdir: Path, *, load: bool, host_trust: bool | None = None
) -> tuple[ProjectInfo, list[_Layer], list[ConfigWarning], dict[str, UnavailableEntry]]:
    """What the project contributes: nothing unless trusted, and then only approved servers."""
    existing = tuple(p for p in paths.project_files(pdir) if p.is_file())
    if not existing:
        return ProjectInfo(pdir, (), trusted=False, loaded=False), [], [], {}
    # Only now: most directories have no project config, and trust costs hashing and imports.
    from orbmcp.config.trust import check_trust, has_record, read_project, review_documents

    try:
        documents = read_project(pdir)
        review: ProjectReview | None = review_documents(pdir, documents)
    except ConfigError:
        # A broken file in a project the user never trusted is none of our business (it may be a
        # cloned repo); in a trusted one it is the user's own config and must fail loudly.
        if load and has_record(gdir, pdir):
            raise
        documents, review = [], None
    if review is None:
        return ProjectInfo(pdir, existing, trusted=False, loaded=False), [], [], {}
    check = check_trust(gdir, review)
    if host_trust is not None:
        # The host asked its user (an agent host's own project-trust prompt); its answer covers the
        # project as it is right now, every server included.
        from orbmcp.config.trust import TrustCheck

        names = frozenset(s.name for s in review.servers) if host_trust else frozenset()
        check = TrustCheck("trusted" if host_trust else "untrusted", names, (), check.warnings)
    state: TrustState = check.state
    info = ProjectInfo(
        pdir,
        existing,
        trusted=state == "trusted",
        loaded=load and state != "untrusted",
        trust_state=state,
        pending=check.pending,
    )
    warnings = list(check.warnings)
    untrusted = {
        s.name: _untrusted_entry(s.name, s.file, changed=state == "changed")
        for s in review.servers
        if s.name not in check.approved
    }
    if not info.loaded:
        return info, [], warnings, untrusted
    warnings.extend(review.warnings)
    layers = []
    for path, document in documents:
        block = servers_block(document, file=str(path))
        approved = {name: entry for name, entry in block.items() if name in check.approved}
        layers.append(_Layer("project", path, approved, document))
        warnings.extend(document_warnings(document, file=str(path)))
    return info, layers, warnings, untrusted


def _untrusted_entry(name: str, file: str, *, changed: bool) -> UnavailableEntry:
    if changed:
        message = "its entry is new or changed since the project was approved"
    else:
        message = "it is defined in a project config, and the project is not trusted"
    return UnavailableEntry(
        name=name,
        kind="untrusted",
        file=file,
        source="project",
        message=message,
        reason="project_untrusted",
        fix=f"review and approve the project's servers: `{cmd('trust')}`",
    )


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
            if layer.allows_partial and is_partial(raw):
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
            warnings.extend(entry_warnings)
            if server is None:
                invalid.add(name)  # skipped: whatever a lower layer defined stays in effect
                fatal = next((w for w in entry_warnings if w.skipped), None)
                if fatal is not None and name not in winners:
                    dropped[name] = (layer.source, fatal)
                continue
            dropped.pop(name, None)
            assert isinstance(raw, dict)  # parse_server accepted it
            winners[name] = _Winner(raw, layer.source, file, server)
    return winners


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
