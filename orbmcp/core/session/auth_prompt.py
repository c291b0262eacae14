"""Startup authorization prompts for eager OAuth servers.

Silent start-up never opens a browser: an eager OAuth server without usable credentials settles
in ``needs-auth``. In an interactive session the person is then asked, one server at a time,
"<name> needs authorization" — Authorize now / Not now. A decline is remembered for the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orbmcp.auth.flow import authorize
from orbmcp.auth.ui_bridge import ProviderUI
from orbmcp.core.session.state import State
from orbmcp.errors import OrbError

if TYPE_CHECKING:
    from orbmcp.core.session.manager import Manager

AUTHORIZE_NOW = "Authorize now"
NOT_NOW = "Not now"


@dataclass
class AuthPrompter:
    """Remembers declines for the lifetime of one session."""

    declined: set[str] = field(default_factory=set)

    def pending(self, manager: Manager) -> list[str]:
        return [
            name
            for name, sup in manager.supervisors.items()
            if sup.cfg.has_oauth
            and sup.cfg.eager
            and sup.state == State.NEEDS_AUTH
            and name not in self.declined
        ]

    async def offer(self, manager: Manager, ui: Any) -> dict[str, str]:
        """Ask about each eager OAuth server that needs authorization; returns name -> outcome."""
        outcomes: dict[str, str] = {}
        if not getattr(ui, "interactive", False):
            return outcomes
        for name in self.pending(manager):
            outcomes[name] = await self.authorize(manager, name, ui) if self.ask(name, ui) else "declined"
        return outcomes

    def ask(self, name: str, ui: Any) -> bool:
        """One prompt; a decline is remembered for the rest of the session."""
        if ui.choose(f"{name} needs authorization", [AUTHORIZE_NOW, NOT_NOW]) == AUTHORIZE_NOW:
            return True
        self.declined.add(name)
        ui.notify(f"'{name}' stays stopped; run /mcp:auth {name} when you are ready")
        return False

    async def authorize(self, manager: Manager, name: str, ui: Any) -> str:
        """Run the interactive flow for one server, then connect it; returns its new state."""
        sup = manager.get(name)
        await manager.stop(name)
        try:
            await authorize(
                sup.cfg, manager.config.global_dir, reset=False, ui=ProviderUI(ui), no_browser=False
            )
        except OrbError as err:
            ui.notify(f"authorization of '{name}' failed: {err.message}", level="error")
            return "failed"
        await manager.start(name)
        return str(manager.get(name).state)
