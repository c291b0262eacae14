"""Building status rows and detail views from config and (optionally) live supervisors.

Kept free of the SDK: a status of servers that are all disabled must not import it.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from orbmcp.commands.results.status import (
    Launch,
    RetryWait,
    ServerDetail,
    StatusReport,
    StatusRow,
    ToolCounts,
)
from orbmcp.commands.spelling import spell_for
from orbmcp.config.transports import kind_of
from orbmcp.errors import cmd

if TYPE_CHECKING:
    from collections.abc import Iterable

    from orbmcp.config.model import ResolvedConfig, ServerConfig, UnavailableEntry
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.supervisor import Supervisor


def auth_line(cfg: ServerConfig, config: ResolvedConfig) -> str:
    """The auth cell: ``-`` for a stdio server (OAuth is for remote servers only)."""
    if cfg.is_stdio:
        return NO_AUTH
    if cfg.auth is None:
        return "not configured"
    from orbmcp.auth.status import auth_status

    return auth_status(cfg, config.global_dir)


NO_AUTH = "-"


def project_notice(config: ResolvedConfig) -> str | None:
    p = config.project
    if p.files and not p.trusted and config.config_override is None:
        return str(p.config_path)
    return None


def config_warnings(config: ResolvedConfig, name: str) -> tuple[str, ...]:
    """The config file's warnings about one server's entry (an unknown key, an ignored one)."""
    return tuple(w.message for w in config.warnings if w.server == name and not w.skipped)


def retry_wait(sup: Supervisor | None) -> RetryWait | None:
    """The retry a server is waiting for, if it is waiting for one."""
    if sup is None or sup.snap.retry_at is None or str(sup.state) != "starting":
        return None
    left = max(0, math.ceil(sup.snap.retry_at - time.time()))
    return RetryWait(sup.snap.retries, sup.max_retries, left)


# No command named: the same words fit every front (start connects it anyway).
DISABLED_HINT = 'disabled in its entry ("enabled": false); starting it connects it anyway'


def shown_state(cfg: ServerConfig, sup: Supervisor | None) -> str:
    """``retrying`` while a retry is due; ``disabled`` for an entry switched off that is not running
    (started anyway, it has its live state)."""
    if retry_wait(sup) is not None:
        return "retrying"
    state = str(sup.state) if sup is not None else "stopped"
    return "disabled" if state == "stopped" and not cfg.enabled else state


def shown_lifecycle(cfg: ServerConfig) -> str:
    return cfg.lifecycle if cfg.enabled else "lazy (disabled)"


def _off_hint(state: str) -> str | None:
    return DISABLED_HINT if state == "disabled" else None


def status_row(
    cfg: ServerConfig, config: ResolvedConfig, sup: Supervisor | None, *, front: str = "cli"
) -> StatusRow:
    from orbmcp.core.session.hints import hint_for

    retry = retry_wait(sup)
    state = shown_state(cfg, sup)
    discovered, active = sup.runtime.tools.counts(cfg.name) if sup is not None else (0, 0)
    fallback = sse_fallback(cfg, sup)
    live = _without_fallback_note(sup.snap.warnings, cfg, sup) if sup is not None and fallback else ()
    return StatusRow(
        name=cfg.name,
        lifecycle=shown_lifecycle(cfg),
        state=state,
        tools=ToolCounts(discovered, active),
        auth=auth_line(cfg, config),
        source=cfg.source,
        error=_spelled(sup.snap.last_error, front) if sup is not None else None,
        hint=(_spelled(hint_for(sup, detail=False), front) if sup is not None else None) or _off_hint(state),
        warnings=config_warnings(config, cfg.name)
        + (live if fallback else tuple(sup.snap.warnings) if sup is not None else ()),
        retry=retry,
        transport=(sup.snap.transport if sup is not None else None) or cfg.transport,
        sse_fallback=fallback,
    )


def sse_fallback(cfg: ServerConfig, sup: Supervisor | None) -> bool:
    """Whether the server's URL refused its transport and it was reached over that kind's fallback."""
    if sup is None or sup.snap.transport is None:
        return False
    return kind_of(cfg.transport).fallback == sup.snap.transport


def _without_fallback_note(warnings: Iterable[str], cfg: ServerConfig, sup: Supervisor) -> tuple[str, ...]:
    """A row's live warnings less the fallback's own (the row's ``sse_fallback`` says it)."""
    from orbmcp.core.wire.connect import fallback_note  # a live supervisor: the SDK is loaded

    note = fallback_note(cfg.transport, sup.snap.transport or cfg.transport)
    return tuple(w for w in warnings if w != note)


def unavailable_row(entry: UnavailableEntry, *, front: str = "cli") -> StatusRow:
    return StatusRow(
        name=entry.name,
        lifecycle=None,
        state=entry.kind,
        tools=ToolCounts(0, 0),
        auth="-",
        source=entry.source,
        error=entry.message,
        hint=_spelled(entry.fix, front),
        file=entry.file,
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
    ) + tuple(unavailable_row(entry, front=front) for entry in config.unavailable.values())
    notices: list[str] = []
    nl = project_notice(config)
    if nl:
        trust = spell_for(cmd("trust"), front)
        notices.append(f"Project config: not loaded ({nl}) — run `{trust}` to review and approve it")
    if not config.settings.extension_enabled:
        notices.append("MCP is turned off (goExtensions.mcp: false)")
    # A server's own warnings are on its row; the rest (a file without servers, a bad setting) here.
    shown = {r.name for r in rows}
    notices.extend(str(w) for w in config.warnings if w.server not in shown)
    first = None
    if not rows:
        first = str(config.config_override or config.global_dir / "mcp.json")
    writable = first is not None and config.config_override is None
    return StatusReport(
        rows=rows,
        notices=tuple(notices),
        stopped_after=stopped_after,
        daemon_pid=daemon_pid,
        config_file=first,
        paths_command=spell_for(cmd("config", "paths"), front) if first else None,
        add_command=spell_for(cmd("add"), front) if writable else None,
        import_command=spell_for(cmd("config", "import"), front) if writable else None,
    )


def _spelled(text: str | None, front: str) -> str | None:
    return None if text is None else spell_for(text, front)


def launch_of(cfg: ServerConfig) -> Launch:
    """The command and args (secrets masked) or the URL (redacted) a server is reached by."""
    if not cfg.is_stdio:
        return Launch(url=shown_url(cfg), header_names=tuple(cfg.headers))
    return Launch(command=tuple(shown_argv(cfg)), cwd=cfg.cwd, env_names=tuple(cfg.env))


# -- an entry's values as displays show them (config show, status NAME) ---------------------------


def shown_value(cfg: ServerConfig, where: str, key: str, value: str) -> str:
    """An env or header value: its ``${VAR}`` reference as written, a plain path, else masked.
    ``where`` is ``env`` or ``headers``."""
    from orbmcp.redact import mask_value
    from orbmcp.redact.shown import is_plain_path, references_only

    written = cfg.written.get(f"{where}.{key}")
    if written is not None:
        return written if references_only(written) else mask_value(value)
    return value if is_plain_path(value, key) else mask_value(value)


def _secrets(cfg: ServerConfig) -> list[str]:
    """The entry's env and header values that are masked where shown: masked in its other fields."""
    shown = [("env", k, v) for k, v in cfg.env.items()] + [("headers", k, v) for k, v in cfg.headers.items()]
    return [v for where, k, v in shown if len(v) >= 4 and shown_value(cfg, where, k, v) != v]


def shown_argv(cfg: ServerConfig) -> list[str]:
    """Command and args, secrets masked; a word a reference expanded is shown as written."""
    from orbmcp.redact import MASK, redact, redact_argv
    from orbmcp.redact.shown import references_only

    secrets = _secrets(cfg)
    argv = redact_argv((cfg.command or "", *cfg.args), extra_secrets=secrets)
    for index, field in enumerate(("command", *(f"args[{i}]" for i in range(len(cfg.args))))):
        written = cfg.written.get(field)
        if written is not None:
            argv[index] = redact(written, extra_secrets=secrets) if references_only(written) else MASK
    return argv


def shown_url(cfg: ServerConfig) -> str:
    from orbmcp.redact import redact
    from orbmcp.redact.shown import references_only

    written = cfg.written.get("url")
    return redact(written if written is not None and references_only(written) else cfg.url or "")


def server_detail(
    cfg: ServerConfig,
    config: ResolvedConfig,
    sup: Supervisor | None,
    *,
    front: str = "cli",
    message: str | None = None,
) -> ServerDetail:
    from orbmcp.core.session.hints import hint_for

    tools = sup.runtime.tools.for_server(cfg.name) if sup is not None else []
    discovered, active = sup.runtime.tools.counts(cfg.name) if sup is not None else (0, 0)
    recent = tuple(sup.stderr_tail()) if sup is not None else ()
    warnings = tuple(sup.snap.warnings) if sup is not None else ()
    retry = retry_wait(sup)
    hint = _spelled(hint_for(sup), front) if sup is not None else None
    if hint is None and not cfg.enabled:
        hint = DISABLED_HINT
    return ServerDetail(
        name=cfg.name,
        state=shown_state(cfg, sup),
        retries=sup.snap.retries if sup is not None else 0,
        max_retries=max(0, min(cfg.max_retries, 10)),
        transport=(sup.snap.transport if sup is not None else None) or cfg.transport,
        lifecycle=shown_lifecycle(cfg),
        source=cfg.source,
        file=cfg.file,
        tools=ToolCounts(discovered, active),
        oauth=None if cfg.auth is None else auth_line(cfg, config),
        last_error=_spelled(sup.snap.last_error, front) if sup is not None else None,
        hint=hint,
        recent_output=recent + tuple(f"[orbmcp] {w}" for w in warnings),
        project_not_loaded=project_notice(config),
        protocol_version=sup.snap.protocol_version if sup is not None else None,
        server_info=sup.snap.server_info if sup is not None else None,
        tool_names=tuple(t.name for t in tools),
        message=message,
        error_code=sup.snap.last_error_code if sup is not None else None,
        error_reason=sup.snap.last_error_reason if sup is not None else None,
        launch=launch_of(cfg),
        retry=retry,
        warnings=config_warnings(config, cfg.name),
        instructions=sup.snap.instructions if sup is not None else None,
        advertised=sup.snap.advertised if sup is not None else None,
        offered=sup.snap.capabilities if sup is not None else None,
        roots=roots_given(cfg, config, sup),
        sse_fallback=sse_fallback(cfg, sup),
    )


def roots_given(cfg: ServerConfig, config: ResolvedConfig, sup: Supervisor | None) -> tuple[str, ...] | None:
    """The roots ``cfg``'s server is given (URIs): the session's answer where it runs, else what the
    configuration says; None: no roots (the capability is not offered)."""
    if sup is not None:
        if not sup.runtime.features.roots:
            return None
        roots = sup.runtime.roots_for(cfg)
        return None if roots is None else tuple(r.uri for r in roots)
    paths = cfg.roots if cfg.roots is not None else config.settings.roots
    if paths is None:
        return None
    from orbmcp.core.capabilities.roots import roots_of

    return tuple(r.uri for r in roots_of(paths))


def unavailable_detail(
    entry: UnavailableEntry, config: ResolvedConfig, *, front: str = "cli"
) -> ServerDetail:
    """``status NAME`` of an entry that did not load: what it is, and why."""
    return ServerDetail(
        name=entry.name,
        state=entry.kind,
        retries=0,
        max_retries=0,
        transport="-",
        lifecycle="-",
        source=entry.source,
        file=entry.file,
        tools=ToolCounts(0, 0),
        oauth=None,
        last_error=entry.message,
        hint=_spelled(entry.fix, front),
        recent_output=(),
        project_not_loaded=project_notice(config),
        error_code="config",
        error_reason=entry.reason,
        warnings=config_warnings(config, entry.name),
    )
