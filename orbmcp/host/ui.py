"""``HostUI``: the command layer's UI (and the OAuth flow's) on top of a ``Host``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from orbmcp.auth.urlpolicy import open_in_browser
from orbmcp.core.capabilities.client_side import default_sampling
from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest, check_content
from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
from orbmcp.host.protocol import Elicits, OpensUrls, Prompts, Samples
from orbmcp.log import log_event

if TYPE_CHECKING:
    from orbmcp.core.capabilities.server_log import LogMessage
    from orbmcp.host.protocol import Host

ELICIT_ATTEMPTS = 3


def callback_failed(what: str, exc: Exception) -> None:
    """Log a host callback that raised: a faulty host never breaks orbmcp (nor orbmcp the host)."""

    log_event("host.callback_failed", level="warn", message=f"{what}: {type(exc).__name__}")


class HostUI:
    """Asks the person through the host: confirmations and choices only when the host is
    interactive, URLs through the host when it opens them (``OpensUrls``), pasted redirect URLs
    when it can prompt (``Prompts``). Every method runs on the event loop."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.interactive = bool(host.interactive)

    def use(self, host: Host) -> None:
        """Talk to ``host`` from now on (``McpExtension.register_into``)."""
        self.host = host
        self.interactive = bool(host.interactive)

    def confirm(self, question: str, *, default: bool = False) -> bool:
        """Yes or no; False without asking when the host is not interactive, ``default`` when the
        person gave no answer."""
        if not self.interactive:
            return False
        answer = self.choose(question, ["Yes", "No"])
        return default if answer is None else answer == "Yes"

    def choose(self, question: str, options: list[str]) -> str | None:
        """One of ``options``, or None (not interactive, no answer, an answer not offered)."""
        if not self.interactive:
            return None
        try:
            answer = self.host.choose(question, options)
        except Exception as exc:
            callback_failed("choose", exc)
            return None
        return answer if answer in options else None

    def notify(self, message: str, level: str = "info") -> None:
        """Pass a message to ``Host.notify``."""
        try:
            self.host.notify(message, level)
        except Exception as exc:
            callback_failed("notify", exc)

    def show(self, text: str) -> None:
        """A rendered block of lines (a review), as one ``Host.notify``."""
        self.notify(text, "info")

    def open_url(self, url: str) -> bool:
        """Open an authorization URL: through the host when it can, else the system browser."""
        if isinstance(self.host, OpensUrls):
            return bool(self.host.open_url(url))

        return open_in_browser(url)

    def show_url(self, url: str) -> None:
        """Tell the person the URL to open, for when no browser could be opened."""
        self.notify(f"Open this URL to authorize: {url}", "info")

    def prompt_paste(self, message: str = "Paste the final redirect URL") -> str | None:
        """The redirect URL the person pastes; None when the host is not interactive, cannot
        prompt, or got a blank answer."""
        if not self.interactive or not isinstance(self.host, Prompts):
            return None
        answer = self.host.prompt(message)
        return answer if isinstance(answer, str) and answer.strip() else None

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        """Nothing: per-call progress goes to the callback given to ``HostTool.call``."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        """Ask through the host's ``Elicits``; form answers are checked, and asked again (at most
        ``ELICIT_ATTEMPTS`` times) with what was wrong. Declined when the host cannot ask."""
        host = self.host
        if not isinstance(host, Elicits):
            return ElicitationAnswer("decline", reason="the agent host cannot ask its user (no Elicits)")
        errors: list[str] = []
        for _attempt in range(ELICIT_ATTEMPTS):
            try:
                answer = await host.elicit(replace(request, errors=tuple(errors)))
            except Exception as exc:
                callback_failed("elicit", exc)
                return ElicitationAnswer("cancel", reason="the agent host failed to ask")
            if not isinstance(answer, ElicitationAnswer) or answer.action not in (
                "accept",
                "decline",
                "cancel",
            ):
                return ElicitationAnswer("cancel", reason="the agent host gave no answer")
            if answer.action != "accept" or request.mode != "form":
                return answer
            values, errors = check_content(request.fields, answer.content)
            if not errors:
                return ElicitationAnswer("accept", values)
        return ElicitationAnswer("cancel", reason="invalid answers: " + "; ".join(errors)[:300])

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        """The host's model (``Samples``); else the configured sampling command; else a refusal."""

        host = self.host
        if isinstance(host, Samples):
            try:
                answer = await host.sample(request)
            except Exception as exc:
                callback_failed("sample", exc)
                return SamplingAnswer("reject", reason="the agent host failed to sample")
            if isinstance(answer, SamplingAnswer):
                return answer
            return SamplingAnswer("reject", reason="the agent host gave no sampling answer")
        if request.command:
            self.notify(
                f"MCP server '{request.server}' asked for a model's answer: running the sampling command"
            )
        return await default_sampling(request)

    def server_log(self, server: str, message: LogMessage) -> None:
        """Nothing: a host reads a server's log in its status (``/mcp <server>``)."""
