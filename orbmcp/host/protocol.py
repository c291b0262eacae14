"""What an agent host provides: the ``Host`` Protocol and one Protocol per optional capability.

A host implements ``Host``. It may also implement any of ``ActiveToolNames``, ``OpensUrls``,
``Prompts``, ``Elicits`` and ``Samples``; orbmcp checks for each with ``isinstance`` (they are
runtime-checkable) and falls back to the behaviour documented on each when a host lacks it.
``Elicits`` and ``Samples`` also decide what orbmcp advertises to servers: elicitation only when
the host can ask its user, sampling only when it has a model (or a sampling command is set).

Every callback runs on the event loop the extension runs on, never concurrently with another
callback, and must not block: a callback that raises is logged (``host.callback_failed`` in the
debug log) and never breaks a connection.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Protocol, runtime_checkable

from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
from orbmcp.host.tools import HostTool


class Host(Protocol):
    """The callbacks every agent host provides."""

    interactive: bool
    """True when a person can answer ``choose`` (authorization prompts are asked only then)."""

    def register_tool(self, tool: HostTool) -> None:
        """Learn a tool, inactive until ``set_tool_active(name, True)``. Called once per name."""
        ...

    def set_tool_active(self, bridged_name: str, active: bool) -> None:
        """Offer (``True``) or stop offering (``False``) a registered tool to the model."""
        ...

    def notify(self, message: str, level: str) -> None:
        """Show the person a message; ``level`` is ``info``, ``warning`` or ``error``."""
        ...

    def choose(self, question: str, options: list[str]) -> str | None:
        """Ask the person to pick one of ``options``; None when they did not answer."""
        ...

    def is_project_trusted(self, project_dir: Path) -> bool | None:
        """The host's own answer on whether the project's ``.orb`` servers may run; None to leave
        it to orbmcp's trust store. Asked at most once per extension, only when the project has
        orbmcp config files."""
        ...


@runtime_checkable
class ActiveToolNames(Protocol):
    """A host where something besides orbmcp (another extension, a tool policy) may keep bridged
    tools inactive. Without it, orbmcp counts a tool as active when it activated it."""

    def active_tool_names(self) -> Collection[str] | None:
        """The bridged names the host really offers now; None means "whatever orbmcp activated"."""
        ...


@runtime_checkable
class OpensUrls(Protocol):
    """A host that opens an authorization URL itself. Without it, orbmcp opens the system browser."""

    def open_url(self, url: str) -> bool:
        """Open ``url`` for the person; False when it could not."""
        ...


@runtime_checkable
class Prompts(Protocol):
    """An interactive host that can ask for a line of text: the final redirect URL of an OAuth
    login the loopback callback could not receive (a headless session). Without it, that login
    waits for the callback only."""

    def prompt(self, message: str) -> str | None:
        """Ask the person for text; None (or blank) when they gave none."""
        ...


@runtime_checkable
class Elicits(Protocol):
    """A host whose UI can ask its user what a server asks (elicitation). Without it, servers are
    not told orbmcp can ask, and any question is declined."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        """Ask the person; ``request.mode`` is ``form`` (``request.fields``: typed, with their
        constraints, choices and defaults) or ``url`` (show ``request.url`` and its purpose, and
        open it only if they agree; with ``request.retry``, answer accept only once they say they
        finished). Answer accept (form values in ``content``), decline or cancel.

        orbmcp checks form answers like its own terminal does (``check_content``); an invalid one
        is asked again with ``request.errors`` saying what was wrong, at most three times."""
        ...


@runtime_checkable
class Samples(Protocol):
    """A host whose model answers servers' sampling requests. Without it, a configured sampling
    command answers (global ``settings.sampling``), else sampling is neither advertised nor done."""

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        """Answer ``request.params`` (the wire ``createMessage`` params: ``messages``,
        ``systemPrompt``, ``modelPreferences``, ``maxTokens``...) with ``SamplingAnswer("result",
        {"role": "assistant", "content": {...}, "model": ..., "stopReason": ...})``, or refuse
        (``SamplingAnswer("reject", reason=...)``): the server then sees a user-rejected error.
        Show the person the request before the model runs, with ``request.server``."""
        ...
