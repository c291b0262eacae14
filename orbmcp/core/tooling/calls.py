"""Requests on a live connection: tool calls, resources, prompts.

A request that fails because the connection died tells the supervisor at once (its tools are
deactivated before the error reaches the caller). Calls are never retried: their side effects may
already have happened. Cancelling the calling task makes the SDK send notifications/cancelled.

Reasons of the errors raised here: ``not_connected``, ``session_lost`` (the server forgot the
session), ``connection_closed``, ``auth_required``, ``request_timeout``, ``request_failed`` (the
server answered with an error), ``disconnected`` (the session was torn down under the request).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from orbmcp.core.capabilities.client_side import is_legacy
from orbmcp.core.capabilities.elicitation import url_elicitations
from orbmcp.core.processes.exits import exit_text, settle_exit
from orbmcp.core.session import discovery
from orbmcp.core.session.discovery import collect_pages, wire
from orbmcp.core.session.hints import failure_error
from orbmcp.core.tooling.call_paths import RAW, SDK, Call, CallPath, path_for
from orbmcp.core.tooling.results import from_sdk
from orbmcp.core.wire.raw_channel import Deliver, Issued, SdkProgress
from orbmcp.errors import (
    AuthError,
    ConnectionFailed,
    OrbError,
    ProtocolError,
    TimeoutFailed,
    UsageError,
    cmd,
)

if TYPE_CHECKING:
    from orbmcp.core.capabilities import Interaction
    from orbmcp.core.capabilities.askers import Asker
    from orbmcp.core.capabilities.server_log import LogMessage
    from orbmcp.core.processes.process import ManagedProcess
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.supervisor import Supervisor
    from orbmcp.core.tooling.registry import BridgedTool
    from orbmcp.core.tooling.results import ToolResult

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None] | None]
T = TypeVar("T")

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
INVALID_REQUEST = -32600
URL_ELICITATION_REQUIRED = -32042
LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
# Said whenever a connection died under a request: its outcome is unknown, and it is never re-sent.
NOT_RETRIED = "outcome unknown: the request was not retried, and a tool call's side effects may have happened"


def _session_gone(message: str) -> bool:
    text = message.lower()
    return "session not found" in text or "session terminated" in text


_DEAD_STREAM_ERRORS: tuple[type[BaseException], ...] = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    BrokenPipeError,
    ConnectionResetError,
)


def _client(sup: Supervisor) -> Any:
    client = sup.client
    if client is None:
        raise (
            failure_error(sup)
            if sup.snap.last_error
            else ConnectionFailed(
                f"server '{sup.name}' is not connected ({sup.state})",
                server=sup.name,
                hint=cmd("start", sup.name),
                reason="not_connected",
            )
        )
    return client


async def _connection_died(
    sup: Supervisor, process: ManagedProcess | None, what: str, *, how: str = "closed the connection"
) -> ConnectionFailed:
    """The error for a request whose connection died: why, when that is known (a line over the
    size cap; the server exited, with its code and last stderr lines), not just "closed"."""
    loss = sup.loss
    if loss is not None and loss[1] not in ("connection_closed", "server_exited"):
        message, reason = f"{loss[0]} (during {what})", loss[1]
    else:
        message, reason = f"server '{sup.name}' {how} during {what}", "connection_closed"
        if sup.stopped_because is not None:
            message, reason = f"server '{sup.name}' was {sup.stopped_because} during {what}", "server_stopped"
        elif process is not None and process.stopping:
            message, reason = f"server '{sup.name}' was stopped during {what}", "server_stopped"
        elif process is not None:
            code = await settle_exit(process)
            if code is not None and not process.stopping:
                text = exit_text(sup.name, code, sup.attempt_stderr(), during=f"during {what}")
                message, reason = sup.runtime.redact(text), "server_exited"
    sup.connection_lost(message, reason=reason)
    return ConnectionFailed(message, server=sup.name, hint=NOT_RETRIED, reason=reason)


async def request(
    sup: Supervisor, what: str, fn: Callable[[Any], Awaitable[T]], *, url_elicitation: bool = False
) -> T:
    """Run one request on the live client and translate its failures (with ``url_elicitation``,
    a -32042 answer is raised for ``with_url_elicitation`` to resolve)."""
    # Not at module top: the SDK loads through core/wire/sdk.py's tuned import (see call_paths).
    from mcp import MCPError

    client = _client(sup)
    process = sup.process  # the owner task forgets it once the connection is gone
    try:
        return await fn(client)
    except MCPError as exc:
        code = exc.error.code
        if code == URL_ELICITATION_REQUIRED and url_elicitation:
            raise _UrlElicitationRequired(exc.error.data) from None
        if code == INVALID_REQUEST and _session_gone(exc.error.message):
            # A 2025-era HTTP server that restarted forgets its sessions and answers every request
            # "Session not found"; the SDK does not re-initialize, so the session is dead.
            msg = f"server '{sup.name}' no longer knows this session (it restarted?) during {what}"
            sup.connection_lost(msg, reason="session_lost")
            raise ConnectionFailed(
                msg, server=sup.name, hint="orbmcp reconnects it; retry the request", reason="session_lost"
            ) from None
        if code == CONNECTION_CLOSED:
            if sup.auth_challenge is not None:
                # The server refused the token (401/403) and the provider could not renew it: the
                # request was rejected, so what the user needs is how to re-authorize.
                raise AuthError(
                    sup.auth_challenge, server=sup.name, hint=cmd("auth", sup.name), reason="auth_required"
                ) from None
            raise await _connection_died(sup, process, what) from None
        if code == REQUEST_TIMEOUT:
            raise _timed_out(sup, what) from None
        raise ProtocolError(
            sup.runtime.redact(f"server '{sup.name}': {what} failed: {exc.error.message} (code {code})"),
            server=sup.name,
            reason="request_failed",
        ) from None
    except _DEAD_STREAM_ERRORS:
        raise await _connection_died(sup, process, what, how="connection died") from None
    except TimeoutError:
        raise _timed_out(sup, what) from None
    except (OrbError, _UrlElicitationRequired):
        raise
    except anyio.get_cancelled_exc_class():
        raise
    except Exception as exc:
        if sup.client is None:  # the owner task tore the session down under us
            raise ConnectionFailed(
                f"server '{sup.name}' disconnected during {what}",
                server=sup.name,
                hint=NOT_RETRIED,
                reason="disconnected",
            ) from None
        raise ProtocolError(
            sup.runtime.redact(f"server '{sup.name}': {what} failed: {type(exc).__name__}: {exc}"),
            server=sup.name,
            reason="request_failed",
        ) from None


def _timed_out(sup: Supervisor, what: str) -> TimeoutFailed:
    return TimeoutFailed(f"server '{sup.name}': {what} timed out", server=sup.name, reason="request_timeout")


def owner_of(manager: Manager, tool: BridgedTool) -> Supervisor:
    """The supervisor of the server behind a bridged tool, which must still offer it."""
    if not tool.present:
        raise UsageError(
            f"server '{tool.server}' no longer offers the tool '{tool.name}'",
            server=tool.server,
            reason="tool_gone",
        )
    return manager.get(tool.server)


async def call_tool(
    sup: Supervisor,
    tool: str,
    arguments: dict[str, Any] | None,
    *,
    timeout_s: float | None = None,
    progress: ProgressFn | None = None,
    asker: Asker | None = None,
    record: list[Interaction] | None = None,
    logs: Callable[[LogMessage], None] | None = None,
    as_task: bool = False,
    log_level: str | None = None,
) -> ToolResult:
    """Call ``tool``; a server's questions during the call go to ``asker`` (how they were
    answered to ``record``), its log messages to ``logs``.

    The call is task-augmented when ``as_task`` is set or the tool requires it
    (``execution.taskSupport``); a -32042 "URL elicitation required" answer is resolved with the
    person (``asker``) and the call retried once. ``log_level`` asks the server for log messages
    of at least that level (``logging/setLevel`` on 2025-era sessions, per request on others).
    Which path the call takes (raw relay or the SDK's session) is ``call_paths.path_for``'s.
    """
    with sup.client_side.route.asking(asker, record=record, logs=logs):
        meta = await _apply_log_level(sup, log_level) if log_level is not None else None
        call = _call(sup, tool, arguments, timeout_s, progress, task=as_task, meta=meta)
        result = await _send(sup, call, lambda path: path.model)
    return from_sdk(result)


async def call_tool_wire(
    sup: Supervisor,
    tool: str,
    arguments: dict[str, Any] | None,
    *,
    timeout_s: float | None = None,
    progress: ProgressFn | None = None,
    asker: Asker | None = None,
    deliver: Deliver | None = None,
    issued: Issued | None = None,
) -> dict[str, Any]:
    """The server's ``tools/call`` result as wire JSON, for a front that passes it on unchanged;
    questions, tasks and -32042 as ``call_tool`` handles them, on the same paths.

    The result is checked against the negotiated protocol version, but no models are built and
    the check against the tool's output schema is left to whoever receives it: an agent behind
    ``orbmcp serve`` checks it itself, and a gateway should not pay for it twice per call.
    ``deliver`` may be handed the same result before this returns it (``call_paths.Call``);
    ``issued``: the call as ``issue_wire`` wrote it already (same tool and arguments).
    """
    with sup.client_side.route.asking(asker):
        call = _call(sup, tool, arguments, timeout_s, progress, deliver=deliver, issued=issued)
        return await _send(sup, call, lambda path: path.wire)


def issue_wire(sup: Supervisor, tool: str, arguments: dict[str, Any]) -> Issued | None:
    """Write ``tools/call`` of ``tool`` now, without waiting, where the raw path will take it and
    the server's stdin takes it at once; ``call_tool_wire(..., issued=...)`` must follow in a task
    that starts before anything else runs, or ``Issued.abandon`` (None: nothing written)."""
    if sup.client is None:
        return None
    return RAW.issue(sup, _call(sup, tool, arguments, None, None))


def _call(
    sup: Supervisor,
    tool: str,
    arguments: dict[str, Any] | None,
    timeout_s: float | None,
    progress: ProgressFn | None,
    *,
    task: bool = False,
    meta: dict[str, Any] | None = None,
    deliver: Deliver | None = None,
    issued: Issued | None = None,
) -> Call:
    if not task:
        listed = sup.runtime.tools.get(sup.name, tool)
        task = listed is not None and listed.task_support == "required"
    timeout = timeout_s if timeout_s is not None else sup.cfg.request_timeout_ms / 1000
    on_progress = progress_filter(progress)
    return Call(
        tool, arguments or {}, timeout, on_progress, meta=meta, task=task, deliver=deliver, issued=issued
    )


async def _send(
    sup: Supervisor, call: Call, form: Callable[[CallPath], Callable[[Supervisor, Any, Call], Awaitable[T]]]
) -> T:
    """``call`` on the path chosen for it, in ``form`` (the path's ``wire`` or ``model``); after a
    -32042 answer it is sent once more on the SDK's path."""
    what = f"tools/call {call.tool}"
    attempts = 0

    async def body(client: Any) -> T:
        # Chosen once the connection is known to be up; the resend always takes the SDK's path.
        path = path_for(sup, call) if attempts == 1 else SDK
        return await form(path)(sup, client, call)

    def attempt() -> Awaitable[T]:
        nonlocal attempts
        attempts += 1
        return request(sup, what, body, url_elicitation=True)

    return await with_url_elicitation(sup, call.tool, attempt)


def progress_filter(progress: ProgressFn | None) -> SdkProgress:
    last = -math.inf

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        nonlocal last
        # Progress must increase (spec): a repeated, backwards or non-finite value is dropped, so a
        # misbehaving server cannot make a bar jump back or flood a front end with stale updates.
        if progress is None or not (math.isfinite(value) and value > last):
            return
        last = value
        out = progress(float(value), None if total is None else float(total), message)
        if out is not None:
            await out

    return on_progress


async def _apply_log_level(sup: Supervisor, level: str) -> dict[str, Any] | None:
    """Ask for ``level``: once per session on 2025-era servers, as request metadata on others."""
    version = sup.snap.protocol_version
    if not is_legacy(version):
        return {LOG_LEVEL_META: level}
    await sup.client_side.set_log_level(sup.client, version, level)
    return None


async def with_url_elicitation(sup: Supervisor, tool: str, send: Callable[[], Awaitable[T]]) -> T:
    """``send()``; when the server answers -32042 "URL elicitation required", ask the person to
    complete the URL(s) and send once more (never a loop: a second -32042 is the error)."""
    try:
        return await send()
    except _UrlElicitationRequired as required:
        data = required.data
    elicitations = url_elicitations(data)
    declined = await sup.client_side.complete_url_elicitations(elicitations) if elicitations else "none given"
    if declined is not None:
        urls = ", ".join(e.url for e in elicitations[:3]) or "a URL"
        raise AuthError(
            sup.runtime.redact(f"server '{sup.name}': tool '{tool}' needs you to open {urls} first"),
            server=sup.name,
            hint=f"open it in a browser, then call the tool again ({declined})",
            reason="url_elicitation_required",
        )
    try:
        return await send()
    except _UrlElicitationRequired:
        raise AuthError(
            f"server '{sup.name}': tool '{tool}' still needs a URL opened after it was completed",
            server=sup.name,
            reason="url_elicitation_required",
        ) from None


class _UrlElicitationRequired(Exception):
    """``request`` met -32042: the caller completes the URL elicitations and retries."""

    def __init__(self, data: object) -> None:
        super().__init__("URL elicitation required")
        self.data = data


async def read_resource(
    sup: Supervisor, uri: str, *, asker: Asker | None = None, record: list[Interaction] | None = None
) -> list[dict[str, Any]]:
    with sup.client_side.route.asking(asker, record=record):
        result = await request(sup, f"resources/read {uri}", lambda c: c.read_resource(uri))
    return [wire(c) for c in result.contents]


async def get_prompt(
    sup: Supervisor,
    name: str,
    arguments: dict[str, str],
    *,
    asker: Asker | None = None,
    record: list[Interaction] | None = None,
) -> dict[str, Any]:
    with sup.client_side.route.asking(asker, record=record):
        result = await request(sup, f"prompts/get {name}", lambda c: c.get_prompt(name, arguments))
    return wire(result)


MAX_COMPLETIONS = 100


async def complete_argument(
    sup: Supervisor,
    ref: tuple[str, str],
    argument: str,
    value: str,
    context: dict[str, str] | None = None,
) -> list[str]:
    """``completion/complete``: values the server suggests for ``argument`` of a prompt
    (``ref = ("prompt", name)``) or a resource template (``("resource", uri_template)``)."""
    from mcp_types import PromptReference, ResourceTemplateReference

    kind, name = ref
    reference: Any = PromptReference(name=name) if kind == "prompt" else ResourceTemplateReference(uri=name)
    wanted = {"name": argument, "value": value}
    result = await request(
        sup, "completion/complete", lambda c: c.complete(reference, wanted, context_arguments=context or None)
    )
    values = result.completion.values if result.completion is not None else []
    return [v for v in values[:MAX_COMPLETIONS] if isinstance(v, str)]


async def list_resources(sup: Supervisor) -> list[dict[str, Any]]:
    return await request(
        sup, "resources/list", lambda c: discovery.list_resources(c, server=sup.name, warn=sup.warn)
    )


async def list_prompts(sup: Supervisor) -> list[dict[str, Any]]:
    return await request(
        sup, "prompts/list", lambda c: discovery.list_prompts(c, server=sup.name, warn=sup.warn)
    )


async def list_resource_templates(sup: Supervisor) -> list[dict[str, Any]]:
    """Every page of ``resources/templates/list`` (wire JSON); [] when the server has none (the
    method is optional for servers that offer resources)."""

    async def run(client: Any) -> list[dict[str, Any]]:
        async def fetch(cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
            page = await client.list_resource_templates(cursor=cursor)
            return [wire(t) for t in page.resource_templates], page.next_cursor

        return await collect_pages(fetch, what="resource templates", server=sup.name, warn=sup.warn)

    try:
        return await request(sup, "resources/templates/list", run)
    except ProtocolError:
        return []


async def subscribe_resource(sup: Supervisor, uri: str, *, subscribe: bool = True) -> None:
    """Ask a (2025-era) server for ``notifications/resources/updated`` about ``uri``, or stop."""
    verb = "subscribe" if subscribe else "unsubscribe"

    async def run(client: Any) -> Any:
        session = client.session  # the Client's own methods warn that 2026-07-28 removed these
        method = session.subscribe_resource if subscribe else session.unsubscribe_resource
        return await method(uri)

    await request(sup, f"resources/{verb} {uri}", run)
