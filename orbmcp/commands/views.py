"""Building status rows and detail views from config and (optionally) live supervisors.

Kept free of the SDK: a status of servers that are all disabled must not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orbmcp.commands.results import ServerDetail, StatusReport, StatusRow, ToolCounts
from orbmcp.commands.spelling import spell_for
from orbmcp.errors import cmd

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig, ServerConfig
    from orbmcp.core.manager import Manager
    from orbmcp.core.supervisor import Supervisor


def auth_line(cfg: ServerConfig, config: ResolvedConfig) -> str:
    if cfg.auth is None:
        return "not configured"
    from orbmcp.auth.status import auth_status

    return auth_status(cfg, config.global_dir)


def project_notice(config: ResolvedConfig) -> str | None:
    p = config.project
    if p.files and not p.trusted and config.config_override is None:
        return str(p.config_path)
    return None


def status_row(
    cfg: ServerConfig, config: ResolvedConfig, sup: Supervisor | None, *, front: str = "cli"
) -> StatusRow:
    state = str(sup.state) if sup is not None else "stopped"
    discovered, active = sup.runtime.tools.counts(cfg.name) if sup is not None else (0, 0)
    return StatusRow(
        name=cfg.name,
        lifecycle=cfg.lifecycle,
        state=state,
        tools=ToolCounts(discovered, active),
        auth=auth_line(cfg, config),
        source=cfg.source,
        error=_spelled(sup.snap.last_error, front) if sup is not None else None,
        warning=sup.snap.warnings[-1] if sup is not None and sup.snap.warnings else None,
        warnings=len(sup.snap.warnings) if sup is not None else 0,
    )


def status_report(
    config: ResolvedConfig,
    manager: Manager | None,
    *,
    stopped_after: bool = False,
    front: str = "cli",
    daemon_pid: int | None = None,
) -> StatusReport:
    rows = tuple(
        status_row(cfg, config, manager.supervisors.get(name) if manager else None, front=front)
        for name, cfg in config.servers.items()
    )
    notices: list[str] = []
    nl = project_notice(config)
    if nl:
        trust = spell_for(cmd("trust"), front)
        notices.append(f"Project config: not loaded ({nl}) — run `{trust}` to review and approve it")
    if not config.settings.extension_enabled:
        notices.append("MCP is turned off (goExtensions.mcp: false)")
    notices.extend(str(w) for w in config.warnings)
    return StatusReport(rows=rows, notices=tuple(notices), stopped_after=stopped_after, daemon_pid=daemon_pid)


def _spelled(text: str | None, front: str) -> str | None:
    return None if text is None else spell_for(text, front)


def server_detail(
    cfg: ServerConfig,
    config: ResolvedConfig,
    sup: Supervisor | None,
    *,
    front: str = "cli",
    message: str | None = None,
) -> ServerDetail:
    from orbmcp.core.hints import hint_for

    tools = sup.runtime.tools.for_server(cfg.name) if sup is not None else []
    discovered, active = sup.runtime.tools.counts(cfg.name) if sup is not None else (0, 0)
    recent = tuple(sup.stderr_tail()) if sup is not None else ()
    warnings = tuple(sup.snap.warnings) if sup is not None else ()
    return ServerDetail(
        name=cfg.name,
        state=str(sup.state) if sup is not None else "stopped",
        retries=sup.snap.retries if sup is not None else 0,
        max_retries=max(0, min(cfg.max_retries, 10)),
        transport=(sup.snap.transport if sup is not None else None) or cfg.transport,
        lifecycle=cfg.lifecycle if cfg.enabled else "lazy (disabled)",
        source=cfg.source,
        file=cfg.file,
        tools=ToolCounts(discovered, active),
        oauth=None if cfg.auth is None else auth_line(cfg, config),
        last_error=_spelled(sup.snap.last_error, front) if sup is not None else None,
        hint=_spelled(hint_for(sup), front) if sup is not None else None,
        recent_output=recent + tuple(f"[orbmcp] {w}" for w in warnings),
        project_not_loaded=project_notice(config),
        protocol_version=sup.snap.protocol_version if sup is not None else None,
        server_info=sup.snap.server_info if sup is not None else None,
        tool_names=tuple(t.name for t in tools),
        message=message,
        error_code=sup.snap.last_error_code if sup is not None else None,
        instructions=sup.snap.instructions if sup is not None else None,
        advertised=sup.snap.advertised if sup is not None else None,
        offered=sup.snap.capabilities if sup is not None else None,
    )
