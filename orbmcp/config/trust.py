"""Project trust: a project's servers run only after the user approved exactly those definitions.

Approval is recorded in the user's global dir (never in the project), keyed by the project's real
path and bound per server to a hash of its raw, unexpanded entries: change a server's command,
args, env, url, ... and that server is invisible again until re-approved, while the unchanged ones
keep working. A new server needs its own approval. Nothing a project file says can grant trust.
Other clients' project files (``.cursor/mcp.json``, ``.mcp.json``, ...) that orbmcp imports are
reviewed and approved the same way, each server bound to its file, its raw entry and what orbmcp
translates it into.

The store is small JSON, written by ``orbmcp.fs`` (atomic, 0600 in a 0700 dir) under its lock.
A store that is a symlink, owned by someone else, or writable by group/others is ignored: whoever
can write it could approve anything. So it has its own reader: ``fs.read_private`` would tighten
such a file's mode and trust what it holds.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from orbmcp import fs
from orbmcp.config import paths
from orbmcp.config.documents import apply_override, is_partial, servers_block, trust_key_warnings
from orbmcp.config.entries import parse_server
from orbmcp.config.expand import referenced_variables
from orbmcp.config.imports import ClientRead, import_key, source_of
from orbmcp.config.jsonc import read_jsonc
from orbmcp.config.model import ClientName, ConfigWarning, ServerConfig, TrustState
from orbmcp.config.settings import Settings, SettingsLayer, parse_settings
from orbmcp.config.translate import Imported
from orbmcp.errors import ConfigError, cmd

STORE_VERSION = 1
LOCK_TIMEOUT_S = 10.0

ReviewKind = Literal["server", "override", "invalid"]


@dataclass(frozen=True)
class ServerReview:
    """What one project server would run or contact, as the user must see it before approving."""

    name: str
    file: str  # the project file whose entry decides (mcp.json over settings.json)
    kind: ReviewKind  # "override": a partial override of a server defined outside the project
    digest: str
    transport: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env_names: tuple[str, ...] = ()
    url: str | None = None
    header_names: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()  # ${VAR} names that would be read from the environment
    overrides: Mapping[str, object] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # why an "invalid" entry would be skipped
    client: ClientName | None = None  # another client's project file holds it (an import)

    @property
    def key(self) -> str:
        """The name, or for an imported server which client's it is: ``import:cursor/NAME``."""
        return self.name if self.client is None else import_key(self.client, self.name)


@dataclass(frozen=True)
class ProjectReview:
    dir: Path
    real_dir: str
    files: tuple[Path, ...]  # the project files that exist
    servers: tuple[ServerReview, ...]
    settings: Mapping[str, object]  # the settings keys the project states (Settings field names)
    warnings: tuple[ConfigWarning, ...]
    digest: str  # what `approve` must be given: binds every server of this review

    def server(self, name: str) -> ServerReview | None:
        """One of the project's own servers (not an imported one) by name."""
        return next((s for s in self.servers if s.name == name and s.client is None), None)


@dataclass(frozen=True)
class TrustCheck:
    state: TrustState
    approved: frozenset[str]  # keys (ServerReview.key) whose current definition matches the approval
    pending: tuple[str, ...]  # keys of servers that are new or changed since the approval
    warnings: tuple[ConfigWarning, ...] = ()


# ---- reading a project --------------------------------------------------------------------------


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _sha256(value: object) -> str:
    import hashlib  # ~2 ms; only projects with config files get here

    return hashlib.sha256(_canonical(value)).hexdigest()


def real_project_dir(project_dir: Path) -> str:
    return os.path.realpath(project_dir)


def read_project(project_dir: Path) -> list[tuple[Path, dict[str, object]]]:
    """The project files that exist, parsed (lowest precedence first). Reading runs nothing."""
    out: list[tuple[Path, dict[str, object]]] = []
    for path in paths.project_files(project_dir):
        document = read_jsonc(path)
        if document is not None:
            servers_block(document, file=str(path))  # a malformed mcpServers fails here, loudly
            out.append((path, document))
    return out


def project_server_names(project_dir: Path) -> dict[str, str]:
    """The server names a project's files define, in order, each with the file that defines it
    last (the one that would win); empty when a file cannot be read."""
    try:
        documents = read_project(project_dir)
    except ConfigError:
        return {}
    return {name: str(path) for path, document in documents for name in servers_block(document, file=None)}


def review_documents(
    project_dir: Path,
    documents: list[tuple[Path, dict[str, object]]],
    imports: Sequence[ClientRead] = (),
) -> ProjectReview:
    """The review of the project's own files (``documents``) and of the project-level files of
    other clients (``imports``: reads of project scope)."""
    real = real_project_dir(project_dir)
    blocks = [(path, servers_block(doc, file=str(path))) for path, doc in documents]
    names = list(dict.fromkeys(name for _, block in blocks for name in block))
    reviews: list[ServerReview] = []
    for name in names:
        entries = {path.name: block[name] for path, block in blocks if name in block}
        digest = _sha256({"project": real, "name": name, "entries": entries})
        reviews.append(_review_server(name, blocks, digest))
    for read in imports:
        reviews.extend(_review_import(project_dir, real, read, i) for i in read.servers)
    stated: dict[str, object] = {}
    warnings: list[ConfigWarning] = []
    for path, doc in documents:
        file_settings, settings_warnings = parse_settings(doc, file=str(path))
        stated.update(file_settings)
        warnings.extend(settings_warnings)
        warnings.extend(trust_key_warnings(doc, file=str(path)))
    digest = _sha256({"project": real, "servers": {r.key: r.digest for r in reviews}})
    return ProjectReview(
        dir=project_dir,
        real_dir=real,
        files=tuple(path for path, _ in documents) + tuple(read.file.path for read in imports),
        servers=tuple(reviews),
        settings=stated,
        warnings=tuple(warnings),
        digest=digest,
    )


def _review_server(name: str, blocks: list[tuple[Path, Mapping[str, object]]], digest: str) -> ServerReview:
    present = [(path, block[name]) for path, block in blocks if name in block]
    path, raw = present[-1]
    if is_partial(raw) and len(present) > 1 and not is_partial(present[0][1]):
        # project mcp.json partially overriding a full project settings.json entry
        raw = apply_override(cast("dict[str, object]", present[0][1]), cast("dict[str, object]", raw))
    elif is_partial(raw):
        return ServerReview(
            name=name,
            file=str(path),
            kind="override",
            digest=digest,
            overrides=cast("dict[str, object]", raw),
        )
    server, warnings = parse_server(name, raw, file=str(path), source="project", settings=Settings())
    if server is None:
        return ServerReview(
            name=name,
            file=str(path),
            kind="invalid",
            digest=digest,
            problems=tuple(w.message for w in warnings),
        )
    return ServerReview(
        name=name,
        file=str(path),
        kind="server",
        digest=digest,
        transport=server.transport,
        command=server.command,
        args=server.args,
        cwd=server.cwd,
        env_names=tuple(server.env),
        url=server.url,
        header_names=tuple(server.headers),
        variables=_variables(server),
    )


def _review_import(project_dir: Path, real: str, read: ClientRead, imported: Imported) -> ServerReview:
    file = read.file
    digest = _sha256(
        {
            "project": real,
            "import": file.client,
            "file": os.path.relpath(file.path, project_dir),
            "name": imported.name,
            "raw": imported.raw,
            "entry": imported.entry,
        }
    )
    server: ServerConfig | None = None
    problems = imported.problems
    if imported.entry is not None:
        server, warnings = parse_server(
            imported.name,
            imported.entry,
            file=str(file.path),
            source=source_of(file.client),
            settings=Settings(),
        )
        if server is None:
            problems = tuple(w.message for w in warnings)
    return ServerReview(
        name=imported.name,
        file=str(file.path),
        kind="invalid" if server is None else "server",
        digest=digest,
        transport=server.transport if server else None,
        command=server.command if server else None,
        args=server.args if server else (),
        cwd=server.cwd if server else None,
        env_names=tuple(server.env) if server else (),
        url=server.url if server else None,
        header_names=tuple(server.headers) if server else (),
        variables=_variables(server) if server else (),
        problems=problems,
        client=file.client,
    )


def _variables(server: ServerConfig) -> tuple[str, ...]:
    texts = [server.command or "", *server.args, *server.env.values(), server.cwd or "", server.url or ""]
    texts.extend(server.headers.values())
    return tuple(dict.fromkeys(v for text in texts for v in referenced_variables(text)))


def describe_project(
    project_dir: Path, *, global_dir: Path | None = None, environ: Mapping[str, str] | None = None
) -> ProjectReview:
    """Exactly what the project would run, per server, its imported files included (those of the
    clients the global ``imports`` setting names); raises ConfigError for a malformed own file."""
    gdir = global_dir if global_dir is not None else paths.global_dir(environ)
    reads = read_project_imports(project_dir, imported_clients(gdir), environ=environ)
    return review_documents(project_dir, read_project(project_dir), reads)


def imported_clients(global_dir: Path) -> tuple[ClientName, ...]:
    """The clients the user's global settings import (every one unless ``imports`` says otherwise)."""
    from orbmcp.config.imports import active_clients

    layers = []
    for path in paths.global_files(global_dir):
        document = read_jsonc(path)
        if document is not None:
            layers.append(SettingsLayer(document, str(path)))
    return active_clients(Settings.from_files(layers)[0])


def read_project_imports(
    project_dir: Path, clients: Sequence[ClientName], *, environ: Mapping[str, str] | None = None
) -> list[ClientRead]:
    """The project-level files of ``clients`` that exist (unreadable ones are left out: the loader
    warns about them)."""
    from orbmcp.config.imports import read_clients

    return read_clients(clients, project_dir, environ=environ, warnings=[], scope="project")


# ---- the store ------------------------------------------------------------------------------------


def _read_store(global_dir: Path) -> tuple[dict[str, object], ConfigWarning | None]:
    """The store's ``projects`` map, or {} plus a warning when it cannot be relied on."""
    path = paths.trust_store_path(global_dir)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, ConfigWarning(
            f"trust store ignored ({exc.strerror or exc}); no project is trusted",
            str(path),
            reason="trust_store_ignored",
        )
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return {}, ConfigWarning(
                "trust store is not a regular file; ignored", str(path), reason="trust_store_ignored"
            )
        if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
            return {}, ConfigWarning(
                f"trust store is writable by others or not yours (mode {stat.S_IMODE(info.st_mode):o}); "
                "ignored, no project is trusted: approve again with `orbmcp trust`",
                str(path),
                reason="trust_store_ignored",
            )
        data = handle.read()
    try:
        document = json.loads(data)
        projects = document["projects"]
        if not isinstance(projects, dict):
            raise TypeError("projects")  # noqa: TRY301  # same outcome as any other corrupt shape
    except (ValueError, KeyError, TypeError):
        return {}, ConfigWarning(
            "trust store is corrupt; ignored, no project is trusted: approve again with `orbmcp trust`",
            str(path),
            reason="trust_store_corrupt",
        )
    return cast("dict[str, object]", projects), None


def _record(projects: Mapping[str, object], real: str) -> dict[str, str] | None:
    """The approved digests of a project by ServerReview.key, or None when it has no record."""
    record = projects.get(real)
    if not isinstance(record, dict):
        return None
    servers = record.get("servers")
    if not isinstance(servers, dict):
        return None
    approved = {str(k): str(v) for k, v in servers.items()}
    imports = record.get("imports")
    if isinstance(imports, dict):
        for client, names in imports.items():
            if isinstance(names, dict):
                approved |= {import_key(str(client), str(k)): str(v) for k, v in names.items()}
    return approved


def _record_of(review: ProjectReview) -> dict[str, object]:
    imports: dict[str, dict[str, str]] = {}
    for s in review.servers:
        if s.client is not None:
            imports.setdefault(s.client, {})[s.name] = s.digest
    return {
        "digest": review.digest,
        "servers": {s.name: s.digest for s in review.servers if s.client is None},
        "imports": imports,
        "approvedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def approval_recorded(global_dir: Path, project_dir: Path) -> tuple[bool, tuple[ConfigWarning, ...]]:
    """Whether the user ever approved this project, and why the store could not be relied on."""
    projects, problem = _read_store(global_dir)
    found = _record(projects, real_project_dir(project_dir)) is not None
    return found, (problem,) if problem else ()


def check_trust(global_dir: Path, review: ProjectReview) -> TrustCheck:
    projects, problem = _read_store(global_dir)
    warnings = (problem,) if problem else ()
    approved_digests = _record(projects, review.real_dir)
    if approved_digests is None:
        return TrustCheck("untrusted", frozenset(), tuple(s.key for s in review.servers), warnings)
    approved = frozenset(s.key for s in review.servers if approved_digests.get(s.key) == s.digest)
    pending = tuple(s.key for s in review.servers if s.key not in approved)
    return TrustCheck("changed" if pending else "trusted", approved, pending, warnings)


def trust_record(global_dir: Path, project_dir: Path) -> TrustState:
    return check_trust(global_dir, describe_project(project_dir, global_dir=global_dir)).state


def approve(global_dir: Path, project_dir: Path, digest: str) -> None:
    """Record approval of the project as reviewed. ``digest`` comes from the review the user saw:
    if the files changed since, nothing is approved (the user did not see the new definitions)."""
    review = describe_project(project_dir, global_dir=global_dir)
    if review.digest != digest:
        raise ConfigError(
            f"{paths.project_config_dir(project_dir)}: the project configuration changed while it was "
            "being reviewed; nothing was approved",
            file=str(paths.project_config_dir(project_dir)),
            hint=f"run `{cmd('trust')}` again and review the new definitions",
            reason="changed_during_review",
        )
    _update_store(global_dir, review.real_dir, _record_of(review))


def revoke(global_dir: Path, project_dir: Path) -> bool:
    """Forget the project's approval; False when there was none (nothing is written then)."""
    real = real_project_dir(project_dir)
    if not paths.trust_store_path(global_dir).exists():
        return False
    return _update_store(global_dir, real, None)


def _update_store(global_dir: Path, real: str, record: Mapping[str, object] | None) -> bool:
    # The global dir may be a symlink the user made (dotfiles); fs refuses a symlinked private
    # dir, so the store is written where the link points.
    path = paths.trust_store_path(Path(os.path.realpath(global_dir)))
    try:
        with fs.locked(path, timeout=LOCK_TIMEOUT_S):
            projects, problem = _read_store(global_dir)
            if problem is not None and path.exists():
                # Keep what we could not trust for inspection; start a clean store.
                os.replace(path, f"{path}.corrupt-{int(time.time())}")
            projects = dict(projects)
            changed = real in projects if record is None else True
            if record is None:
                projects.pop(real, None)
            else:
                projects[real] = dict(record)
            if changed:
                fs.atomic_write(path, _canonical({"version": STORE_VERSION, "projects": projects}))
            return changed
    except fs.LockTimeout:
        store = paths.trust_store_path(global_dir)
        raise ConfigError(
            f"{store}: another orbmcp is updating the trust store (lock {fs.lock_path(store)} held)",
            file=str(store),
            hint="try again in a moment",
            reason="trust_store_locked",
        ) from None


def carry_approval(global_dir: Path, project_dir: Path, name: str, before: ProjectReview) -> bool:
    """After orbmcp changed one of a project's own entries at the person's command (add, remove,
    enable, disable), keep that server's approval: when the project has a record and the entry was
    approved before the change (or did not exist), its new digest is recorded. Nothing else
    changes: another server that is pending stays pending. True when the record was updated."""
    old = before.server(name)
    after = describe_project(project_dir, global_dir=global_dir).server(name)
    real = before.real_dir
    path = paths.trust_store_path(Path(os.path.realpath(global_dir)))
    try:
        with fs.locked(path, timeout=LOCK_TIMEOUT_S):
            projects, problem = _read_store(global_dir)
            record = projects.get(real)
            if (
                problem is not None
                or not isinstance(record, dict)
                or not isinstance(record.get("servers"), dict)
            ):
                return False
            servers = cast("dict[str, object]", record["servers"])
            if old is not None and servers.get(name) != old.digest:
                return False  # it was not approved as it was: the change does not approve it
            if after is None:
                servers.pop(name, None)
            else:
                servers[name] = after.digest
            fs.atomic_write(path, _canonical({"version": STORE_VERSION, "projects": projects}))
            return True
    except fs.LockTimeout:
        return False
