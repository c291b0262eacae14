"""What the host API tells an agent about its session, as small frozen values of its own.

An agent reads these instead of orbmcp's internals (the Manager, the resolved configuration, a
command context), so orbmcp can change those without breaking it (README, "Stability").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from orbmcp.errors import OrbError
from orbmcp.host.spelling import agent_text

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.session.manager import Manager


@dataclass(frozen=True)
class ServerInfo:
    """One configured server as the session sees it now."""

    name: str
    state: str
    """``ready``, ``starting``, ``stopped``, ``failed`` or ``needs-auth``; ``disabled`` for an
    entry that is switched off and not running."""
    source: str
    """Where the entry comes from: ``global``, ``project``, ``config`` (the ``config_file``),
    ``extension`` (registered in code) or ``import:<client>``."""
    enabled: bool
    lifecycle: str
    """``eager`` (connects at start-up) or ``lazy`` (when first used)."""
    transport: str
    """``stdio``, ``streamable-http`` or ``sse``."""
    last_error: str | None = None
    """Why it last failed (redacted, command references spelled as slash commands)."""


@dataclass(frozen=True)
class SessionConfig:
    """The configuration in effect: its servers by name, the project and the load's warnings."""

    servers: Mapping[str, ServerInfo] = field(default_factory=dict)
    project_dir: Path | None = None
    project_loaded: bool = False
    """True when the project's own servers are in (it has some, and it is trusted)."""
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class SlashReply:
    """What an agent's UI shows for one ``/mcp`` line: the text (plain or JSON), the exit status
    the shell command would have, and the error when it failed."""

    text: str
    exit_code: int
    error: OrbError | None = None


def server_info(config: ResolvedConfig, manager: Manager | None, name: str) -> ServerInfo:
    entry = config.servers[name]
    sup = manager.supervisors.get(name) if manager is not None else None
    state = str(sup.state) if sup is not None else "stopped"
    if state == "stopped" and not entry.enabled:
        state = "disabled"
    error = sup.snap.last_error if sup is not None else None
    return ServerInfo(
        name=name,
        state=state,
        source=str(entry.source),
        enabled=entry.enabled,
        lifecycle=str(entry.lifecycle),
        transport=str(entry.transport),
        last_error=agent_text(error) if error else None,
    )


def session_config(config: ResolvedConfig, manager: Manager | None) -> SessionConfig:
    return SessionConfig(
        servers={name: server_info(config, manager, name) for name in config.servers},
        project_dir=config.project.dir,
        project_loaded=config.project.loaded,
        warnings=tuple(str(w) for w in config.warnings),
    )
