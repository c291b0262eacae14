"""The wire side of ``tools/call`` relayed raw on a stdio connection: the ``RawChannel`` the stdio
transport is made with. Its reader hands the channel every line before the SDK parses it; the
channel takes only a line whose top-level id (or progress token) is one of its own pending calls,
and writes its requests as whole lines into the server's stdin beside the SDK's writer.

Requests carry ids of orbmcp's own namespace ("orbmcp-lane-N": strings, where the SDK counts
integers), so the two never collide. Everything else the server says (its own requests, so
elicitation, sampling and roots still reach the client session; notifications; answers to ids
orbmcp never sent) goes to the SDK as before. Failures are raised as the SDK would raise them
(``MCPError`` with its codes). Which calls take this path is ``orbmcp.core.tooling.call_paths``'s.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Awaitable, Callable
from json.encoder import encode_basestring_ascii
from typing import Any

import anyio

ID_PREFIX = "orbmcp-lane-"
# Every line that can be ours holds this; any other line costs the reader one substring search.
_MARK = b'"' + ID_PREFIX.encode()
# How long a courtesy notifications/cancelled may wait for a wedged stdin (the SDK's bound too).
ABANDON_WRITE_S = 2.0
MALFORMED = "server sent a malformed JSON-RPC response"

Send = Callable[[bytes], Awaitable[None]]
SendNow = Callable[[bytes], bool]  # writes a line now if the pipe takes it without waiting
# A call's progress as the SDK reports it: (progress, total, message).
SdkProgress = Callable[[float, float | None, str | None], Awaitable[None]]
GarbageHook = Callable[[bytes], None]
# Handed a call's result by the reader as it arrives, before the calling task wakes (never raises),
# with the result's JSON text as the server wrote it where the line has the plain shape of an
# answer (``_answer_parts``; None otherwise): a relay may pass that text on without encoding it.
Early = Callable[[dict[str, Any], bytes | None], None]
# Handed a call's result (checked) and its text where the server's line had it (``Early``): True
# when it was passed on.
Deliver = Callable[[dict[str, Any], bytes | None], bool]


def _shape(*parts: str) -> re.Pattern[str]:
    return re.compile("[ \\t\\r\\n]*".join(parts))  # JSON's whitespace between the tokens


# An answer with a result and nothing else, as servers write one: ``jsonrpc``, ``id``, ``result``
# (the SDK's order, ``_HEAD`` before the result and ``_END`` after it), or ``result`` first (the
# TypeScript SDK's: ``_RESULT`` before it, ``_TAIL`` after), compact or spaced.
_ID = '"(' + re.escape(ID_PREFIX) + '[0-9]{1,19})"'
_HEAD = _shape("", r"\{", '"jsonrpc"', ":", r'"2\.0"', ",", '"id"', ":", _ID, ",", '"result"', ":", "")
_END = _shape("", r"\}", "")
_RESULT = _shape("", r"\{", '"result"', ":", "")
_TAIL = _shape("", ",", '"jsonrpc"', ":", r'"2\.0"', ",", '"id"', ":", _ID, r"\}", "")
_decode_value = json.JSONDecoder().raw_decode


class _Closed:
    """The connection ended before the answer came."""


_CLOSED = _Closed()


class Issued:
    """A ``tools/call`` written by ``RawChannel.issue``; its ``call`` waits for the answer."""

    __slots__ = ("channel", "request_id", "tool", "waiter")

    def __init__(self, channel: RawChannel, request_id: str, tool: str, waiter: _Waiter) -> None:
        self.channel, self.request_id, self.tool, self.waiter = channel, request_id, tool, waiter

    def abandon(self) -> None:
        """Nobody waits for this call: its answer, if one comes, goes to the SDK, which drops it
        (idempotent; a ``call`` that waited for it has removed it already)."""
        waiters = self.channel._waiters
        if waiters.get(self.request_id) is self.waiter:
            del waiters[self.request_id]


class _Waiter:
    """One pending call: what the reader handed over (progress tuples, then its outcome). ``wake``
    is made by the calling task when it waits (``_answer``), not when the call is written: a
    relayed call's request goes out without it."""

    __slots__ = ("early", "items", "wake")

    def __init__(self, early: Early | None) -> None:
        self.wake: anyio.Event | None = None
        self.items: list[Any] = []
        self.early = early

    def put(self, item: Any) -> None:
        self.items.append(item)
        if self.wake is not None:
            self.wake.set()


def _answer_parts(line: bytes) -> tuple[str, dict[str, Any], bytes] | None:
    """An answer with a result and nothing else, in one of the shapes servers write
    (``_HEAD``/``_RESULT``): its id, its result and the result's text as the server wrote it;
    None for any other line (the full parse decides what it is)."""
    try:
        text = line.decode()
        head = _HEAD.match(text)
        if head is not None:
            result, end = _decode_value(text, head.end())
            if _END.fullmatch(text, end) is None:
                return None  # more after the result (an "error" too): the full parse decides
            answer_id = head[1]
        else:
            start = _RESULT.match(text)
            if start is None:
                return None
            result, end = _decode_value(text, start.end())
            tail = _TAIL.fullmatch(text, end)
            if tail is None:
                return None
            head, answer_id = start, tail[1]
    except (ValueError, RecursionError):  # not UTF-8, bad JSON, nesting deep enough
        return None
    if not isinstance(result, dict):
        return None
    return answer_id, result, text[head.end() : end].encode()


def json_object(line: bytes) -> dict[str, Any] | None:
    """``line`` as a JSON object, or None for anything else a peer may send (bad JSON, another
    type, nesting deep enough to exhaust the parser's recursion)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


class RawChannel:
    """The raw side of one stdio connection, made with its transport and ended with it."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.closed = False
        self.relayed = 0  # calls answered through here: tests tell which path a call took by it
        self._send: Send | None = None
        self._send_now: SendNow | None = None
        self._on_garbage: GarbageHook | None = None
        self._waiters: dict[str, _Waiter] = {}
        self._ids = itertools.count(1)
        # Set by the reader when it gave the SDK a line: that line's dispatch (a log message, a
        # notification: the SDK handles them in tasks of its own) must come before an answer read
        # after it, as on the SDK's path, so such an answer is held until the reader has passed
        # the SDK a barrier (``held``, ``release``).
        self.sdk_behind = False
        self.held: list[tuple[_Waiter, Any]] = []

    @property
    def pending(self) -> bool:
        """Calls wait for their answers."""
        return bool(self._waiters)

    # -- the transport's side --------------------------------------------------------------------

    def attach(
        self, send: Send, on_garbage: GarbageHook | None = None, send_now: SendNow | None = None
    ) -> None:
        """``send`` writes one whole line to the server's stdin (safe beside the SDK's writer);
        ``send_now`` does without waiting, where the stdin can (``issue``)."""
        self._send, self._send_now = send, send_now
        self._on_garbage = on_garbage

    def take(self, line: bytes) -> bool:
        """From the transport's reader: True when ``line`` answers (or reports the progress of)
        a pending call, which now has it; False leaves it to the SDK. Never raises on what a
        server wrote (bad JSON, deep nesting, ids of any type)."""
        if not self._waiters or _MARK not in line:
            return False
        compact = _answer_parts(line)
        if compact is not None:
            answer_id, result, raw = compact
            waiter = self._waiters.get(answer_id)
            if waiter is None:
                return False  # not ours: the SDK skips it as today
            return self._answered(waiter, result, raw)
        message = json_object(line)
        if message is None:
            return False
        if "method" in message:
            return self._progress(message)
        request_id = message.get("id")
        waiter = self._waiters.get(request_id) if isinstance(request_id, str) else None
        if waiter is None or ("result" not in message and "error" not in message):
            return False  # not ours, or not an answer: the SDK skips it as today
        return self._answered(waiter, self._outcome(message, line), None)

    def _answered(self, waiter: _Waiter, outcome: Any, raw: bytes | None) -> bool:
        if self.sdk_behind:
            self.held.append((waiter, outcome))
            return True
        if waiter.early is not None and not waiter.items and type(outcome) is dict:
            # Nothing of the call's is left to relay before its result: it may go on at once.
            waiter.early(outcome, raw)
        waiter.put(outcome)
        return True

    def release(self) -> None:
        """The SDK has dispatched every line read before the held answers: they go to their calls."""
        held, self.held = self.held, []
        self.sdk_behind = False
        for waiter, outcome in held:
            waiter.put(outcome)

    def _progress(self, message: dict[str, Any]) -> bool:
        params = message.get("params")
        if message.get("method") != "notifications/progress" or not isinstance(params, dict):
            return False
        token = params.get("progressToken")
        waiter = self._waiters.get(token) if isinstance(token, str) else None
        if waiter is None:
            return False
        value, total, text = params.get("progress"), params.get("total"), params.get("message")
        # The SDK's own checks: a bool is no number; a malformed report is dropped.
        if isinstance(value, int | float) and not isinstance(value, bool):
            waiter.put(
                (
                    float(value),
                    float(total) if isinstance(total, int | float) and not isinstance(total, bool) else None,
                    text if isinstance(text, str) else None,
                )
            )
        return True

    def _outcome(self, message: dict[str, Any], line: bytes) -> Any:
        error = message.get("error")
        if message.get("jsonrpc") == "2.0":
            if error is None and isinstance(result := message.get("result"), dict):
                return result
            if isinstance(error, dict):
                code, text = error.get("code"), error.get("message")
                if isinstance(code, int) and not isinstance(code, bool) and isinstance(text, str):
                    return _RawError(code, text, error.get("data"))
        # As the transport does for the SDK: the answer fails the call instead of leaving it to
        # wait its whole timeout, and the line is reported as garbage.
        if self._on_garbage is not None:
            self._on_garbage(line)
        return _RawError(INTERNAL_ERROR, MALFORMED, None)

    def close(self) -> None:
        """The connection is gone: every pending call fails now (idempotent)."""
        self.closed = True
        self._send = self._send_now = None
        self.release()  # an answer that came is the call's outcome, even when the connection then ends
        for waiter in self._waiters.values():
            waiter.put(_CLOSED)

    # -- the caller's side -----------------------------------------------------------------------

    def issue(self, tool: str, arguments: dict[str, Any]) -> Issued | None:
        """Write a ``tools/call`` now, from code that cannot wait (a reader that has just read the
        request), so the server starts on it before the calling task runs; that task's ``call``
        with the ``Issued`` waits for the answer. None: nothing written, ``call`` sends it.
        Whoever issues makes sure the call follows, or abandons it (``Issued.abandon``)."""
        send_now = self._send_now
        if self.closed or send_now is None:
            return None
        request_id = f"{ID_PREFIX}{next(self._ids)}"
        if not send_now(_request_line(request_id, tool, arguments)):
            return None
        waiter = self._waiters[request_id] = _Waiter(None)
        return Issued(self, request_id, tool, waiter)

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float,
        on_progress: SdkProgress,
        early: Early | None = None,
        issued: Issued | None = None,
    ) -> dict[str, Any]:
        """One ``tools/call``: its result as the server sent it, else ``MCPError`` as the SDK
        raises it (an error answer; -32001 on timeout; -32000 when the connection closes).

        ``early`` is handed a result by the reader itself, when the answer is read and nothing of
        the call's (progress, the SDK's dispatch of lines read before it) must come first: a relay
        can pass it on one trip round the event loop before this task wakes to return it.
        ``issued``: the call ``issue`` wrote already (of this ``tool``), whose answer this awaits."""
        send = None
        if (
            issued is not None
            and issued.tool == tool
            and self._waiters.get(issued.request_id) is issued.waiter
        ):
            request_id, waiter = issued.request_id, issued.waiter
            waiter.early = early  # set before any answer can be read: this task runs first
        else:
            send = self._send
            if self.closed or send is None:
                raise connection_closed()
            request_id = f"{ID_PREFIX}{next(self._ids)}"
            waiter = self._waiters[request_id] = _Waiter(early)
        sent = False
        try:
            sent = True  # a write cut short may still have delivered: it counts as sent
            if send is not None:
                try:
                    await send(_request_line(request_id, tool, arguments))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    raise connection_closed() from None
            with anyio.move_on_after(timeout):
                outcome = await _answer(waiter, on_progress)
                if outcome is _CLOSED:
                    raise connection_closed()
                self.relayed += 1
                if isinstance(outcome, _RawError):
                    raise _mcp_error(outcome.code, outcome.message, outcome.data)
                result: dict[str, Any] = outcome
                return result
            sent = False  # the courtesy cancel goes out here, unshielded, as the SDK's does
            await self._cancel(request_id, f"timed out after {timeout}s", shield=False)
            raise _mcp_error(REQUEST_TIMEOUT, "Request 'tools/call' timed out")
        except anyio.get_cancelled_exc_class():
            if sent and not self.closed:
                await self._cancel(request_id, "caller cancelled", shield=True)
            raise
        finally:
            del self._waiters[request_id]

    async def _cancel(self, request_id: str, reason: str, *, shield: bool) -> None:
        send = self._send
        if send is None:
            return
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
        note["params"] = {"requestId": request_id, "reason": reason}  # type: ignore[assignment]
        with anyio.move_on_after(ABANDON_WRITE_S, shield=shield):
            try:
                await send(json.dumps(note, separators=(",", ":")).encode() + b"\n")
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # the connection is going: the server stops the work with it


# One encoder for every request (``json.dumps`` with options builds one per call).
_encode = json.JSONEncoder(separators=(",", ":")).encode
_REQUEST = (
    '{"jsonrpc":"2.0","id":"%s","method":"tools/call",'
    '"params":{"name":%s,"arguments":%s,"_meta":{"progressToken":"%s"}}}\n'
)


def _request_line(request_id: str, tool: str, arguments: dict[str, Any]) -> bytes:
    """The line ``json.dumps`` (compact) writes for ``{"jsonrpc": "2.0", "id": request_id,
    "method": "tools/call", "params": {"name": tool, "arguments": arguments, "_meta":
    {"progressToken": request_id}}}``, without building that message (``request_id`` is one of
    ours: nothing in it to escape)."""
    return (_REQUEST % (request_id, encode_basestring_ascii(tool), _encode(arguments), request_id)).encode()


CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
INTERNAL_ERROR = -32603


class _RawError:
    __slots__ = ("code", "data", "message")

    def __init__(self, code: int, message: str, data: Any) -> None:
        self.code, self.message, self.data = code, message, data


def connection_closed() -> Exception:
    return _mcp_error(CONNECTION_CLOSED, "Connection closed")


def _mcp_error(code: int, message: str, data: Any = None) -> Exception:
    # Imported where a call fails, not per call: a relayed call's hot path stays import-free.
    from mcp import MCPError

    return MCPError(code=code, message=message, data=data)


async def _answer(waiter: _Waiter, on_progress: SdkProgress) -> Any:
    """The call's outcome, relaying its progress meanwhile, in the order the server sent them."""
    while True:
        items = waiter.items
        if items:
            waiter.items = []
            for item in items:
                if type(item) is not tuple:
                    return item
                await on_progress(*item)
            continue
        # Armed before the wait: whatever the reader adds from here on wakes this one.
        wake = waiter.wake = anyio.Event()
        await wake.wait()


__all__ = [
    "ID_PREFIX",
    "Deliver",
    "Early",
    "Issued",
    "RawChannel",
    "SdkProgress",
    "connection_closed",
    "json_object",
]
