"""Plain text of ``status`` (overview and detail), ``start``/``stop``/``reconnect`` and ``check``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orbmcp.commands.results.status import (
    CheckReport,
    ServerAction,
    ServerDetail,
    StatusReport,
    StatusRow,
)
from orbmcp.text import one_line, safe_text

# Sub-capabilities worth naming beside their capability, as the wire spells them.
_FLAGS = ("listChanged", "subscribe", "form", "url")


def capability_names(caps: Mapping[str, Any] | None) -> str:
    """``tools (listChanged), resources (subscribe), ...``: names and their flags, escaped."""
    if caps is None:
        return "(not connected)"
    names = []
    for name, value in caps.items():
        flags = [f for f in _FLAGS if isinstance(value, Mapping) and value.get(f) not in (None, False)]
        names.append(one_line(str(name), max_len=60) + (f" ({', '.join(flags)})" if flags else ""))
    return ", ".join(names) or "none"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def status_line(r: StatusRow) -> str:
    line = (
        f"{one_line(r.name)}  {r.state}  {r.lifecycle}  tools {r.tools.active}/{r.tools.discovered} active  "
        f"auth: {one_line(r.auth)}  source: {r.source}"
    )
    if r.error and r.state in ("failed", "needs-auth"):
        line += f"\n    last error: {one_line(r.error, max_len=300)}"
    elif r.warning:
        line += f"\n    {warning_summary(r)}"
    return line


def warning_summary(r: StatusRow) -> str:
    more = f" (+{r.warnings - 1} more in its detail view)" if r.warnings > 1 else ""
    return f"warning: {one_line(r.warning or '', max_len=300)}{more}"


def status_report(result: StatusReport) -> str:
    lines = [f"MCP servers ({len(result.rows)}):" if result.rows else "No MCP servers configured."]
    lines += ["  " + status_line(r) for r in result.rows]
    lines += [one_line(n) for n in result.notices]
    if result.daemon_pid is not None:
        lines.append(f"(daemon: pid {result.daemon_pid})")
    elif result.stopped_after and any(r.state == "ready" for r in result.rows):
        lines.append("(one-shot: servers started for this report were stopped again)")
    return "\n".join(lines)


def server_detail(d: ServerDetail) -> str:
    lines = [
        f"Server: {one_line(d.name)}",
        f"State:  {d.state}",
        f"Retries: {d.retries}/{d.max_retries}",
        f"Transport: {d.transport}",
        f"Lifecycle: {d.lifecycle}",
        f"Source: {d.source}" + (f" ({one_line(d.file)})" if d.file else ""),
        f"Tools: {d.tools.active}/{d.tools.discovered} active",
    ]
    if d.protocol_version:
        info = f" ({one_line(d.server_info, max_len=120)})" if d.server_info else ""
        lines.append(f"Protocol: {one_line(d.protocol_version)}{info}")
    if d.offered is not None or d.advertised is not None:
        lines.append(f"Server offers: {capability_names(d.offered)}")
        lines.append(f"orbmcp offers: {capability_names(d.advertised)}")
    if d.oauth is not None:
        lines.append(f"OAuth: {one_line(d.oauth)}")
    if d.last_error:
        lines.append(f"Last error: {one_line(d.last_error, max_len=500)}")
    if d.hint:
        lines.append(f"Hint: {one_line(d.hint)}")
    if d.project_not_loaded:
        lines.append(f"Project config: not loaded ({one_line(d.project_not_loaded)})")
    if d.instructions:
        lines += [
            "",
            "Instructions:",
            _indent(safe_text(d.instructions.strip(), max_len=4000, multiline=True)),
        ]
    lines.append("")
    lines.append("Recent output:")
    if d.recent_output:
        lines += ["  " + one_line(x, max_len=500) for x in d.recent_output]
    else:
        lines.append(f"(no stderr output from {one_line(d.name)})")
    if d.message:
        lines += ["", one_line(d.message)]
    return "\n".join(lines)


def server_action(a: ServerAction) -> str:
    if a.action == "start" and len(a.details) == 1:
        return server_detail(a.details[0])
    lines = [("  " + status_line(d.row())) for d in a.details]
    if a.message:
        lines.append(one_line(a.message))
    return "\n".join(lines)


def check_report(report: CheckReport) -> str:
    # `check` is for CI: its text is its JSON, where json.dumps escapes every control character.
    import json

    return json.dumps(report.to_json(), indent=2)
