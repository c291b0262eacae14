"""What completion asks a server: the query (standard library only: completion imports it on
every Tab), answered by ``orbmcp.commands.live_completion`` when a session can ask."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class LiveQuery:
    """Candidates only a server knows: a prompt argument (``name=value``, values from
    ``completion/complete``) or a resource URI (its resources, and template values from
    ``completion/complete``). ``current`` is the word being typed; ``context`` the prompt's other
    ``name=value`` arguments on the line."""

    kind: Literal["prompt_argument", "resource_uri"]
    server: str
    current: str
    prompt: str | None = None
    context: tuple[tuple[str, str], ...] = ()


LiveCompleter = Callable[[LiveQuery], list[str]]


__all__ = ["LiveCompleter", "LiveQuery"]
