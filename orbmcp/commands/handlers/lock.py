"""``orbmcp lock``, ``tools --diff``, and the lock's word in ``check``, ``status`` and ``call``.

The lock file sits next to the config it belongs to (``--config FILE``'s directory, the project's
``.orb/`` when the project has orbmcp files, else the global directory), or wherever ``--lock``
says. See ``commands/toollock.py`` for what it holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from orbmcp.commands import toollock
from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.lock import LockReport, ToolDiff
from orbmcp.commands.spelling import spell_for
from orbmcp.config import paths
from orbmcp.core.session.hints import failure_error
from orbmcp.errors import ConfigError, ToolError, UsageError, cmd

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.supervisor import Supervisor


def lock_path(ctx: CommandContext, given: Path | str | None = None) -> Path:
    """``--lock FILE``, else ``orbmcp-lock.json`` beside the config the servers come from."""
    if given is not None:
        return Path(given).expanduser()
    return default_lock_path(ctx.config())


def default_lock_path(config: ResolvedConfig) -> Path:
    if config.config_override is not None:
        return config.config_override.parent / toollock.LOCK_FILE
    project = paths.project_config_dir(config.project.dir)
    if config.project.loaded and any(f.parent == project for f in config.project.files):
        return project / toollock.LOCK_FILE
    return config.global_dir / toollock.LOCK_FILE


def live_entry(sup: Supervisor) -> dict[str, Any]:
    """A connected server's tools, as the lock pins them."""
    tools = [
        toollock.tool_entry(
            name=t.name,
            title=t.title,
            description=t.raw_description,
            annotations=t.annotations,
            input_schema=t.input_schema,
            output_schema=t.output_schema,
        )
        for t in sup.runtime.tools.for_server(sup.name)
    ]
    return toollock.server_entry(sup.snap.server_info, tools)


async def _ready_entries(ctx: CommandContext, names: list[str]) -> tuple[Manager, dict[str, dict[str, Any]]]:
    for name in names:
        ctx.server(name)
    manager = await ctx.manager()
    await manager.start_many(names)
    entries: dict[str, dict[str, Any]] = {}
    for name in names:
        sup = manager.get(name)
        if str(sup.state) != "ready":
            raise failure_error(sup)
        entries[name] = live_entry(sup)
    return manager, entries


async def lock(
    ctx: CommandContext,
    servers: list[str] | None = None,
    *,
    lock_file: str | None = None,
    update: bool = False,
) -> LockReport:
    config = ctx.config()
    names = list(dict.fromkeys(servers or [s.name for s in config.enabled_servers()]))
    if not names:
        raise UsageError("no server to lock", hint=f"name one: {cmd('lock', 'NAME')}")
    path = lock_path(ctx, lock_file)
    previous = toollock.read(path)
    _manager, entries = await _ready_entries(ctx, names)
    changes = tuple(
        c
        for name in names
        if previous is not None and name in previous
        for c in toollock.diff_server(name, previous[name], entries[name])
    )
    if changes and not update:
        # Shown, not written: the person reviews the diff, then ``lock --update`` writes it.
        again = spell_for(cmd("lock", *names, "--update"), ctx.front)
        return LockReport(str(path), tuple(names), changes, written=False, update_command=again)
    merged = dict(previous or {}) | entries
    try:
        toollock.write(path, merged)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the lock file ({exc.strerror or exc})") from None
    return LockReport(str(path), tuple(names), changes, written=True, created=previous is None)


def lock_changes(
    path: Path, entries: dict[str, dict[str, Any]], *, locked_only: bool = False
) -> list[toollock.ToolChange] | None:
    """What differs between the lock at ``path`` and ``entries``; None without a lock file.
    ``locked_only``: servers the lock does not name have nothing to differ from (status, call);
    ``check --lock`` counts every tool of such a server as added."""
    locked = toollock.read(path)
    if locked is None:
        return None
    return [
        c
        for name, entry in entries.items()
        if not locked_only or name in locked
        for c in toollock.diff_server(name, locked.get(name), entry)
    ]


def server_changes(path: Path, sup: Supervisor) -> list[toollock.ToolChange] | None:
    """``lock_changes(path, {sup.name: live_entry(sup)}, locked_only=True)``, with the server's
    entry (a hash of every tool's description and schemas) built only when the lock names it:
    ``call`` and ``status`` ask on every command, and most configs have no lock file."""
    locked = toollock.read(path)
    if locked is None:
        return None
    if sup.name not in locked:
        return []
    return toollock.diff_server(sup.name, locked.get(sup.name), live_entry(sup))


async def tool_diff(ctx: CommandContext, before: str, after: str) -> ToolDiff:
    """``tools --diff A B``: B's tools against A's (two servers, or two versions of one)."""
    _manager, entries = await _ready_entries(ctx, list(dict.fromkeys([before, after])))
    changes = toollock.diff_server(after, entries[before], entries[after])
    return ToolDiff(before, after, tuple(changes))


def changed_since_lock(ctx: CommandContext, sup: Supervisor) -> str | None:
    """For ``status``: a warning when a lock file exists and this server's tools differ from it."""
    path = default_lock_path(ctx.config())
    try:
        changes = server_changes(path, sup)
    except ConfigError:  # a broken lock file is for `lock` and `check` to report, not status
        return f"the lock file {path} cannot be read"
    if not changes or str(sup.state) != "ready":
        return None
    names = ", ".join(c.tool for c in changes[:5]) + (" ..." if len(changes) > 5 else "")
    return f"tools changed since lock ({path}): {names}"


def check_call(ctx: CommandContext, sup: Supervisor, tool: str) -> None:
    """Before ``call``: a tool that changed since the lock is named on stderr, or refused when the
    settings say ``"lock": "strict"``."""
    path = default_lock_path(ctx.config())
    changes = server_changes(path, sup)
    changed = [c for c in changes or () if c.tool == tool]
    if not changed:
        return
    what = ", ".join(changed[0].fields) or changed[0].kind
    text = f"tool '{tool}' on server '{sup.name}' changed since the lock ({path}: {what})"
    review, update = cmd("check", sup.name, "--lock", str(path)), cmd("lock", sup.name, "--update")
    hint = f"review it with {review}, then {update}"
    if ctx.config().settings.lock == "strict":
        raise ToolError(
            text + '; refused ("lock": "strict")',
            server=sup.name,
            hint=hint,
            reason="tool_changed_since_lock",
        )
    ctx.ui.notify(spell_for(f"{text}; {hint}", ctx.front), level="warning")
