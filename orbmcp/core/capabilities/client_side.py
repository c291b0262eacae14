"""One server's client side: the SDK callbacks that answer it, and what it tells orbmcp.

``ClientSide`` lives as long as the server's supervisor (across reconnects). ``client_kwargs``
gives the callbacks for ``mcp.Client`` (only for the capabilities the session advertises: the SDK
advertises a capability exactly when its callback is set); ``notification`` takes the
notifications the generic message handler does not (elicitation complete, resource updated).
Nothing a server sends can break orbmcp here: every callback answers (an answer or a refusal),
logs what went wrong, and records what it did for the command that is waiting.

The SDK's types (``mcp_types``) are imported inside the callbacks: an empty ``status`` builds
supervisors, and with them this module, without loading the SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from orbmcp.core.capabilities import Interaction
from orbmcp.core.capabilities.askers import AskerRoute
from orbmcp.core.capabilities.elicitation import (
    MAX_MESSAGE,
    ElicitationAnswer,
    ElicitationRequest,
    UnsupportedForm,
    check_content,
    parse_form,
)
from orbmcp.core.capabilities.sampling import (
    USER_REJECTED,
    SamplingAnswer,
    SamplingFailed,
    SamplingRequest,
    check_result,
    run_command,
)
from orbmcp.core.capabilities.server_log import LogMessage, message_from
from orbmcp.log import log_event

if TYPE_CHECKING:
    from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest, UrlElicitation
    from orbmcp.core.capabilities.roots import Root
    from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
    from orbmcp.core.session.runtime import Runtime

NOBODY = "nobody can answer: no command of this session is waiting on the server"


async def default_sampling(request: SamplingRequest) -> SamplingAnswer:
    """Without a person to ask: the configured command answers, else orbmcp refuses."""
    if not request.command:
        return SamplingAnswer("reject", reason="no sampling command is configured")
    try:
        return SamplingAnswer("result", await run_command(request))
    except SamplingFailed as exc:
        return SamplingAnswer("reject", reason=str(exc))


class ClientSide:
    def __init__(
        self,
        server: str,
        runtime: Runtime,
        *,
        roots: Callable[[], tuple[Root, ...] | None],
        output: Callable[[str], None],
    ) -> None:
        self.server = server
        self.runtime = runtime
        self.route = AskerRoute(lambda: runtime.asker)
        self._roots = roots
        self._output = output  # a line for the server's recent-output ring
        self.resource_listeners: list[Callable[[str], None]] = []

    # -- the SDK's callbacks -----------------------------------------------------------------------

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``mcp.Client``: a callback per advertised capability."""
        features = self.runtime.features
        kwargs: dict[str, Any] = {"logging_callback": self._on_log}
        if self.runtime.elicitation is not None:
            kwargs["elicitation_callback"] = self.runtime.elicitation  # an embedder's own answer
        elif features.elicitation:
            kwargs["elicitation_callback"] = self._on_elicit
        if features.sampling:
            kwargs["sampling_callback"] = self._on_sample
        if self.offers_roots():
            kwargs["list_roots_callback"] = self._on_list_roots
        if self.runtime.log_level is not None:
            kwargs["log_level"] = self.runtime.log_level
        return kwargs

    async def _on_elicit(self, context: Any, params: Any) -> Any:
        from mcp_types import ElicitRequestURLParams, ElicitResult

        message = (params.message or "")[:MAX_MESSAGE]
        if isinstance(params, ElicitRequestURLParams):
            request = ElicitationRequest(
                self.server, "url", message, url=params.url, elicitation_id=params.elicitation_id
            )
        else:
            try:
                fields = parse_form(params.requested_schema)
            except UnsupportedForm as exc:
                reason = f"orbmcp cannot show this form: {exc}"
                self._note("elicitation", "decline", message, reason)
                return ElicitResult(action="decline")
            request = ElicitationRequest(self.server, "form", message, fields, schema=params.requested_schema)
        answer = await self._ask(request)
        content = None
        if answer.action == "accept" and request.mode == "form":
            values, errors = check_content(request.fields, answer.content)
            if errors:  # a front that let an invalid answer through: never send it on
                answer = ElicitationAnswer("decline", reason="invalid answer: " + "; ".join(errors)[:300])
            content = values
        kind = "elicitation" if request.mode == "form" else "url"
        self._note(kind, answer.action, message, answer.reason, url=request.url)
        return ElicitResult(action=answer.action, content=content if answer.action == "accept" else None)

    async def complete_url_elicitations(self, elicitations: list[UrlElicitation]) -> str | None:
        """Have the person complete each URL a -32042 error names; None when they did, else why not."""
        for item in elicitations:
            request = ElicitationRequest(
                self.server,
                "url",
                item.message,
                url=item.url,
                elicitation_id=item.elicitation_id,
                retry=True,
            )
            answer = await self._ask(request)
            self._note("url", answer.action, item.message, answer.reason, url=item.url)
            if answer.action != "accept":
                return answer.reason or ("declined" if answer.action == "decline" else "cancelled")
        return None

    async def _ask(self, request: ElicitationRequest) -> ElicitationAnswer:
        asker = self.route.current()
        if asker is None:
            return ElicitationAnswer("decline", reason=NOBODY)
        try:
            return await asker.elicit(request)
        except Exception as exc:  # a front that failed to ask: the server hears "cancel"
            log_event("elicitation.front_failed", level="warn", server=self.server, reason=type(exc).__name__)
            return ElicitationAnswer("cancel", reason=f"orbmcp could not ask: {type(exc).__name__}")

    async def _on_sample(self, context: Any, params: Any) -> Any:
        from mcp_types import CreateMessageResult, ErrorData

        wire = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        wire.pop("_meta", None)
        settings = self.runtime.sampling
        request = SamplingRequest(
            self.server,
            wire,
            command=settings.command if settings is not None else None,
            timeout_ms=settings.timeout_ms if settings is not None else 0,
        )
        asker = self.route.current()
        try:
            answer = await (asker.sample(request) if asker is not None else default_sampling(request))
        except Exception as exc:
            log_event("sampling.front_failed", level="warn", server=self.server, reason=type(exc).__name__)
            answer = SamplingAnswer("reject", reason=f"orbmcp could not ask: {type(exc).__name__}")
        first = request.messages[0] if request.messages else {}
        summary = _message_text(first)
        if answer.action == "result":
            try:
                result = CreateMessageResult.model_validate(check_result(answer.result))
            except Exception as exc:
                answer = SamplingAnswer("reject", reason=f"the answer is not a sampling result: {exc}"[:300])
            else:
                self._note("sampling", "result", summary, None)
                return result
        self._note("sampling", "reject", summary, answer.reason)
        return ErrorData(code=USER_REJECTED, message=f"User rejected sampling request: {answer.reason}"[:500])

    async def _on_list_roots(self, context: Any) -> Any:
        from mcp_types import ListRootsResult
        from mcp_types import Root as WireRoot

        return ListRootsResult(roots=[WireRoot(uri=r.uri, name=r.name) for r in self._roots() or ()])

    def offers_roots(self) -> bool:
        """The roots capability is offered only where roots are known (configured, or given by an
        agent or an embedder): a server told none keeps the directories it was started with."""
        return self.runtime.features.roots and self._roots() is not None

    async def _on_log(self, params: Any) -> None:
        message = message_from(params.level, params.logger, params.data)
        self._output(message.line())
        if self.route.has_log_listeners():
            redact = self.runtime.redact
            self.route.log(
                LogMessage(message.level, message.logger and redact(message.logger), redact(message.text))
            )

    # -- orbmcp's own messages about the client side ----------------------------------------------

    async def connected(self, client: Any, protocol_version: str | None) -> None:
        """A new connection: on a 2025-era session, ask for the session's log level (2026-07-28
        sessions carry it on every request instead)."""
        level = self.runtime.log_level
        if level is not None and is_legacy(protocol_version):
            await self.set_log_level(client, protocol_version, level)

    async def set_log_level(self, client: Any, protocol_version: str | None, level: str) -> bool:
        """``logging/setLevel`` on a 2025-era session whose server offers logging; False when
        the server offers none (or the request failed: logging is never worth a failed command)."""
        from mcp_types import EmptyResult, SetLevelRequest, SetLevelRequestParams

        if not is_legacy(protocol_version) or getattr(client.server_capabilities, "logging", None) is None:
            return False
        try:
            request = SetLevelRequest(params=SetLevelRequestParams(level=cast("Any", level)))
            await client.session.send_request(request, EmptyResult)
        except Exception as exc:
            log_event("server.set_level_failed", level="warn", server=self.server, reason=type(exc).__name__)
            return False
        return True

    async def roots_changed(self, client: Any, protocol_version: str | None) -> None:
        """Tell a connected server its roots changed (``notifications/roots/list_changed``)."""
        from mcp_types import RootsListChangedNotification

        try:
            await client.session.send_notification(RootsListChangedNotification())
        except Exception as exc:
            log_event(
                "server.roots_notify_failed", level="warn", server=self.server, reason=type(exc).__name__
            )
        else:
            log_event("server.roots_changed", server=self.server, count=len(self._roots() or ()))

    # -- notifications ---------------------------------------------------------------------------

    def notification(self, message: Any) -> bool:
        """Handle a notification that concerns the client side; True when it was one."""
        from mcp_types import ElicitCompleteNotification, ResourceUpdatedNotification

        if isinstance(message, ElicitCompleteNotification):
            return True  # nothing waits on a URL elicitation's completion: consumed here
        if isinstance(message, ResourceUpdatedNotification):
            for listener in list(self.resource_listeners):
                listener(str(message.params.uri))
            return True
        return False

    def _note(self, kind: str, action: str, message: str, reason: str | None, url: str | None = None) -> None:
        # What a command shows or prints as JSON: masked like everything else a server says.
        redact = self.runtime.redact
        self.route.note(
            Interaction(
                kind,
                self.server,
                action,
                redact(message),
                None if reason is None else redact(reason),
                None if url is None else redact(url),
            )
        )
        log_event(f"{kind}.answered", server=self.server, reason=action + (f": {reason}" if reason else ""))


def is_legacy(protocol_version: str | None) -> bool:
    """A 2025-era (handshake) session, where server-to-client requests and notifications flow freely."""
    return bool(protocol_version) and str(protocol_version) < "2026"


def _message_text(message: Any) -> str:
    content = message.get("content") if hasattr(message, "get") else None
    blocks = content if isinstance(content, list) else [content]
    texts = (b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))
    return str(next(texts, ""))[:MAX_MESSAGE]


__all__ = ["NOBODY", "ClientSide", "default_sampling", "is_legacy"]
