"""config show / paths / validate, trust, untrust. Fast: no SDK, no HTTP (the config's own
pydantic models are the only heavy import)."""

from __future__ import annotations

from typing import Any

from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.config import (
    ConfigView,
    PathsView,
    TrustReview,
    TrustRevoked,
    ValidationReport,
)
from orbmcp.commands.views import shown_argv, shown_url, shown_value
from orbmcp.config import trust as trust_mod
from orbmcp.config.clients import client_files
from orbmcp.config.imports import active_clients
from orbmcp.config.model import ResolvedConfig, ServerConfig
from orbmcp.config.paths import global_dir, global_files, project_dir, project_files, trust_store_path
from orbmcp.errors import UsageError, cmd
from orbmcp.redact import redact


def server_json(s: ServerConfig) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": s.name,
        "transport": s.transport,
        "lifecycle": s.lifecycle,
        "enabled": s.enabled,
        "source": s.source,
        "file": s.file,
        "overrideFile": s.override_file,
    }
    if s.is_stdio:
        command, *args = shown_argv(s)
        env = {k: shown_value(s, "env", k, v) for k, v in s.env.items()}
        out |= {"command": command, "args": args, "cwd": s.cwd, "env": env}
    else:
        headers = {k: shown_value(s, "headers", k, v) for k, v in s.headers.items()}
        out |= {"url": shown_url(s), "headers": headers}
    out |= {
        "timeoutMs": s.timeout_ms,
        "requestTimeoutMs": s.request_timeout_ms,
        "maxRetries": s.max_retries,
        "auth": None
        if s.auth is None
        else {"type": s.auth.type, "clientId": s.auth.client_id, "scope": s.auth.scope},
        "healthCheckIntervalMs": s.health_check_interval_ms,
    }
    if s.roots is not None:
        out["roots"] = list(s.roots)
    return out


def project_json(config: ResolvedConfig) -> dict[str, Any]:
    p = config.project
    return {
        "path": str(p.config_path),
        "dir": str(p.dir),
        "files": [str(f) for f in p.files],
        "exists": bool(p.files),
        "trusted": p.trusted,
        "loaded": p.loaded,
        "trustState": getattr(p, "trust_state", "trusted" if p.trusted else "untrusted"),
        "pending": list(getattr(p, "pending", ())),
    }


def show(ctx: CommandContext) -> ConfigView:
    config = ctx.config()
    settings: dict[str, Any] = {
        "toolPrefix": config.settings.tool_prefix,
        "requestTimeoutMs": config.settings.request_timeout_ms,
        "maxRetries": config.settings.max_retries,
        "enabled": config.settings.extension_enabled,
        "tokenStore": config.settings.credential_store,
    }
    if config.settings.roots is not None:
        settings["roots"] = list(config.settings.roots)
    if config.settings.sampling is not None:
        sampling = config.settings.sampling
        settings["sampling"] = {
            "command": [redact(a) for a in sampling.command],
            "timeoutMs": sampling.timeout_ms,
        }
    return ConfigView(
        servers=tuple(server_json(s) for s in config.servers.values()),
        warnings=tuple(config.warnings),
        project=project_json(config),
        settings=settings,
    )


def paths(ctx: CommandContext) -> PathsView:
    config = ctx.config()
    g = config.global_dir
    clients = () if config.config_override is not None else active_clients(config.settings)
    files = {(f.client, f.path): f for client in clients for f in client_files(client, config.project.dir)}
    imports = tuple(
        {"client": f.client, "path": str(f.path), "scope": f.scope, "exists": f.path.is_file()}
        for f in files.values()
    )
    return PathsView(
        global_dir=str(g),
        global_files=tuple(str(p) for p in global_files(g)),
        project_files=tuple(str(p) for p in project_files(config.project.dir)),
        config_override=str(config.config_override) if config.config_override else None,
        trust_store=str(trust_store_path(g)),
        auth_dir=str(g / "mcp-auth"),
        debug_log=str(g / "logs" / "orbmcp.log"),
        cache_dir=str(g / "cache"),
        imports=imports,
    )


def validate(ctx: CommandContext) -> ValidationReport:
    config = ctx.config()
    return ValidationReport(
        servers=len(config.servers), warnings=tuple(config.warnings), project=project_json(config)
    )


def trust(ctx: CommandContext, yes: bool = False) -> TrustReview:
    pdir = project_dir(ctx.project)
    review = trust_mod.describe_project(pdir)
    if not review.files:
        raise UsageError(
            f"no project config in {pdir / '.orb'} (settings.json or mcp.json), nor another "
            "client's project file that orbmcp imports (.mcp.json, .cursor/mcp.json, ...)",
            hint="run in the project directory or pass --project DIR",
        )
    gdir = global_dir()
    check = trust_mod.check_trust(gdir, review)
    if check.state == "trusted" and not check.pending:
        return TrustReview(review, check.pending, "already-trusted")
    if not yes:
        if not ctx.ui.interactive:
            if ctx.json:
                return TrustReview(review, check.pending)  # the review itself, nothing approved
            raise UsageError(
                f"approval needs a person: run `{cmd('trust')}` in a terminal, or pass --yes "
                f"after reviewing `{cmd('trust', '--json')}` output",
                reason="needs_a_person",
            )
        # The person approves what they were shown: the review, as this front shows results.
        ctx.ui.show(ctx.present(TrustReview(review, check.pending)))
        if not ctx.ui.confirm("Trust this project?", default=False):
            return TrustReview(review, check.pending, "declined")
    trust_mod.approve(gdir, pdir, review.digest)
    return TrustReview(review, check.pending, "trusted")


def untrust(ctx: CommandContext) -> TrustRevoked:
    pdir = project_dir(ctx.project)
    removed = trust_mod.revoke(global_dir(), pdir)
    return TrustRevoked(trust_mod.real_project_dir(pdir), removed)
