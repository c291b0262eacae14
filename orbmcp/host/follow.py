"""Following the server registry: servers a host or another extension registers, replaces or
removes with ``orbmcp.register_server`` while the session runs are picked up without a restart.

The registry calls its listeners on whichever thread made the change; ``RegistryWatch`` carries
that to the extension's event loop, where the lifecycle task re-resolves the configuration (files
still win over registered servers) and applies the difference with ``Manager.apply_config``.
"""

from __future__ import annotations

import threading

import anyio
import anyio.from_thread
import anyio.lowlevel

from orbmcp.config import registry
from orbmcp.log import log_event


class RegistryWatch:
    """An event on the extension's loop, set after each registry change. Create it on that loop;
    ``close`` it when the session ends. Changes that come faster than they are applied coalesce."""

    def __init__(self) -> None:
        self._changed = anyio.Event()
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()
        self._unsubscribe = registry.add_listener(self._registry_changed)

    def _registry_changed(self) -> None:
        if threading.get_ident() == self._loop_thread:
            self._changed.set()
            return
        # Another thread registered: it waits until the loop has noted the change (not for the
        # servers to connect).
        try:
            anyio.from_thread.run_sync(self._note, token=self._token)
        except RuntimeError as exc:  # the loop has closed: the session is over
            log_event("host.registry_change_dropped", level="warn", message=type(exc).__name__)

    def _note(self) -> None:
        self._changed.set()

    async def wait(self) -> None:
        """Return after the next change (at once if one came since the last ``wait``)."""
        await self._changed.wait()
        self._changed = anyio.Event()

    def close(self) -> None:
        self._unsubscribe()
