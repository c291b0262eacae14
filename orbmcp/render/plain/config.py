"""Plain text of ``config show``, ``config paths``, ``config validate`` and ``trust``.

Every value from a config file (names, commands, paths, URLs, masked env values) is escaped on
its own, so a newline or escape sequence in a config file cannot forge a line of the review.
"""

from __future__ import annotations

import shlex

from orbmcp.commands.results.config import ConfigView, PathsView, TrustReview, ValidationReport
from orbmcp.config.transports import is_local
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import safe_text

# Settings field names as the user wrote them in the file.
_SETTING_KEYS = {
    "tool_prefix": "toolPrefix",
    "request_timeout_ms": "requestTimeoutMs",
    "max_retries": "maxRetries",
    "extension_enabled": "goExtensions.mcp",
}


def _e(value: object) -> str:
    return safe_text(str(value))


@renders
def config_view(view: ConfigView) -> str:
    lines: list[str] = []
    if not view.servers:
        lines.append("No MCP servers configured.")
    for s in view.servers:
        state = "enabled" if s["enabled"] else "disabled"
        where = f"{_e(s['source'])} ({_e(s['file'])})" if s["file"] else _e(s["source"])
        lines.append(f"{_e(s['name'])}  ({_e(s['transport'])}, {_e(s['lifecycle'])}, {state}; {where})")
        if s.get("overrideFile"):
            lines.append(f"  switched by: {_e(s['overrideFile'])}")
        if is_local(s["transport"]):
            lines.append(f"  command: {_e(shlex.join([s['command'], *s['args']]))}")
            if s["cwd"]:
                lines.append(f"  cwd: {_e(s['cwd'])}")
            for k, v in s["env"].items():
                lines.append(f"  env {_e(k)}={_e(v)}")
        else:
            lines.append(f"  url: {_e(s['url'])}")
            for k, v in s["headers"].items():
                lines.append(f"  header {_e(k)}: {_e(v)}")
        lines.append(
            f"  timeoutMs={s['timeoutMs']} requestTimeoutMs={s['requestTimeoutMs']} "
            f"maxRetries={s['maxRetries']}" + ("  auth=oauth" if s["auth"] else "")
        )
        if "roots" in s:
            lines.append(f"  roots: {_e(', '.join(s['roots']))}")
    settings = view.settings
    if "roots" in settings:
        lines.append(f"roots: {_e(', '.join(settings['roots']))}")
    if "sampling" in settings:
        lines.append(f"sampling command: {_e(shlex.join(settings['sampling']['command']))}")
    p = view.project
    if p["exists"] and not p["loaded"]:
        lines.append(f"Project config: not loaded ({_e(p['path'])}) — `orbmcp trust` to review it")
    lines += [f"warning: {_e(w)}" for w in view.warnings]
    return "\n".join(lines)


@renders
def paths_view(view: PathsView) -> str:
    data = view.to_json()  # the JSON keys are the labels
    imports = data.pop("imports")
    width = max(len(k) for k in data)
    lines = [f"{k:<{width}}  {_path_value(v)}" for k, v in data.items()]
    if imports:
        lines.append("imports (other clients' files; * = exists):")
        lines += [
            f"  {'*' if i['exists'] else ' '} {_e(i['client']):<14} {_e(i['scope']):<7} {_e(i['path'])}"
            for i in imports
        ]
    return "\n".join(lines)


def _path_value(value: object) -> str:
    if value is None:
        return "(none)"  # configOverride without --config: JSON says null, a person reads this
    return _e(", ".join(str(v) for v in value) if isinstance(value, list) else value)


@renders
def validation_report(report: ValidationReport) -> str:
    lines = [f"warning: {_e(w)}" for w in report.warnings]
    lines.append(
        f"{'ok' if report.ok else 'invalid'}: {report.servers} server(s) valid, "
        f"{len(report.warnings)} problem(s)"
    )
    return "\n".join(lines)


@renders
def trust_review(result: TrustReview) -> str:
    outcome = safe_text(result.message, multiline=True)
    if result.decision == "declined":
        return outcome
    review = review_text(result)
    return review if result.decision is None else f"{review}\n{outcome}"


def review_text(result: TrustReview) -> str:
    """What a person must see before approving: every command, URL and variable."""
    review = result.review
    lines = [f"Project: {_e(review.real_dir)}", "These servers would run or be contacted:"]
    for s in review.servers:
        mark = " (new or changed)" if s.key in result.pending else ""
        origin = f"import:{s.client}; " if s.client else ""
        lines.append(f"- {_e(s.name)}{mark}  [{s.kind}; {origin}{_e(s.file)}]")
        if s.kind == "override":
            lines.append(f"    overrides: {_e(dict(s.overrides))}")
            continue
        if s.transport:
            lines.append(f"    transport: {_e(s.transport)}")
        if s.command is not None:
            lines.append(f"    command: {_e(shlex.join([s.command, *s.args]))}")
            lines.append(f"    argv: {_e([s.command, *s.args])}")
        if s.cwd:
            lines.append(f"    cwd: {_e(s.cwd)}")
        if s.env_names:
            lines.append(f"    env names: {_e(', '.join(s.env_names))}")
        if s.url:
            lines.append(f"    url: {_e(s.url)}")
        if s.header_names:
            lines.append(f"    header names: {_e(', '.join(s.header_names))}")
        if s.variables:
            lines.append(f"    reads environment variables: {_e(', '.join(s.variables))}")
        label = "invalid" if s.kind == "invalid" else "note"
        for problem in s.problems:
            lines.append(f"    {label}: {_e(problem)}")
    if review.settings:
        stated = ", ".join(f"{_SETTING_KEYS.get(k, k)}={v!r}" for k, v in review.settings.items())
        lines.append(f"Project settings: {_e(stated)}")
    lines.append("Approving lets orbmcp run these commands and contact these URLs.")
    return "\n".join(lines)
