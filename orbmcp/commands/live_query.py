"""What completion asks a server: the query (standard library only: completion imports it on
every Tab), answered by ``orbmcp.commands.live_completion`` when a session can ask."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from orbmcp.commands.completion_words import Candidate


@dataclass(frozen=True)
class LiveQuery:
    """Candidates only a server knows: a prompt argument (``name=value``, values from
    ``completion/complete``), a tool argument (names, enum values and booleans from the tool's
    input schema) or a resource URI (its resources, and template values from
    ``completion/complete``). ``current`` is the word being typed; ``prompt`` the prompt's or the
    tool's name; ``context`` its other ``name=value`` arguments on the line."""

    kind: Literal["prompt_argument", "tool_argument", "resource_uri"]
    server: str
    current: str
    prompt: str | None = None
    context: tuple[tuple[str, str], ...] = ()


LiveCompleter = Callable[[LiveQuery], Sequence[str | Candidate]]


__all__ = ["LiveCompleter", "LiveQuery"]
