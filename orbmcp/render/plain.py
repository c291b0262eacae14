"""Plain text: what an agent's UI shows for a slash command, and the shell's non-TTY output.

Every string that a server (or a config file) supplied goes through ``escape`` first.
"""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from orbmcp.commands.results import (
    Document,
    JsonText,
    Lines,
    Message,
    ServerAction,
    ServerDetail,
    ShellExit,
    StatusReport,
    StatusRow,
)
from orbmcp.text import one_line, safe_text


@singledispatch
def render_plain(result: Any) -> str:
    text = getattr(result, "text", None)
    if callable(text):
        return str(text())
    if isinstance(text, str):
        return text
    import json

    return json.dumps(result.to_json() if hasattr(result, "to_json") else result, indent=2)


def status_line(r: StatusRow) -> str:
    line = (
        f"{one_line(r.name)}  {r.state}  {r.lifecycle}  tools {r.tools.active}/{r.tools.discovered} active  "
        f"auth: {r.auth}  source: {r.source}"
    )
    if r.error and r.state in ("failed", "needs-auth"):
        line += f"\n    last error: {one_line(r.error, max_len=300)}"
    elif r.warning:
        line += f"\n    {warning_summary(r)}"
    return line


def warning_summary(r: StatusRow) -> str:
    more = f" (+{r.warnings - 1} more in its detail view)" if r.warnings > 1 else ""
    return f"warning: {one_line(r.warning or '', max_len=300)}{more}"


@render_plain.register
def _(result: StatusReport) -> str:
    lines = [f"MCP servers ({len(result.rows)}):" if result.rows else "No MCP servers configured."]
    lines += ["  " + status_line(r) for r in result.rows]
    lines += [one_line(n) for n in result.notices]
    if result.stopped_after and any(r.state == "ready" for r in result.rows):
        lines.append("(one-shot: servers started for this report were stopped again)")
    return "\n".join(lines)


@render_plain.register
def _(d: ServerDetail) -> str:
    lines = [
        f"Server: {one_line(d.name)}",
        f"State:  {d.state}",
        f"Retries: {d.retries}/{d.max_retries}",
        f"Transport: {d.transport}",
        f"Lifecycle: {d.lifecycle}",
        f"Source: {d.source}" + (f" ({d.file})" if d.file else ""),
        f"Tools: {d.tools.active}/{d.tools.discovered} active",
    ]
    if d.protocol_version:
        info = f" ({one_line(d.server_info, max_len=120)})" if d.server_info else ""
        lines.append(f"Protocol: {d.protocol_version}{info}")
    if d.oauth is not None:
        lines.append(f"OAuth: {d.oauth}")
    if d.last_error:
        lines.append(f"Last error: {one_line(d.last_error, max_len=500)}")
    if d.hint:
        lines.append(f"Hint: {one_line(d.hint)}")
    if d.project_not_loaded:
        lines.append(f"Project config: not loaded ({d.project_not_loaded})")
    lines.append("")
    lines.append("Recent output:")
    if d.recent_output:
        lines += ["  " + one_line(x, max_len=500) for x in d.recent_output]
    else:
        lines.append(f"(no stderr output from {one_line(d.name)})")
    if d.message:
        lines += ["", one_line(d.message)]
    return "\n".join(lines)


@render_plain.register
def _(a: ServerAction) -> str:
    if a.action == "start" and len(a.details) == 1:
        return render_plain(a.details[0])
    lines = [("  " + status_line(d.row())) for d in a.details]
    if a.message:
        lines.append(one_line(a.message))
    return "\n".join(lines)


@render_plain.register
def _(m: Message) -> str:
    return safe_text(m.text, multiline=True)


@render_plain.register
def _(lines: Lines) -> str:
    return "\n".join(one_line(x) for x in lines.items)


@render_plain.register
def _(doc: Document) -> str:
    return safe_text(doc.text, multiline=True)


@render_plain.register
def _(result: ShellExit) -> str:
    return ""


@render_plain.register
def _(result: JsonText) -> str:
    import json

    return json.dumps(result.data, indent=2, ensure_ascii=False)
