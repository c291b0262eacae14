"""The UI of one agent-protocol run: a server's questions become ``ask`` messages to the agent.

Each ``run`` of ``orbmcp slash --stdio`` gets an ``AgentUI`` naming it; a handler's questions (and
its servers', routed to the command waiting on them) go to the agent as ``ask`` and wait for its
``answer`` (``AgentAsks.ask``: bounded; a cancelled run or a gone agent ends the wait). Synchronous
questions (``confirm``, ``prompt_paste``) can wait only from a worker thread: asked on the event
loop itself they take their "no" at once, since waiting there would stop every other run.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
    from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
    from orbmcp.core.capabilities.server_log import LogMessage

ELICIT_ATTEMPTS = 3


class AgentAsks(Protocol):
    """What a run's UI needs from the protocol session (``frontends/agent_protocol.py``)."""

    @property
    def agent(self) -> str:
        """Which agent this is (runs of one agent may be asked together)."""
        ...

    async def ask(
        self, run: str | None, kind: str, server: str | None, message: str, **fields: Any
    ) -> dict[str, Any] | None:
        """The agent's answer, or None (no answer in time, the run cancelled, the agent gone).
        ``run`` None with ``runs=[...]`` in ``fields``: a question of one of those runs."""
        ...

    def post(self, message: dict[str, Any]) -> None:
        """Send a message that needs no answer (progress, a notice); may be dropped under load."""
        ...


def _action(answer: Mapping[str, Any] | None) -> str:
    action = answer.get("action") if answer is not None else None
    return action if action in ("accept", "decline", "cancel") else "cancel"


def _sampling_detail(request: SamplingRequest) -> str:
    """What a sampling request asks, in a few escaped lines, for the agent's consent dialog."""
    from orbmcp.text import one_line

    lines = []
    if request.system_prompt:
        lines.append(f"system: {one_line(request.system_prompt, max_len=300)}")
    messages = request.params.get("messages")
    for message in messages[:10] if isinstance(messages, list) else []:
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        text = content.get("text") if isinstance(content, Mapping) else None
        shown = one_line(text, max_len=300) if isinstance(text, str) else "[non-text content]"
        lines.append(f"{one_line(str(message.get('role', '?')), max_len=20)}: {shown}")
    if request.command:
        lines.append("answered by the sampling command: " + one_line(" ".join(request.command), max_len=200))
    return "\n".join(lines)


class AgentUI:
    """``commands.context.UI`` for one run: questions to the agent, progress and notices to it."""

    interactive = True

    def __init__(self, session: AgentAsks, run: str | None, *, runs: tuple[str, ...] = ()) -> None:
        self._session = session
        self.run = run
        self._runs = runs  # with run None: the runs one of which the question is for
        self._loop_thread = threading.get_ident()

    def joint(self, others: Sequence[object]) -> AgentUI | None:
        """The UI of a question that may be this run's or the ``others``' (runs of this agent
        waiting on one server whose question names no request): asked with ``run`` null and
        ``runs`` listing them. None when another waits too (a shell client of the daemon)."""
        runs = [self.run]
        for other in others:
            if not isinstance(other, AgentUI) or other._session.agent != self._session.agent:
                return None
            runs.append(other.run)
        named = tuple(r for r in runs if r is not None)
        return AgentUI(self._session, None, runs=named) if len(named) == len(runs) else None

    def _who(self) -> dict[str, Any]:
        return {"runs": list(self._runs)} if self.run is None else {}

    def _ask_blocking(self, kind: str, message: str, **fields: Any) -> dict[str, Any] | None:
        if threading.get_ident() == self._loop_thread:
            return None  # on the event loop: waiting here would stop every other run
        import anyio.from_thread

        answer: dict[str, Any] | None = anyio.from_thread.run(
            lambda: self._session.ask(self.run, kind, None, message, **fields, **self._who())
        )
        return answer

    def confirm(self, question: str, *, default: bool = False) -> bool:
        return _action(self._ask_blocking("confirm", question, detail=None)) == "accept"

    def choose(self, question: str, options: list[str]) -> str | None:
        return None  # protocol 1 has no choice question; nothing orbmcp asks an agent needs one

    def notify(self, message: str, *, level: str = "info") -> None:
        from orbmcp.text import one_line

        self._session.post({"type": "notice", "run": self.run, "level": level, "message": one_line(message)})

    def show(self, text: str) -> None:
        self._session.post({"type": "notice", "run": self.run, "level": "info", "message": text})

    def open_url(self, url: str) -> bool:
        return False  # the agent's browser is the agent's: show_url tells it, prompt_paste asks back

    def show_url(self, url: str) -> None:
        self.notify(f"Open this URL to authorize: {url}")

    def prompt_paste(self, message: str) -> str | None:
        answer = self._ask_blocking("input", message, secret=True)
        value = answer.get("value") if answer is not None and _action(answer) == "accept" else None
        return value if isinstance(value, str) and value.strip() else None

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        from orbmcp.text import one_line

        self._session.post(
            {
                "type": "progress",
                "run": self.run,
                "server": server,
                "tool": tool,
                "progress": progress,
                "total": total,
                "message": one_line(message, max_len=300) if message else None,
            }
        )

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        """A form (asked again with what was wrong, at most ``ELICIT_ATTEMPTS`` times) or a URL."""
        from orbmcp.core.capabilities.elicitation import ElicitationAnswer, check_content

        if request.mode == "url":
            answer = await self._session.ask(
                self.run, "url", request.server, request.message, url=request.url, **self._who()
            )
            return ElicitationAnswer(_action(answer))  # type: ignore[arg-type]
        schema = dict(request.schema) if request.schema is not None else {}
        errors: list[str] = []
        for _attempt in range(ELICIT_ATTEMPTS):
            extra = {"errors": errors} if errors else {}
            answer = await self._session.ask(
                self.run, "form", request.server, request.message, schema=schema, **extra, **self._who()
            )
            action = _action(answer)
            if action != "accept":
                reason = None if answer is not None else "the agent gave no answer"
                return ElicitationAnswer(action, reason=reason)  # type: ignore[arg-type]
            assert answer is not None
            values, errors = check_content(request.fields, answer.get("content"))
            if not errors:
                return ElicitationAnswer("accept", values)
        return ElicitationAnswer("cancel", reason="invalid answers: " + "; ".join(errors)[:300])

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        """With a sampling command configured, the agent consents first; without one orbmcp
        refuses (protocol 1 does not ask the agent's own model)."""
        from orbmcp.core.capabilities.client_side import default_sampling
        from orbmcp.core.capabilities.sampling import SamplingAnswer

        if request.command:
            answer = await self._session.ask(
                self.run,
                "confirm",
                request.server,
                f"MCP server '{request.server}' asks for a model's answer",
                detail=_sampling_detail(request),
                **self._who(),
            )
            if _action(answer) != "accept":
                return SamplingAnswer("reject", reason="declined by the agent")
        return await default_sampling(request)

    def server_log(self, server: str, message: LogMessage) -> None:
        """Nothing: a server's log is in its status (``/mcp <server>``)."""


__all__ = ["AgentAsks", "AgentUI"]
