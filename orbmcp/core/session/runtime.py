"""What every supervisor of one session shares: tools, caches, redaction, policies, hooks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from orbmcp.core.capabilities import ClientFeatures
from orbmcp.core.capabilities.roots import roots_of
from orbmcp.core.tooling.registry import ToolRegistry
from orbmcp.errors import ConnectionFailed
from orbmcp.redact import redact

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from orbmcp.config.model import SamplingConfig, ServerConfig
    from orbmcp.core.capabilities.askers import Asker
    from orbmcp.core.capabilities.roots import Root
    from orbmcp.core.processes.detached_stop import HandedOff
    from orbmcp.core.session.state import State


class Watched(Protocol):
    """A server whose state changed, as a listener is told of it: its Supervisor
    (core.session.supervisor, which holds this runtime; a listener narrows with isinstance)."""

    @property
    def name(self) -> str: ...


StateListener = Callable[[Watched, "State", "State"], None]
# (server name, the SDK notification model): a notification the session itself does not act on
# (a resource updated, the prompt or resource list changed), for fronts that relay them.
NotificationListener = Callable[[str, Any], None]


@dataclass
class Runtime:
    global_dir: Path
    tools: ToolRegistry
    # One-shot shell commands report the first attempt instead of waiting through the retry
    # schedule (1+3+5+10+30 s); sessions that stay up (REPL, daemon, agent host) retry.
    retries_enabled: bool = True
    interactive: bool = False
    stdin_grace_s: float = 2.0
    term_grace_s: float = 2.0
    # Set while a one-shot orbmcp program exits: stops hand the running trees over here for a
    # detached stop (core.processes.detached_stop) instead of waiting through the grace periods.
    handed_off: list[HandedOff] | None = None
    extra_secrets: tuple[str, ...] = ()
    auth_ui: Any = None  # orbmcp.auth.provider.AuthUI when a person can authorize
    # An SDK elicitation callback (``mcp.client.session.ElicitationFnT``) handed to every client
    # instead of orbmcp's own (an embedder's answer, e.g. a conformance client); None: orbmcp's.
    elicitation: Any = None
    # The client capabilities advertised to servers (only what some front of the session honours).
    features: ClientFeatures = field(default_factory=ClientFeatures)
    # Who answers a server's questions when no command waits on it (the session's own front).
    asker: Asker | None = None
    sampling: SamplingConfig | None = None  # the configured sampling command (global settings)
    # The log level 2026-07-28 servers are asked for on every request (they send none without).
    log_level: str | None = None
    project_dir: Path | None = None
    # The project directory is a root: only where an embedding agent set its project explicitly
    # (``orbmcp.host``). Never the bare current directory: a server that takes the client's roots
    # as its sandbox (server-filesystem) would be widened to wherever orbmcp was started.
    project_roots: bool = False
    # ``orbmcp serve``: an agent may give roots at any time, and a connection cannot add the
    # capability later, so every server is offered it; until an agent gives roots (or some are
    # configured) the list is empty, which widens nothing.
    agent_front: bool = False
    # The roots an agent front gave (``orbmcp serve``): they replace the settings' and the project's.
    agent_roots: tuple[Root, ...] | None = None
    default_roots: tuple[str, ...] | None = None  # settings.roots, expanded
    # Replaces the OAuth provider built from an entry's auth settings (cfg -> httpx2.Auth | None),
    # for embedders with their own grant (client credentials, identity assertion).
    auth_factory: Callable[[ServerConfig], Any] | None = None
    state_listeners: list[StateListener] = field(default_factory=list)
    notification_listeners: list[NotificationListener] = field(default_factory=list)
    tg: TaskGroup | None = None  # the manager's task group: background tasks of children live here
    _redactor: Callable[[str], str] | None = None

    def redact(self, text: str) -> str:
        if self._redactor is None:
            secrets = self.extra_secrets

            def _redact(t: str) -> str:
                return redact(t, extra_secrets=secrets)

            self._redactor = _redact
        return self._redactor(text)

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Mask these values too from now on (servers added to a running session)."""
        merged = tuple(sorted({*self.extra_secrets, *secrets}, key=len, reverse=True))
        if merged != self.extra_secrets:
            self.extra_secrets = merged
            self._redactor = None

    def roots_for(self, cfg: ServerConfig) -> tuple[Root, ...] | None:
        """The roots ``cfg``'s server is told: its own, else an agent's, else the settings', else
        the project dir where an embedder set it; None: no roots (the capability is not offered,
        and the server keeps the directories it was started with)."""
        if cfg.roots is not None:
            return roots_of(cfg.roots)
        if self.agent_roots is not None:
            return self.agent_roots
        if self.default_roots is not None:
            return roots_of(self.default_roots)
        if self.project_roots and self.project_dir is not None:
            return roots_of([self.project_dir])
        return () if self.agent_front else None

    def offers_roots(self, cfg: ServerConfig) -> bool:
        """Whether ``cfg``'s server is offered the roots capability now."""
        return self.features.roots and self.roots_for(cfg) is not None

    def task_group(self) -> TaskGroup:
        if self.tg is None:
            raise ConnectionFailed("the session is closed", reason="session_closed")
        return self.tg

    def state_changed(self, sup: Watched, old: State, new: State) -> None:
        for listener in list(self.state_listeners):
            listener(sup, old, new)

    def server_notified(self, server: str, notification: Any) -> None:
        for listener in list(self.notification_listeners):
            listener(server, notification)

    @property
    def era_cache_path(self) -> Path:
        return self.global_dir / "cache" / "protocol-eras.json"

    @property
    def tool_cache_path(self) -> Path:
        return self.global_dir / "cache" / "tools.json"
