"""config show / paths / validate, trust, untrust. Fast: no SDK, no HTTP, no pydantic."""

from __future__ import annotations

import shlex
from typing import Any

from orbmcp.commands.context import CommandContext
from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.results import Document, Message
from orbmcp.config.model import ResolvedConfig, ServerConfig
from orbmcp.errors import UsageError


def _mask(values: dict[str, str] | Any) -> dict[str, str]:
    from orbmcp.redact import mask_value

    return {k: mask_value(v) for k, v in dict(values).items()}


def server_json(s: ServerConfig) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": s.name,
        "transport": s.transport,
        "lifecycle": s.lifecycle,
        "enabled": s.enabled,
        "source": s.source,
        "file": s.file,
    }
    if s.is_stdio:
        out |= {"command": s.command, "args": list(s.args), "cwd": s.cwd, "env": _mask(s.env)}
    else:
        from orbmcp.redact import redact  # masks URL userinfo and credential query parameters

        out |= {"url": redact(s.url or ""), "headers": _mask(s.headers)}
    out |= {
        "timeoutMs": s.timeout_ms,
        "requestTimeoutMs": s.request_timeout_ms,
        "maxRetries": s.max_retries,
        "auth": None
        if s.auth is None
        else {"type": s.auth.type, "clientId": s.auth.client_id, "scope": s.auth.scope},
        "healthCheckIntervalMs": s.health_check_interval_ms,
    }
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


def warnings_json(config: ResolvedConfig) -> list[dict[str, Any]]:
    return [{"message": w.message, "file": w.file, "server": w.server} for w in config.warnings]


def _show_text(config: ResolvedConfig, data: dict[str, Any]) -> str:
    lines: list[str] = []
    if not data["servers"]:
        lines.append("No MCP servers configured.")
    for s in data["servers"]:
        state = "enabled" if s["enabled"] else "disabled"
        lines.append(
            f"{s['name']}  ({s['transport']}, {s['lifecycle']}, {state}; {s['source']}: {s['file']})"
        )
        if s["transport"] == "stdio":
            lines.append(f"  command: {shlex.join([s['command'], *s['args']])}")
            if s["cwd"]:
                lines.append(f"  cwd: {s['cwd']}")
            for k, v in s["env"].items():
                lines.append(f"  env {k}={v}")
        else:
            lines.append(f"  url: {s['url']}")
            for k, v in s["headers"].items():
                lines.append(f"  header {k}: {v}")
        lines.append(
            f"  timeoutMs={s['timeoutMs']} requestTimeoutMs={s['requestTimeoutMs']} "
            f"maxRetries={s['maxRetries']}" + ("  auth=oauth" if s["auth"] else "")
        )
    p = data["project"]
    if p["exists"] and not p["loaded"]:
        lines.append(f"Project config: not loaded ({p['path']}) — `orbmcp trust` to review it")
    for w in config.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def show(ctx: CommandContext) -> Document:
    config = ctx.config()
    data = {
        "servers": [server_json(s) for s in config.servers.values()],
        "warnings": warnings_json(config),
        "project": project_json(config),
        "settings": {
            "toolPrefix": config.settings.tool_prefix,
            "requestTimeoutMs": config.settings.request_timeout_ms,
            "maxRetries": config.settings.max_retries,
            "enabled": config.settings.extension_enabled,
        },
    }
    return Document(data, _show_text(config, data))


def paths(ctx: CommandContext) -> Document:
    from orbmcp.config.paths import global_files, project_files, trust_store_path

    config = ctx.config()
    g = config.global_dir
    data = {
        "globalDir": str(g),
        "globalFiles": [str(p) for p in global_files(g)],
        "projectFiles": [str(p) for p in project_files(config.project.dir)],
        "configOverride": str(config.config_override) if config.config_override else None,
        "trustStore": str(trust_store_path(g)),
        "authDir": str(g / "mcp-auth"),
        "debugLog": str(g / "logs" / "orbmcp.log"),
        "cacheDir": str(g / "cache"),
    }
    width = max(len(k) for k in data)
    text = "\n".join(
        f"{k:<{width}}  {v if not isinstance(v, list) else ', '.join(v)}" for k, v in data.items()
    )
    return Document(data, text)


class ValidateResult(Document):
    @property
    def exit_code(self) -> int:
        return 0 if self.data["ok"] else int(ExitCode.CONFIG)


def validate(ctx: CommandContext) -> ValidateResult:
    config = ctx.config()
    ok = not config.warnings
    data = {
        "ok": ok,
        "servers": len(config.servers),
        "warnings": warnings_json(config),
        "project": project_json(config),
    }
    lines = [f"warning: {w}" for w in config.warnings]
    lines.append(
        f"{'ok' if ok else 'invalid'}: {len(config.servers)} server(s) valid, "
        f"{len(config.warnings)} problem(s)"
    )
    return ValidateResult(data, "\n".join(lines))


# Settings field names as the user wrote them in the file.
_SETTING_KEYS = {
    "tool_prefix": "toolPrefix",
    "request_timeout_ms": "requestTimeoutMs",
    "max_retries": "maxRetries",
    "extension_enabled": "goExtensions.mcp",
}


def _review_text(review: Any, pending: tuple[str, ...]) -> str:
    lines = [f"Project: {review.real_dir}", "These servers would run or be contacted:"]
    for s in review.servers:
        mark = " (new or changed)" if s.name in pending else ""
        lines.append(f"- {s.name}{mark}  [{s.kind}; {s.file}]")
        if s.kind == "override":
            lines.append(f"    overrides: {dict(s.overrides)}")
            continue
        if s.transport:
            lines.append(f"    transport: {s.transport}")
        if s.command is not None:
            lines.append(f"    command: {shlex.join([s.command, *s.args])}")
            lines.append(f"    argv: {[s.command, *s.args]}")
        if s.cwd:
            lines.append(f"    cwd: {s.cwd}")
        if s.env_names:
            lines.append(f"    env names: {', '.join(s.env_names)}")
        if s.url:
            lines.append(f"    url: {s.url}")
        if s.header_names:
            lines.append(f"    header names: {', '.join(s.header_names)}")
        if s.variables:
            lines.append(f"    reads environment variables: {', '.join(s.variables)}")
        for problem in s.problems:
            lines.append(f"    invalid: {problem}")
    if review.settings:
        stated = ", ".join(f"{_SETTING_KEYS.get(k, k)}={v!r}" for k, v in review.settings.items())
        lines.append(f"Project settings: {stated}")
    lines.append("Approving lets orbmcp run these commands and contact these URLs.")
    return "\n".join(lines)


def _review_json(review: Any, pending: tuple[str, ...]) -> dict[str, Any]:
    return {
        "project": review.real_dir,
        "files": [str(f) for f in review.files],
        "digest": review.digest,
        "servers": [
            {
                "name": s.name,
                "kind": s.kind,
                "file": s.file,
                "transport": s.transport,
                "command": s.command,
                "args": list(s.args),
                "cwd": s.cwd,
                "envNames": list(s.env_names),
                "url": s.url,
                "headerNames": list(s.header_names),
                "variables": list(s.variables),
                "overrides": dict(s.overrides),
                "problems": list(s.problems),
                "pending": s.name in pending,
            }
            for s in review.servers
        ],
    }


def trust(ctx: CommandContext, yes: bool = False) -> Message:
    from orbmcp.config import trust as trust_mod
    from orbmcp.config.paths import global_dir, project_dir

    pdir = project_dir(ctx.project)
    review = trust_mod.describe_project(pdir)
    if not review.files:
        raise UsageError(
            f"no project config in {pdir / '.orb'} (settings.json or mcp.json)",
            hint="run in the project directory or pass --project DIR",
        )
    gdir = global_dir()
    check = trust_mod.check_trust(gdir, review)
    text = _review_text(review, check.pending)
    if check.state == "trusted" and not check.pending:
        return Message(f"{text}\nAlready trusted.", {"trusted": True, "review": _review_json(review, ())})
    if not yes:
        if not ctx.ui.interactive:
            raise UsageError(
                "approval needs a person: run `orbmcp trust` in a terminal, or pass --yes "
                "after reviewing `orbmcp trust --json` output"
            )
        ctx.ui.notify(text)
        if not ctx.ui.confirm("Trust this project?", default=False):
            return Message(
                "Not trusted; the project config stays invisible.",
                {"trusted": False, "review": _review_json(review, check.pending)},
                ok=False,
            )
    trust_mod.approve(gdir, pdir, review.digest)
    return Message(
        f"{text}\nTrusted: {review.real_dir}",
        {"trusted": True, "review": _review_json(review, check.pending)},
    )


def untrust(ctx: CommandContext) -> Message:
    from orbmcp.config import trust as trust_mod
    from orbmcp.config.paths import global_dir, project_dir

    pdir = project_dir(ctx.project)
    removed = trust_mod.revoke(global_dir(), pdir)
    real = trust_mod.real_project_dir(pdir)
    if removed:
        return Message(f"Revoked trust for {real}", {"trusted": False, "revoked": True})
    return Message(f"{real} was not trusted", {"trusted": False, "revoked": False})
