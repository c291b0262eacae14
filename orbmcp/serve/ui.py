"""``ServeUI``: the commands' UI (``commands.context.UI``) for an agent behind a gateway.

A person reaches these commands through the agent, deliberately (a ``/mcp`` prompt or its tool),
so the UI counts as interactive. Questions become form elicitations when the agent supports them
(asked from the worker thread the question runs in; on the event loop itself nobody can be waited
for, so the question takes its default); an authorization URL opens in this machine's browser, and
is also shown to the person through the agent (a URL elicitation, else a log message). Notices are
collected and shown with the command's output.
"""

from __future__ import annotations

import secrets
import threading
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import mcp_types as types

from orbmcp.auth.urlpolicy import open_in_browser
from orbmcp.serve.asker import AgentAsker
from orbmcp.text import one_line

if TYPE_CHECKING:
    from orbmcp.core.capabilities.askers import Asker
    from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
    from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
    from orbmcp.core.capabilities.server_log import LogMessage
    from orbmcp.serve.peer import InFlight, Peer

_ANSWER = "answer"


class ServeUI:
    interactive = True

    def __init__(self, peer: Peer, via: InFlight | None, spawn: Any, fallback: Asker) -> None:
        self._peer = peer
        self._via = via
        self._servers_asker = AgentAsker(peer, via, fallback)  # a server's questions during the command
        self._spawn = spawn  # starts a task beside the command (a URL shown while the flow waits)
        self._loop_thread = threading.get_ident()
        self.notices: list[str] = []
        self._shown: list[str] = []  # blocks shown since the last question

    # -- questions --------------------------------------------------------------------------------

    def confirm(self, question: str, *, default: bool = False) -> bool:
        answer = self._ask(question, {"type": "boolean", "title": question, "default": default})
        return answer if isinstance(answer, bool) else default

    def choose(self, question: str, options: list[str]) -> str | None:
        answer = self._ask(question, {"type": "string", "title": question, "enum": list(options)})
        return answer if answer in options else None

    def prompt_paste(self, message: str) -> str | None:
        answer = self._ask(message, {"type": "string", "title": "URL"})
        return answer if isinstance(answer, str) and answer.strip() else None

    def _ask(self, message: str, field: dict[str, Any]) -> Any:
        if threading.get_ident() == self._loop_thread or not self._peer.can_elicit("form"):
            return None
        shown, self._shown = self._shown, []
        return anyio.from_thread.run(self._elicit_form, "\n\n".join([*shown, message]), field)

    async def _elicit_form(self, message: str, field: dict[str, Any]) -> Any:
        schema = {"type": "object", "properties": {_ANSWER: field}, "required": [_ANSWER]}
        params = types.ElicitRequestFormParams(message=message, requested_schema=schema)
        try:
            result = await self._peer.request(
                types.ElicitRequest(params=params), types.ElicitResult, self._via
            )
        except Exception:  # the agent refused or left: no answer
            return None
        if result.action != "accept" or not result.content:
            return None
        return result.content.get(_ANSWER)

    # -- telling the person -----------------------------------------------------------------------

    def notify(self, message: str, *, level: str = "info") -> None:
        self.notices.append(message if level == "info" else f"{level}: {message}")

    def show(self, text: str) -> None:
        """A block a command shows before it asks (a review): with the output, and leading the next
        question, so the person sees what they answer about."""
        self.notices.append(text)
        self._shown.append(text)

    def open_url(self, url: str) -> bool:
        opened = open_in_browser(url)
        self.show_url(url)
        return opened

    def show_url(self, url: str) -> None:
        text = f"Open this URL to authorize: {url}"
        if text not in self.notices:
            self.notices.append(text)
            self._spawn(self._show, url, text)

    async def _show(self, url: str, text: str) -> None:
        if self._peer.can_elicit("url"):
            params = types.ElicitRequestURLParams(message=text, url=url, elicitation_id=secrets.token_hex(8))
            try:
                await self._peer.request(types.ElicitRequest(params=params), types.ElicitResult, self._via)
            except Exception:
                pass
            return
        log = types.LoggingMessageNotificationParams(level="notice", logger="orbmcp", data=text)
        await self._peer.notify(types.LoggingMessageNotification(params=log), self._via)

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        """Nothing: the commands served here call no tools."""

    # -- a server's questions during the command ---------------------------------------------------

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        return await self._servers_asker.elicit(request)

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        return await self._servers_asker.sample(request)

    def server_log(self, server: str, message: LogMessage) -> None:
        who = f" {one_line(message.logger, max_len=100)}:" if message.logger else ""
        self.notices.append(f"[{one_line(server)}] {message.level}:{who} {one_line(message.text)}")
