"""Who answers a server's questions: the ``Asker`` protocol and the route to the current one.

A question (an elicitation, a sampling request) is asked of the person whose command is waiting
on that server: a handler that sends a request on a person's behalf enters ``route.asking(ui)``
for the length of it. With nobody waiting, the session's own front answers (an agent host, the
REPL, a one-shot command's terminal); a session daemon has none, so a question that arrives
between commands is declined. When two commands wait on one server at once, the newer one is
asked: the protocol does not say which request a question belongs to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
        try:
            yield
        finally:
            self._waiting.remove(entry)

    def current(self) -> Asker | None:
        for entry in reversed(self._waiting):
            if entry.asker is not None:
                return entry.asker
        return self._default()

    def note(self, interaction: Interaction) -> None:
        """Tell the newest waiting command how a question was answered."""
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


__all__ = ["Asker", "AskerRoute"]
