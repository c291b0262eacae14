"""The two ways a ``tools/call`` reaches its server, behind one interface (``CallPath``); which
one a call takes is decided here (``path_for``), never by a caller.

* ``RAW``: relayed raw on a stdio connection. The request line goes straight into the server's
  stdin and its answer comes back from the transport's reader (``orbmcp.core.wire.raw_channel``),
  past the SDK's client session, its models and its memory streams on both legs. Ids are of
  orbmcp's own namespace, so the SDK's traffic on the same connection is untouched: the server's
  own requests (elicitation, sampling, roots) and notifications still reach the client session.
* ``SDK``: the SDK's client session, for everything the raw relay cannot do: an HTTP server (no
  channel), a 2026-era session (the SDK stamps every request's ``_meta`` and resolves
  input-required rounds), a call made as a task, and the resend after a -32042 answer.

The SDK (``mcp``, ``mcp_types``, pydantic) is imported where it is used, never at module top:
the program loads it once through ``core/wire/sdk.py``'s tuned import (``frontends/sdk_trim.py``
leaves its server stack out), and this module is imported before that, when a command starts.

Both give the same result in both forms (wire JSON for a front that passes it on, the SDK's model
for one that reads it) and fail the same way (``MCPError`` with its codes, translated by
``calls.request``); every call test runs against both (``tests/core/paths.py``). Each path counts
the calls it was chosen for (``taken``): tests prove which one ran by it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from orbmcp.core.capabilities.tasks import TaskProtocolError, call_as_task
from orbmcp.core.wire.era import era_of
from orbmcp.core.wire.raw_channel import Deliver, Early, Issued, SdkProgress, connection_closed
from orbmcp.errors import ProtocolError

if TYPE_CHECKING:
    from orbmcp.core.session.supervisor import Supervisor


@dataclass(frozen=True, slots=True)
class Call:
    """One ``tools/call`` as both paths take it."""

    tool: str
    arguments: dict[str, Any]
    timeout: float
    on_progress: SdkProgress
    meta: dict[str, Any] | None = None
    task: bool = False  # made as a task (asked for, or the tool requires it)
    # A front that passes the result on as wire JSON may be handed it here first, checked, as the
    # answer is read (True: it passed it on); the raw path does, where nothing must come first.
    deliver: Deliver | None = None
    # Written already by ``RawPath.issue`` (then this call is the raw path's).
    issued: Issued | None = None


class CallPath(Protocol):
    name: str
    taken: int

    async def wire(self, sup: Supervisor, client: Any, call: Call) -> dict[str, Any]:
        """The server's result as wire JSON, checked against the negotiated protocol version."""
        ...

    async def model(self, sup: Supervisor, client: Any, call: Call) -> Any:
        """The result as the SDK's ``CallToolResult``, checked against the tool's output schema."""
        ...


class SdkPath:
    name = "sdk"

    def __init__(self) -> None:
        self.taken = 0

    async def wire(self, sup: Supervisor, client: Any, call: Call) -> dict[str, Any]:
        if call.task:
            result = await call_task(sup, client, call)
            wire: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            return wire
        import mcp_types

        params = mcp_types.CallToolRequestParams(name=call.tool, arguments=call.arguments)
        raw: dict[str, Any] = await client.session.send_request(
            mcp_types.CallToolRequest(params=params),
            _wire_result(),
            request_read_timeout_seconds=call.timeout,
            progress_callback=call.on_progress,
        )
        return raw

    async def model(self, sup: Supervisor, client: Any, call: Call) -> Any:
        if call.task:
            return await call_task(sup, client, call)
        # Always a callback: the SDK sends a progress token only with one, and every call carries one.
        return await client.call_tool(
            call.tool,
            call.arguments,
            read_timeout_seconds=call.timeout,
            progress_callback=call.on_progress,
            meta=call.meta,
        )


class RawPath:
    name = "raw"

    def __init__(self) -> None:
        self.taken = 0
        self.enabled = True  # tests turn it off to run a call test on the SDK's path

    def fits(self, sup: Supervisor, call: Call) -> bool:
        channel = sup.raw_channel
        return (
            self.enabled
            and channel is not None
            and not channel.closed
            and not call.task
            and call.meta is None
            and era_of(sup.snap.protocol_version) == "legacy"
        )

    async def wire(self, sup: Supervisor, client: Any, call: Call) -> dict[str, Any]:
        channel = sup.raw_channel
        version = sup.snap.protocol_version
        if channel is None or version is None:  # the connection went between choice and call
            raise connection_closed()
        checked: list[dict[str, Any]] = []
        early = _early(call.deliver, version, checked) if call.deliver is not None else None
        result = await channel.call(
            call.tool,
            call.arguments,
            timeout=call.timeout,
            on_progress=call.on_progress,
            early=early,
            issued=call.issued,
        )
        return checked[0] if checked else _checked(result, version)

    def issue(self, sup: Supervisor, call: Call) -> Issued | None:
        """``call`` written now where it fits this path and the stdin takes it without waiting
        (``RawChannel.issue``); the call that follows carries it (``Call.issued``)."""
        channel = sup.raw_channel
        if channel is None or not self.fits(sup, call):
            return None
        return channel.issue(call.tool, call.arguments)

    async def model(self, sup: Supervisor, client: Any, call: Call) -> Any:
        import mcp_types

        result = mcp_types.CallToolResult.model_validate(await self.wire(sup, client, call))
        if not result.is_error:  # as the SDK's ``ClientSession.call_tool`` does
            await client.session.validate_tool_result(call.tool, result)
        return result


SDK = SdkPath()
RAW = RawPath()


def path_for(sup: Supervisor, call: Call) -> CallPath:
    """The raw relay where the connection and the call allow it, else the SDK's client session."""
    path: CallPath = RAW if call.issued is not None or RAW.fits(sup, call) else SDK
    path.taken += 1
    return path


def _checked(result: dict[str, Any], version: str) -> dict[str, Any]:
    """What the SDK's ``send_request`` does to a result: checked against the negotiated version
    (a ``ValidationError`` fails the call, as there), a later revision's fields dropped."""
    _result_adapter(version).validate_python(result, by_name=False)
    foreign = _later_fields(version)
    if foreign.isdisjoint(result):
        return result
    return {key: value for key, value in result.items() if key not in foreign}


def _early(deliver: Deliver, version: str, checked: list[dict[str, Any]]) -> Early:
    """The reader's hand-over of a call's result: checked as ``_checked`` does (kept, so the call
    returns it without a second check) and handed to ``deliver``, with the server's text of it
    when the check left it as it came; a result that fails the check is left to the calling
    task, which fails the same way."""

    def early(result: dict[str, Any], raw: bytes | None) -> None:
        try:
            checked.append(_checked(result, version))
        except ValueError:  # pydantic's ValidationError
            return
        deliver(checked[0], raw if checked[0] is result else None)

    return early


@functools.cache
def _result_adapter(version: str) -> Any:
    """The check ``mcp_types.methods.validate_server_result`` makes, without the dump of the
    validated model it also builds and throws away (the most costly step of a relayed call)."""
    from mcp_types.methods import SERVER_RESULTS
    from pydantic import TypeAdapter

    surface: Any = SERVER_RESULTS[("tools/call", version)]  # a model, or a union of them
    return TypeAdapter(surface)


@functools.cache
def _later_fields(version: str) -> frozenset[str]:
    from mcp.client.session import _later_revision_fields

    fields: frozenset[str] = _later_revision_fields("tools/call", version)
    return fields


@functools.cache
def _wire_result() -> Any:
    """A pydantic adapter that keeps a result as the dict it is."""
    from pydantic import TypeAdapter

    return TypeAdapter(dict[str, Any])


async def call_task(sup: Supervisor, client: Any, call: Call) -> Any:
    """``call`` made as a task; its status changes are reported as progress steps."""
    import mcp_types

    steps = 0
    tg = sup.runtime.tg

    def on_status(status: str, message: str | None) -> None:
        nonlocal steps
        steps += 1
        text = status.replace("_", " ") + (f": {message}" if message else "")
        if tg is not None:
            progress: Any = call.on_progress
            tg.start_soon(progress, float(steps), None, text)

    try:
        raw = await call_as_task(
            client.session,
            call.tool,
            call.arguments,
            timeout_s=call.timeout,
            on_status=on_status,
            meta=call.meta,
        )
    except TaskProtocolError as exc:
        raise ProtocolError(
            sup.runtime.redact(f"server '{sup.name}': task of '{call.tool}': {exc}"),
            server=sup.name,
            reason="task_failed",
        ) from None
    return mcp_types.CallToolResult.model_validate(raw)


__all__ = ["RAW", "SDK", "Call", "CallPath", "path_for"]
