"""Where an extension's configuration comes from, and its next one after a registry change.

The extension resolves the layered configuration itself (asking the host about project trust once)
unless it was handed one; only a configuration it resolved itself follows the server registry,
since re-resolving a handed-over one would replace it with something its owner never chose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from orbmcp.config.loader import load_config
from orbmcp.errors import ConfigError
from orbmcp.host.spelling import agent_message

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.host.follow import RegistryWatch
    from orbmcp.host.protocol import Host

Notify = Callable[[str, str], None]


async def unless_stopped(stop: anyio.Event, work: Callable[[], Awaitable[object]]) -> None:
    """Run ``work``, cut short once ``stop`` is set."""
    async with anyio.create_task_group() as tg:

        async def stopped() -> None:
            await stop.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(stopped)
        await work()
        tg.cancel_scope.cancel()


class ConfigSource:
    """Resolves the configuration for ``project`` / ``config_file``, as ``--project`` and
    ``--config`` would; problems go to ``notify(message, level)``."""

    def __init__(self, project: Path | None, config_file: Path | None, notify: Notify) -> None:
        self.project = project
        self.config_file = config_file
        self._notify = notify
        self._trust_asked = False
        self._host_trust: bool | None = None

    def resolve(self, host: Host) -> ResolvedConfig:
        """Load every layer. Raises ConfigError for a broken file."""

        config = load_config(project=self.project, config_file=self.config_file, host_trust=self._host_trust)
        if self.config_file is None and not self._trust_asked and config.project.files:
            # The project has servers (its own .orb files, or another client's project file that
            # orbmcp imports): ask the host once; its answer (yes or no) wins over orbmcp's store.
            self._trust_asked = True
            try:
                self._host_trust = host.is_project_trusted(config.project.dir)
            except Exception:
                self._host_trust = None
            if self._host_trust is not None:
                config = load_config(
                    project=self.project, config_file=self.config_file, host_trust=self._host_trust
                )
        return config

    def move_to(self, project: Path | None) -> None:
        """Resolve for ``project`` from now on (its trust is asked afresh)."""
        self.project = project
        self._trust_asked = False
        self._host_trust = None

    def config_error(self, err: ConfigError) -> None:
        """Tell the person about a broken configuration."""
        self._notify(f"MCP config error: {agent_message(err)}", "error")

    async def next(
        self, host: Host, current: ResolvedConfig, watch: RegistryWatch | None, stop: anyio.Event
    ) -> ResolvedConfig | None:
        """The configuration after the next registry change (new warnings notified); None once
        ``stop`` is set. A change that breaks the configuration is notified and skipped."""
        while True:
            if watch is None:
                await stop.wait()
                return None
            await unless_stopped(stop, watch.wait)
            if stop.is_set():
                return None
            try:
                config = self.resolve(host)
            except ConfigError as err:  # the running servers stay as they are
                self.config_error(err)
                continue
            for warning in config.warnings:
                if warning not in current.warnings:
                    self._notify(f"MCP config: {warning}", "warning")
            return config
