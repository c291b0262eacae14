"""Results of ``orbmcp daemon start|stop|restart|status``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.results.base import Result


@dataclass(frozen=True)
class DaemonStatus(Result):
    """What a daemon says about itself (``info``, its status answer), or that none runs.

    ``action`` names what the command did: ``status``, ``started``, ``already-running``,
    ``stopped``, ``not-running``, ``restarted``, ``stopped-foreground`` (a foreground daemon ended).
    """

    action: str
    socket: str
    info: Mapping[str, Any] | None = None
    reason: str | None = None  # why a foreground daemon stopped
    notes: tuple[str, ...] = field(default=())

    @property
    def running(self) -> bool:
        return self.info is not None

    @property
    def exit_code(self) -> int:
        # `daemon status` answers "is it running?" for scripts: 1 when not.
        if self.action == "status" and not self.running:
            return int(ExitCode.TOOL_ERROR)
        return int(ExitCode.OK)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"action": self.action, "running": self.running, "socket": self.socket}
        if self.info is not None:
            body.update(
                {
                    k: self.info.get(k)
                    for k in (
                        "pid",
                        "version",
                        "uptimeS",
                        "idleTimeoutS",
                        "ownerPid",
                        "scope",
                        "servers",
                        "projects",
                        "clientsServed",
                        "agentRequests",
                        "activeClients",
                        "refusedClients",
                        "acceptFailures",
                        "outputBacklogBytes",
                        "residentMemoryBytes",
                    )
                }
            )
        if self.reason is not None:
            body["reason"] = self.reason
        return body
