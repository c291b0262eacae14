"""Requests a session daemon answers beyond running a command, taken by registration.

The daemon (``daemon/connection.py``) answers ``run``, ``status``, ``stop`` and ``ping`` itself;
any other kind goes to the handler registered for it here. ``serve`` registers its ``serve``
request (the agent shares the daemon's live session), so neither front imports the other: the
program's entry point (``orbmcp/__main__.py``) wires them. A handler sees the connection only
through ``DaemonRequest``, the few things it needs of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.fastpath.argv import ProgramLine
    from orbmcp.session.console import Console
    from orbmcp.session.persistent import PersistentSessions


class BadRequest(Exception):
    """A request the daemon cannot read (the connection answers it with an error frame)."""


class FrameSink(Protocol):
    def send_nowait(self, message: dict[str, Any]) -> None: ...

    async def drain(self) -> None: ...


class FrameSource(Protocol):
    @property
    def raw(self) -> Any: ...  # the byte stream past the frames read so far

    async def receive(self) -> dict[str, Any] | None: ...


class HostedSession(Protocol):
    """A live session of the daemon: its configuration and the servers it keeps connected."""

    @property
    def config(self) -> ResolvedConfig: ...

    @property
    def sessions(self) -> PersistentSessions: ...

    async def refresh(self) -> ResolvedConfig | None: ...


class DaemonRequest(Protocol):
    """What a registered handler may use of the daemon connection it answers on."""

    @property
    def writer(self) -> FrameSink: ...

    @property
    def reader(self) -> FrameSource: ...

    @property
    def stream(self) -> Any: ...  # the connection's byte stream

    @property
    def global_dir(self) -> str: ...

    def console(self, request: Mapping[str, Any]) -> Console: ...

    def in_scope(self, line: ProgramLine, request: Mapping[str, Any]) -> bool: ...

    def served(self) -> None: ...  # count the client as served

    async def session_of(self, line: ProgramLine, request: Mapping[str, Any]) -> HostedSession: ...


RequestHandler = Callable[[DaemonRequest, Mapping[str, Any]], Awaitable[None]]
_HANDLERS: dict[str, RequestHandler] = {}


def register(kind: str, handler: RequestHandler) -> None:
    _HANDLERS[kind] = handler


def handler_for(kind: str) -> RequestHandler | None:
    return _HANDLERS.get(kind)
