"""add, remove, enable, disable: change orbmcp's own config files from the command line.

Which file: ``add`` writes the global ``mcp.json`` (``--scope project``: the project's), or the
``--config`` file when one is named. ``remove``, ``enable`` and ``disable`` change the entry that is
in effect, where it is; a server that comes from another client's file or an extension is switched
off (or on) by a partial entry in the global ``mcp.json``, since orbmcp never writes other clients'
files. An edit of a trusted project's file keeps that server's approval (the person made the change).
In a session that stays up, ``enable`` also starts the server and ``disable`` stops it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.edit import ServerEdit, ServerEdits
from orbmcp.commands.spelling import spell_for
from orbmcp.config import edit as config_edit
from orbmcp.config import paths
from orbmcp.config.model import Lifecycle, ResolvedConfig, ServerConfig
from orbmcp.config.settings import Settings
from orbmcp.config.transports import from_spelling, spellings_text
from orbmcp.errors import UsageError, cmd

_URL = re.compile(r"https?://", re.IGNORECASE)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_\-.+/=]{20,}")


# ---- where -----------------------------------------------------------------------------------------


class Target:
    """One of orbmcp's own files, and how to write it."""

    def __init__(self, path: Path, scope: str, config: ResolvedConfig) -> None:
        self.path = path
        self.scope = scope
        self.config = config

    @property
    def private(self) -> bool:
        return self.scope == "global"  # the global dir is orbmcp's own, 0700

    @property
    def project_dir(self) -> Path | None:
        return self.config.project.dir if self.scope == "project" else None


def target_for(ctx: CommandContext, scope: str | None) -> Target:
    config = ctx.config()
    if config.config_override is not None:
        if scope is not None:
            raise UsageError("--scope cannot be used with --config: the named file is the only one")
        return Target(config.config_override, "config", config)
    if scope not in (None, "global", "project"):
        raise UsageError(f"--scope must be global or project (got {scope!r})")
    if scope == "project":
        return Target(paths.project_files(config.project.dir)[1], "project", config)
    return Target(paths.global_files(config.global_dir)[1], "global", config)


def _target_of_file(file: str, config: ResolvedConfig) -> Target:
    path = Path(file)
    if config.config_override is not None:
        return Target(path, "config", config)
    scope = "project" if path.parent == paths.project_config_dir(config.project.dir) else "global"
    return Target(path, scope, config)


def _write(
    target: Target, plan: Any, name: str, *, ctx: CommandContext, notes: list[str]
) -> config_edit.FileEdit:
    """Edit ``target``; for a project file keep the server's approval (the person changed it)."""
    from orbmcp.config import trust

    before = None
    project = target.project_dir
    if project is not None:
        before = trust.describe_project(project, global_dir=target.config.global_dir)
    change = config_edit.edit(target.path, plan, global_dir=target.config.global_dir, private=target.private)
    carried = (project is None or before is None or not change.changed) or trust.carry_approval(
        target.config.global_dir, project, name, before
    )
    if not carried:
        notes.append(
            spell_for(
                f"the project's servers run only once approved: review them with `{cmd('trust')}`",
                ctx.front,
            )
        )
    return change


# ---- add -------------------------------------------------------------------------------------------


def pairs(values: Sequence[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or ():
        colon, equals = value.find(":"), value.find("=")
        split = colon if what == "header" and colon > 0 and (equals < 0 or colon < equals) else equals
        if split <= 0:
            example = "Authorization=Bearer ${API_TOKEN}" if what == "header" else "API_KEY=${API_KEY}"
            raise UsageError(f"--{what} {value!r}: expected NAME=VALUE, e.g. --{what} '{example}'")
        out[value[:split].strip()] = value[split + 1 :].strip() if what == "header" else value[split + 1 :]
    return out


def build_entry(
    target: Sequence[str],
    *,
    env: Mapping[str, str],
    headers: Mapping[str, str],
    transport: str | None,
    lazy: bool,
) -> dict[str, object]:
    """The entry ``add`` writes for ``COMMAND [ARGS...]`` or ``URL``."""
    if not target:
        raise UsageError(
            "give the server's command (after --) or its URL", hint="orbmcp add NAME -- COMMAND [ARGS...]"
        )
    wanted = None
    if transport is not None:
        wanted = from_spelling(transport)
        if wanted is None:
            raise UsageError(f"--transport must be {spellings_text()} (got {transport!r})")
    local = wanted is not None and wanted.local
    entry: dict[str, object]
    if len(target) == 1 and _URL.match(target[0]) and not local:
        if env:
            raise UsageError("--env applies to a command (stdio server); an HTTP server takes --header")
        entry = {"url": target[0]}
        if wanted is not None:
            entry["transport"] = wanted.name
        if headers:
            entry["headers"] = dict(headers)
    else:
        if len(target) == 1 and _SCHEME.match(target[0]) and not local:
            raise UsageError(
                f"{target[0]!r}: only http:// and https:// URLs (a command after -- runs a local server)"
            )
        if wanted is not None and not local:
            raise UsageError(f"--transport {transport} needs a URL, not a command")
        if headers:
            raise UsageError("--header applies to an HTTP server (a URL); a command takes --env")
        entry = {"command": target[0], "args": list(target[1:])}
        if env:
            entry["env"] = dict(env)
    if lazy:
        entry["lifecycle"] = "lazy"
    return entry


def _secret_notes(name: str, entry: Mapping[str, object], file: Path) -> list[str]:
    from orbmcp.redact import redact_field

    notes = []
    for kind, values in (("env", entry.get("env")), ("header", entry.get("headers"))):
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            if not isinstance(value, str) or "${" in value:
                continue
            secret = value.split(" ", 1)[-1] if kind == "header" else value
            looks = redact_field(key, value) != value or (
                _TOKEN_SHAPE.fullmatch(secret) is not None
                and any(c.isdigit() for c in secret)
                and any(c.isalpha() for c in secret)
                and not secret.startswith(("/", "~", "."))
            )
            if looks:
                var = (
                    key.upper().replace("-", "_")
                    if kind == "env"
                    else f"{name.upper().replace('-', '_')}_TOKEN"
                )
                scheme = value.split(" ", 1)[0] + " " if kind == "header" and " " in value else ""
                notes.append(
                    f"{kind} {key} looks like a secret and is stored as given in {file}; to keep it out "
                    f"of the file, export {var} and pass --{kind} '{key}={scheme}${{{var}}}' instead"
                )
    return notes


def add(
    ctx: CommandContext,
    name: str | None = None,
    target: list[str] | None = None,
    *,
    env: list[str] | None = None,
    header: list[str] | None = None,
    transport: str | None = None,
    lazy: bool = False,
    scope: str | None = None,
    overwrite: bool = False,
    entry_json: str | None = None,
) -> ServerEdit | ServerEdits:
    if entry_json is not None:
        from orbmcp.commands.snippet import snippet_entries

        if target or env or header or transport:
            raise UsageError(
                "--json is the whole entry: give no command, URL, --env, --header or --transport"
            )
        chosen = [
            (n, dict(e) | ({"lifecycle": "lazy"} if lazy else {}))
            for n, e in snippet_entries(name, entry_json)
        ]
        settings = ctx.config().settings
        for each, entry in chosen:  # every entry checked before any is written
            _checked(each, entry, settings)
        edits = [_add_entry(ctx, each, entry, scope=scope, overwrite=overwrite) for each, entry in chosen]
        return edits[0] if len(edits) == 1 else ServerEdits(tuple(edits))
    if name is None:
        raise UsageError("give the server's name: orbmcp add NAME -- COMMAND [ARGS...] (or NAME URL)")
    entry = build_entry(
        target or [], env=pairs(env, "env"), headers=pairs(header, "header"), transport=transport, lazy=lazy
    )
    return _add_entry(ctx, name, entry, scope=scope, overwrite=overwrite)


def _add_entry(
    ctx: CommandContext, name: str, entry: dict[str, object], *, scope: str | None, overwrite: bool
) -> ServerEdit:
    """Check ``entry`` like any entry, then write it into the file ``scope`` names."""
    where = target_for(ctx, scope)
    _checked(name, entry, where.config.settings)
    notes = _secret_notes(name, entry, where.path) + _relative_path_notes(ctx, name, entry)
    previous = where.config.servers.get(name)
    replaced = False

    def plan(document: dict[str, object]) -> list[config_edit.Op]:
        nonlocal replaced
        replaced = name in _servers(document)
        return config_edit.add_ops(document, name, entry, overwrite=overwrite, file=where.path)

    _write(where, plan, name, ctx=ctx, notes=notes)
    notes.extend(_precedence_notes(ctx, name, where, previous))
    result = ServerEdit(
        "replaced" if replaced else "added",
        name,
        str(where.path),
        where.scope,
        entry=masked(entry),
        notes=tuple(notes),
    )
    return followed(ctx, result)


def _relative_path_notes(ctx: CommandContext, name: str, entry: Mapping[str, object]) -> list[str]:
    """A relative path in the command line works only from this directory: say so, with the line
    that stores the absolute path instead (a server's own ``cwd`` makes them deliberate)."""
    command, args = entry.get("command"), entry.get("args") or []
    if not isinstance(command, str) or "cwd" in entry or not isinstance(args, list):
        return []
    target = [command, *(str(arg) for arg in args)]
    here = Path.cwd()
    relative = [
        i
        for i, word in enumerate(target)
        if not word.startswith(("-", "/", "~", "$")) and (i > 0 or "/" in word) and (here / word).exists()
    ]
    if not relative:
        return []
    absolute = [str((here / word).resolve()) if i in relative else word for i, word in enumerate(target)]
    words = ", ".join(f"'{target[i]}'" for i in relative)
    fix = cmd("add", shlex.quote(name), "--overwrite", "--", *(shlex.quote(w) for w in absolute))
    return [
        spell_for(
            f"{words}: a relative path, found from {here}; the server starts from whatever directory "
            f"orbmcp runs in, where it may not exist. To store the absolute path: `{fix}`",
            ctx.front,
        )
    ]


def _checked(name: str, entry: Mapping[str, object], settings: Settings) -> None:
    """A usage error unless ``entry`` is a valid entry named ``name``."""
    from orbmcp.config.entries import parse_server

    _check_name(name)
    checked, problems = parse_server(name, entry, file=None, source="global", settings=settings)
    if checked is None:
        raise UsageError(f"server '{name}': " + "; ".join(w.message for w in problems))


def _servers(document: Mapping[str, object]) -> Mapping[str, object]:
    from orbmcp.config.documents import servers_block

    return servers_block(document, file=None)


def _check_name(name: str) -> None:
    if not name.strip() or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise UsageError(f"{name!r} is not a usable server name")


def _precedence_notes(
    ctx: CommandContext, name: str, where: Target, previous: ServerConfig | None
) -> list[str]:
    """What the new entry wins over, or what still wins over it."""
    now = reloaded(ctx).servers.get(name)
    if now is not None and now.file != str(where.path) and now.override_file != str(where.path):
        return [f"'{name}' of {now.source} ({now.file}) still takes precedence here"]
    if previous is not None and previous.file != str(where.path):
        return [f"it takes precedence over '{name}' of {previous.source} ({previous.file})"]
    return []


def followed(ctx: CommandContext, result: ServerEdit) -> ServerEdit:
    """``result``; in a session that stays up, the context now carries the files' new
    configuration, which that front moves its servers to (the REPL: a server just added can be
    started at once)."""
    if ctx.persistent:
        ctx.set_config(reloaded(ctx))
    return result


def reloaded(ctx: CommandContext) -> ResolvedConfig:
    """The configuration as the files now say, without changing the command's own (a REPL keeps
    the one its servers run with)."""
    from orbmcp.config.loader import load_config

    return load_config(project=ctx.project, config_file=ctx.config_file)


def masked(entry: Mapping[str, object]) -> dict[str, object]:
    from orbmcp.redact import mask_value

    out = dict(entry)
    for key in ("env", "headers"):
        values = out.get(key)
        if isinstance(values, dict):
            out[key] = {k: mask_value(v) if isinstance(v, str) else v for k, v in values.items()}
    auth = out.get("auth")
    if isinstance(auth, dict) and isinstance(auth.get("clientSecret"), str):
        out["auth"] = {**auth, "clientSecret": mask_value(auth["clientSecret"])}
    return out


# ---- remove ----------------------------------------------------------------------------------------


def remove(ctx: CommandContext, name: str, scope: str | None = None) -> ServerEdit:
    config = ctx.config()
    where = _defining_file(ctx, name, scope)
    if where is None:
        from orbmcp.suggest import unknown_server

        raise unknown_server(name, list(config.servers))

    def plan(document: dict[str, object]) -> list[config_edit.Op]:
        return config_edit.remove_ops(document, name)

    notes: list[str] = []
    change = _write(where, plan, name, ctx=ctx, notes=notes)
    after = reloaded(ctx).servers.get(name)
    if after is not None:
        notes.append(f"'{name}' is still defined by {after.source} ({after.file})")
    result = ServerEdit(
        "removed" if change.changed else "unchanged",
        name,
        str(where.path),
        where.scope,
        notes=tuple(notes),
        wanted="removed",
    )
    return followed(ctx, result)


def _defining_file(ctx: CommandContext, name: str, scope: str | None) -> Target | None:
    """The own file whose entry for ``name`` is in effect (or, with ``scope``, that scope's file
    that has one). Refuses a server that only another client's file or an extension defines."""
    config = ctx.config()
    if config.config_override is not None or scope is not None:
        where = target_for(ctx, scope)
        candidates = [where.path]
        if where.scope != "config":
            own = (
                paths.project_files(config.project.dir)
                if where.scope == "project"
                else paths.global_files(config.global_dir)
            )
            candidates = [own[1], own[0]]
        for path in candidates:
            _, document = config_edit.read_document(path)
            if name in _servers(document):
                return Target(path, where.scope, config)
        return None
    cfg = config.servers.get(name)
    if cfg is not None and cfg.file is not None and cfg.source in ("global", "project"):
        return _target_of_file(cfg.file, config)
    if cfg is not None:
        raise UsageError(
            f"'{name}' comes from {_origin(cfg)}; orbmcp does not edit other programs' configuration",
            hint=f"switch it off here with `{cmd('disable', name)}`",
            reason="not_own_entry",
        )
    for path in (*reversed(paths.global_files(config.global_dir)),):
        _, document = config_edit.read_document(path)
        if name in _servers(document):  # there, but invalid (so not in the resolved config)
            return Target(path, "global", config)
    return None


def _origin(cfg: ServerConfig) -> str:
    if cfg.source == "extension":
        return "a server an extension registered"
    return f"{cfg.source} ({cfg.file})"


# ---- enable / disable ------------------------------------------------------------------------------


async def enable(ctx: CommandContext, server: str) -> ServerEdit:
    return await _switch(ctx, server, on=True)


async def disable(ctx: CommandContext, server: str) -> ServerEdit:
    return await _switch(ctx, server, on=False)


async def _switch(ctx: CommandContext, name: str, *, on: bool) -> ServerEdit:
    config = ctx.config()
    cfg = ctx.server(name)
    where = _switch_target(cfg, config)

    def plan(document: dict[str, object]) -> list[config_edit.Op]:
        return config_edit.switch_ops(document, name, on)

    notes: list[str] = []
    change = _write(where, plan, name, ctx=ctx, notes=notes)
    word = "enabled" if on else "disabled"
    state = await _apply_live(ctx, name, on=on) if ctx.persistent else None
    if not change.changed and state is None:
        return ServerEdit("unchanged", name, str(where.path), where.scope, notes=tuple(notes), wanted=word)
    return ServerEdit(
        "enabled" if on else "disabled", name, str(where.path), where.scope, notes=tuple(notes), state=state
    )


def _switch_target(cfg: ServerConfig, config: ResolvedConfig) -> Target:
    if cfg.override_file is not None:  # a partial entry decides it here: change that one
        return _target_of_file(cfg.override_file, config)
    if cfg.file is not None and cfg.source in ("global", "project", "config"):
        return _target_of_file(cfg.file, config)
    # Another client's or an extension's server: a partial entry in the global mcp.json.
    return Target(paths.global_files(config.global_dir)[1], "global", config)


async def _apply_live(ctx: CommandContext, name: str, *, on: bool) -> str | None:
    """In a session that stays up: the server's entry switched in place, then started or stopped."""
    from orbmcp.config.loader import load_config

    manager = await ctx.manager()
    current = manager.config
    cfg = current.servers.get(name)
    if cfg is None:
        return None
    lifecycle: Lifecycle = "lazy"
    if on:
        try:
            fresh = load_config(project=ctx.project, config_file=ctx.config_file).servers.get(name)
        except Exception:  # the file was just written by us; a failure here must not undo that
            fresh = None
        lifecycle = fresh.lifecycle if fresh is not None else "eager"
    switched = replace(
        current, servers={**current.servers, name: replace(cfg, enabled=on, lifecycle=lifecycle)}
    )
    await manager.apply_config(switched)
    ctx.set_config(switched)
    sup = await manager.start(name) if on else manager.get(name)
    return str(sup.state)
