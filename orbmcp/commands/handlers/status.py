"""/mcp, /mcp <name>, start, stop, reconnect (``check`` is in ``handlers/check.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from orbmcp.commands.context import CommandContext
from orbmcp.commands.durations import apply_timeout
from orbmcp.commands.handlers.lock import changed_since_lock
from orbmcp.commands.results.status import ServerAction, ServerDetail, StatusReport, StatusRow
from orbmcp.commands.spelling import spell_for
from orbmcp.commands.views import server_detail, status_report, unavailable_detail
from orbmcp.core.capabilities.server_log import check_level
from orbmcp.core.processes import has_group_records
from orbmcp.errors import UsageError, cmd

if TYPE_CHECKING:
    from orbmcp.core.session.manager import Manager

ONE_SHOT_NOTE = (
    "stopped again: this one-shot command exits now "
    f"(`{cmd('daemon', 'start')}` keeps servers connected across commands)"
)


async def status(
    ctx: CommandContext, server: str | None = None, timeout: str | None = None
) -> StatusReport | ServerDetail:
    apply_timeout(ctx, timeout)
    config = ctx.config()
    if server is not None and server in config.unavailable:
        # An entry that did not load: the detail view says what it is and why (status reports).
        return unavailable_detail(config.unavailable[server], config, front=ctx.front)
    if server is not None:
        cfg = ctx.server(server)
        if not config.enabled_servers() and not ctx.persistent:
            return server_detail(cfg, config, None, front=ctx.front)
        manager = await ctx.manager()
        sup = manager.get(server)
        if not ctx.persistent and cfg.eager:
            await manager.start(server)
        detail = server_detail(cfg, config, sup, front=ctx.front)
        changed = changed_since_lock(ctx, sup)
        return detail if changed is None else replace(detail, warnings=(*detail.warnings, changed))
    nothing_to_connect = not (ctx.persistent or config.eager_servers())
    if not config.enabled_servers() or (nothing_to_connect and not has_group_records(config.global_dir)):
        # Zero-work path: nothing to connect (no server, or one-shot with only lazy ones) and no
        # crashed run's servers for a session's start to reap, so no session, no event loop,
        # nothing imported for it; each row is a stopped server's.
        return status_report(config, None, front=ctx.front)
    manager = await ctx.manager()
    if not ctx.persistent:
        await manager.start_eager()
    report = status_report(
        config,
        manager,
        stopped_after=not ctx.persistent,
        front=ctx.front,
        daemon_pid=ctx.sessions.daemon_pid if ctx.sessions is not None else None,
    )
    return replace(report, rows=tuple(_with_lock(ctx, manager, row) for row in report.rows))


def _with_lock(ctx: CommandContext, manager: Manager, row: StatusRow) -> StatusRow:
    """The row, with ``tools changed since lock`` when a lock file exists and its tools differ."""
    if row.state != "ready":
        return row
    changed = changed_since_lock(ctx, manager.get(row.name))
    return row if changed is None else replace(row, warnings=(*row.warnings, changed))


def checked_log_level(value: str | None) -> str | None:
    """``--log-level``'s value as a protocol level, or a usage error listing the levels."""
    if value is None:
        return None
    try:
        return check_level(value)
    except ValueError as exc:
        raise UsageError(f"--log-level: {exc}") from None


async def start(
    ctx: CommandContext, server: str, log_level: str | None = None, timeout: str | None = None
) -> ServerAction:
    apply_timeout(ctx, timeout)
    config = ctx.config()
    cfg = ctx.server(server)
    level = checked_log_level(log_level)
    manager = await ctx.manager()
    if level is not None and not ctx.persistent:
        manager.runtime.log_level = level  # asked for as the connection opens
    sup = await manager.start(server)
    if level is not None and ctx.persistent and sup.connected:
        await sup.client_side.set_log_level(sup.client, sup.snap.protocol_version, level)
    note = None if ctx.persistent else spell_for(ONE_SHOT_NOTE, ctx.front)
    detail = server_detail(cfg, config, sup, front=ctx.front, message=note)
    return ServerAction("start", (detail,), message=note)


async def stop(ctx: CommandContext, server: str) -> ServerAction:
    config = ctx.config()
    cfg = ctx.server(server)
    manager = await ctx.manager()
    sup = await manager.stop(server)
    if ctx.persistent:
        message = f"stopped '{server}'; its tools are inactive"
    else:
        # A newcomer's `orbmcp stop x` in a shell: nothing ran, and nothing it did would last.
        message = spell_for(
            f"stopped '{server}' for this command only: without a session each command connects what "
            f"it needs and stops it when it exits, so a stop does not persist; `{cmd('daemon', 'start')}` "
            "keeps servers connected across commands (and a stopped one stays stopped)",
            ctx.front,
        )
    return ServerAction("stop", (server_detail(cfg, config, sup, front=ctx.front),), message=message)


async def reconnect(ctx: CommandContext, server: str | None = None) -> ServerAction:
    config = ctx.config()
    if server is not None:
        ctx.server(server)
    manager = await ctx.manager()
    sups = await manager.reconnect(server)
    note = None if ctx.persistent else spell_for(ONE_SHOT_NOTE, ctx.front)
    details = tuple(server_detail(s.cfg, config, s, front=ctx.front) for s in sups)
    return ServerAction("reconnect", details, message=note)
