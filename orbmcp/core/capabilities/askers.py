"""Who answers a server's questions: the ``Asker`` protocol and the route to the current one.

A question (an elicitation, a sampling request) is asked of the person whose command is waiting
on that server: a handler that sends a request on a person's behalf enters ``route.asking(ui)``
for the length of it. With nobody waiting, the session's own front answers (an agent host, the
REPL, a one-shot command's terminal); a session daemon has none, so a question that arrives
between commands is declined.

When two commands wait on one server at once, a question is theirs only when it says so: a
2026-07-28 server's question comes back in the answer to the command's own request (an
input-required round; likewise a -32042 retry), and the SDK asks it from the command's task, so
``asking`` marks that task (a context variable). A 2025-era question over stdio names no
request: with several commands waiting it belongs to one of them, unknown which, and is never
given to one by guess. An asker that can ask on behalf of several (``joint``: an agent's runs)
asks it as theirs; otherwise the newest waiting command is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from orbmcp.core.capabilities import Interaction
    from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
    from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
    from orbmcp.core.capabilities.server_log import LogMessage


class Asker(Protocol):
    """What a front implements to answer servers (the command layer's ``UI`` includes it).

    Plain data in and out, so a front may ask on another terminal (the daemon's clients)."""

    interactive: bool

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer: ...

    async def sample(self, request: SamplingRequest) -> SamplingAnswer: ...


class JointAsker(Protocol):
    """An asker that can ask a question on behalf of several waiting commands at once."""

    def joint(self, others: Sequence[Asker]) -> Asker | None:
        """One asker for this command and ``others`` (None: it cannot speak for them)."""
        ...


class _Waiting:
    __slots__ = ("asker", "logs", "record")

    def __init__(
        self,
        asker: Asker | None,
        record: list[Interaction] | None,
        logs: Callable[[LogMessage], None] | None,
    ) -> None:
        self.asker = asker
        self.record = record
        self.logs = logs


# The command whose own task (or a task it started) is running: set by ``asking``.
_ASKING: ContextVar[_Waiting | None] = ContextVar("orbmcp_asking", default=None)


def asked_by_nobody() -> None:
    """For a long-lived task started while a command waited (a server's supervisor and the SDK
    tasks under it): the questions it receives are not that command's."""
    _ASKING.set(None)


class AskerRoute:
    """The askers of the commands waiting on one server, newest last."""

    def __init__(self, default: Callable[[], Asker | None]) -> None:
        self._default = default
        self._waiting: list[_Waiting] = []

    @contextmanager
    def asking(
        self,
        asker: Asker | None,
        *,
        record: list[Interaction] | None = None,
        logs: Callable[[LogMessage], None] | None = None,
    ) -> Iterator[None]:
        """For the block: questions go to ``asker``, what orbmcp answered goes to ``record``,
        and the server's log messages to ``logs`` (``call --verbose``)."""
        entry = _Waiting(asker, record, logs)
        self._waiting.append(entry)
        token = _ASKING.set(entry)
        try:
            yield
        finally:
            _ASKING.reset(token)
            self._waiting.remove(entry)

    def _own(self) -> _Waiting | None:
        """The waiting command whose task asks, when it is one of this server's."""
        mine = _ASKING.get()
        return mine if mine is not None and any(e is mine for e in self._waiting) else None

    def current(self) -> Asker | None:
        mine = self._own()
        if mine is not None and mine.asker is not None:
            return mine.asker
        askers: list[Asker] = []
        for entry in reversed(self._waiting):  # newest first
            if entry.asker is not None and not any(a is entry.asker for a in askers):
                askers.append(entry.asker)
        if not askers:
            return self._default()
        if len(askers) == 1:
            return askers[0]
        joint = getattr(askers[0], "joint", None)
        together = joint(askers[1:]) if callable(joint) else None
        return together if together is not None else askers[0]

    def note(self, interaction: Interaction) -> None:
        """Tell the command the question was asked for (else the newest waiting) how it was answered."""
        mine = self._own()
        if mine is not None and mine.record is not None:
            mine.record.append(interaction)
            return
        for entry in reversed(self._waiting):
            if entry.record is not None:
                entry.record.append(interaction)
                return

    def has_log_listeners(self) -> bool:
        return any(entry.logs is not None for entry in self._waiting)

    def log(self, message: LogMessage) -> None:
        """Pass a server log message to every waiting command that asked for them."""
        for entry in list(self._waiting):
            if entry.logs is not None:
                entry.logs(message)


__all__ = ["Asker", "AskerRoute", "JointAsker", "asked_by_nobody"]
