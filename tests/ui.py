"""Test doubles shared by several test files: UIs that record what they are told."""

from __future__ import annotations

from dataclasses import dataclass, field

from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
from orbmcp.core.capabilities.server_log import LogMessage


class SilentUI:
    """Nobody answers: no confirmation, no choice, no browser, no paste; notices are dropped.

    Subclasses override what their tests observe.
    """

    interactive = False

    def confirm(self, question: str, *, default: bool = False) -> bool:
        return False

    def choose(self, question: str, options: list[str]) -> str | None:
        return None

    def notify(self, message: str, *, level: str = "info") -> None:
        pass

    def show(self, text: str) -> None:
        self.notify(text)

    def open_url(self, url: str) -> bool:
        return False

    def show_url(self, url: str) -> None:
        pass

    def prompt_paste(self, message: str) -> str | None:
        return None

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        pass

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("decline", reason="nobody answers in this test")

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        return SamplingAnswer("reject", reason="nobody answers in this test")

    def server_log(self, server: str, message: LogMessage) -> None:
        pass


@dataclass
class RecordingUI(SilentUI):
    interactive: bool = False
    notes: list[tuple[str, str]] = field(default_factory=list)
    progress_events: list[tuple[str, str, float, float | None, str | None]] = field(default_factory=list)

    def notify(self, message: str, *, level: str = "info") -> None:
        self.notes.append((level, message))

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        self.progress_events.append((server, tool, progress, total, message))
