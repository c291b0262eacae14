"""What serve's request handlers use of a gateway, as a Protocol.

``serve.gateway`` builds the SDK server from the handlers (``server``, ``tools``, ``prompts``,
``resources``, ``slash``); they take this instead of importing ``Gateway`` back, so no import
chain, typing ones included, returns to the gateway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from orbmcp.serve.hub import GatewaySide

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.tooling.registry import BridgedTool
    from orbmcp.serve.hub import Hub
    from orbmcp.serve.naming import ToolNames
    from orbmcp.serve.options import ServeOptions
    from orbmcp.serve.peer import Peer
    from orbmcp.session.holder import Sessions


class ServedGateway(GatewaySide, Protocol):
    """A gateway as its handlers see it (and as the hub does: ``GatewaySide``)."""

    hub: Hub
    sessions: Sessions
    options: ServeOptions
    names: ToolNames

    @property
    def manager(self) -> Manager: ...

    @property
    def config(self) -> ResolvedConfig: ...

    def serves(self, server: str) -> bool: ...

    def served_names(self) -> list[str]:
        """The served servers, in configuration order."""
        ...

    async def ready(self) -> None:
        """Until the servers serve started have had their first attempt."""
        ...

    def tool(self, name: str) -> BridgedTool | None: ...

    def tool_listing(self) -> list[dict[str, Any]]: ...

    def peer(self, ctx: Any) -> Peer: ...
