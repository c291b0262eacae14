"""Plain text of ``orbmcp daemon ...``."""

from __future__ import annotations

from orbmcp.commands.results.daemon import DaemonStatus
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import one_line

_HEADLINES = {
    "started": "Session daemon started",
    "already-running": "Session daemon already running",
    "restarted": "Session daemon restarted",
    "status": "Session daemon running",
}


def _duration(seconds: object) -> str:
    if not isinstance(seconds, int | float):
        return "?"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _memory(value: object) -> str:
    return f"{value / (1024 * 1024):.1f} MiB" if isinstance(value, int | float) else "?"


@renders
def daemon_status(result: DaemonStatus) -> str:
    info = result.info
    if result.action == "stopped":
        return f"Session daemon stopped (socket {one_line(result.socket)})."
    if result.action == "stopped-foreground":
        return f"Session daemon stopped: {one_line(result.reason or 'stopped')}."
    if info is None:
        return f"No session daemon is running for this scope (socket {one_line(result.socket)})."
    idle = info.get("idleTimeoutS")
    headline = _HEADLINES.get(result.action, "Session daemon")
    lines = [
        f"{headline}: pid {info.get('pid')}, up {_duration(info.get('uptimeS'))}",
        f"  socket: {one_line(result.socket)}",
        f"  idle timeout: {'never' if not idle else _duration(idle)}",
        f"  clients served: {info.get('clientsServed')}  memory: {_memory(info.get('residentMemoryBytes'))}",
    ]
    servers = info.get("servers")
    if isinstance(servers, list) and servers:
        lines.append("  servers:")
        for row in servers:
            if isinstance(row, dict):
                lines.append(
                    f"    {one_line(str(row.get('name', '?')))}  {one_line(str(row.get('state', '?')))}"
                )
    else:
        lines.append("  servers: none configured")
    projects = info.get("projects")
    for project in projects if isinstance(projects, list) else ():
        if isinstance(project, dict):
            rows = project.get("servers")
            names = (
                [f"{r.get('name', '?')} {r.get('state', '?')}" for r in rows if isinstance(r, dict)]
                if isinstance(rows, list)
                else []
            )
            where = one_line(str(project.get("dir", "?")))
            lines.append(f"  project {where}: {one_line(', '.join(names)) or 'no servers'}")
    owner = info.get("ownerPid")
    if isinstance(owner, int):
        lines.append(f"  ends with its owner: pid {owner}")
    lines += [one_line(n) for n in result.notes]
    return "\n".join(lines)
