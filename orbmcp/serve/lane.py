"""The fast lane of a one-agent wire (stdio, a daemon pipe): ``tools/call`` of a bridged tool goes
straight to its server.

An agent's most frequent request would otherwise cross the SDK's whole server pipeline (parsing
into models, dispatch, middleware, validation of the result against the spec's models once more)
on top of the call itself. Here the line is read with ``json``, the call is made on the session's
connection (``calls.call_tool_wire``, which relays it raw to a stdio server and takes the SDK's
client session elsewhere: ``core.tooling.call_paths``), and the server's result is written back as
it came, with progress relayed and ``notifications/cancelled`` honoured. Anything else (orbmcp's
own tools, an unknown name, a call before the handshake, a malformed request) takes the SDK's
path, which answers it the checked way.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp.commands.agent import error_result
from orbmcp.core.tooling.calls import call_tool_wire, issue_wire, owner_of
from orbmcp.core.wire.raw_channel import Issued, json_object
from orbmcp.errors import OrbError
from orbmcp.serve.asker import AgentAsker
from orbmcp.serve.peer import InFlight

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from orbmcp.core.tooling.registry import BridgedTool
    from orbmcp.serve.gateway import Gateway
    from orbmcp.serve.peer import Peer

Write = Callable[[bytes], Awaitable[None]]
# Writes a whole line now if the wire takes it without waiting (False: nothing written).
WriteNow = Callable[[bytes], bool]
# One encoder for every line (``json.dumps`` with options builds one per call): what json.dumps
# with these separators writes.
_encode = json.JSONEncoder(separators=(",", ":")).encode


class CallTasks:
    """The lane's call tasks, as asyncio tasks of its own: anyio's ``start_soon`` costs about 35 us
    a task (its task handle and bookkeeping; measured beside ``loop.create_task`` at about 8 us),
    a tenth of what serve spends on a relayed call (``bench/bench_serve.py``). As in a task group
    ``tg``: each task runs in a cancel scope of its own, which ``keep`` (a task of ``tg``) cancels
    when ``tg`` ends, so shielded steps (a courtesy cancel to the server) finish as they would
    there; it awaits them all; and a task that fails fails ``tg``."""

    def __init__(self, tg: TaskGroup) -> None:
        self._tasks: dict[asyncio.Task[None], anyio.CancelScope] = {}
        self._tg = tg
        self.closed = False  # ``tg`` is ending: the lane takes no more calls
        tg.start_soon(self.keep)

    def spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        scope = anyio.CancelScope()
        task = asyncio.get_running_loop().create_task(_within(scope, coro))
        self._tasks[task] = scope
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        del self._tasks[task]
        if not task.cancelled() and (error := task.exception()) is not None:
            self._tg.start_soon(_reraise, error)

    async def keep(self) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            self.closed = True
            with anyio.CancelScope(shield=True):
                # Until none is left: one may have been spawned before ``closed`` was set.
                while self._tasks:
                    for scope in self._tasks.values():
                        scope.cancel()
                    await asyncio.wait(list(self._tasks))  # each ends within its shielded steps' bounds


async def _within(scope: anyio.CancelScope, coro: Coroutine[Any, Any, None]) -> None:
    with scope:
        await coro


async def _reraise(error: BaseException) -> None:
    raise error


def _line(message: dict[str, Any]) -> bytes:
    return _encode(message).encode() + b"\n"


def _answer(request_id: int | str, result: dict[str, Any], raw: bytes | None = None) -> bytes:
    """The line ``_line({"jsonrpc": "2.0", "id": request_id, "result": result})`` writes; with
    ``raw``, the server's own text of that result in it (not encoded again)."""
    if raw is None:
        return _line({"jsonrpc": "2.0", "id": request_id, "result": result})
    rid = encode_basestring_ascii(request_id) if isinstance(request_id, str) else str(request_id)
    return b'{"jsonrpc":"2.0","id":' + rid.encode() + b',"result":' + raw + b"}\n"


class FastLane:
    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway
        self._write: Write | None = None
        self._write_now: WriteNow | None = None
        self._tasks: CallTasks | None = None
        self._running: dict[Any, anyio.CancelScope] = {}

    def attach(self, write: Write, tg: TaskGroup, write_now: WriteNow | None = None) -> None:
        self._write, self._write_now = write, write_now
        self._tasks = CallTasks(tg)

    def _peer(self) -> Peer | None:
        peers = self._gateway.peers
        if len(peers) != 1 or not peers[0].connection.initialized.is_set():
            return None
        return peers[0]

    def take(self, line: bytes) -> bool:
        """Handle ``line`` here (True), or leave it to the SDK (False)."""
        if self._tasks is None or self._tasks.closed:
            return False
        if b'"tools/call"' not in line and b'"notifications/cancelled"' not in line:
            return False
        message = json_object(line)
        if message is None:
            return False
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        method = message.get("method")
        if method == "notifications/cancelled":
            scope = self._running.get(params.get("requestId"))
            if scope is None:
                return False
            scope.cancel()
            return True
        request_id = message.get("id")
        if method != "tools/call" or isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return False
        name, arguments = params.get("name"), params.get("arguments")
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        peer = self._peer()
        tool = self._gateway.tool(name) if isinstance(name, str) else None
        if (
            peer is None
            or tool is None
            or not isinstance(arguments, dict | None)
            or request_id in self._running
        ):
            return False
        if not isinstance(token, int | str) or isinstance(token, bool):
            token = None
        arguments = dict(arguments or {})
        issued = self._issue(peer, tool, arguments)  # first: the server starts on it meanwhile
        self._running[request_id] = anyio.CancelScope()
        self._tasks.spawn(self._call(peer, request_id, tool, arguments, token, issued=issued))
        return True

    def _issue(self, peer: Peer, tool: BridgedTool, arguments: dict[str, Any]) -> Issued | None:
        """The call written to its server now, where it can be (``calls.issue_wire``): the server
        starts on it one trip round the event loop before the task below runs. Not before the
        agent's roots are known: the call waits for them (``Peer.roots_settled``)."""
        if not peer.roots_known.is_set():
            return None
        try:
            sup = owner_of(self._gateway.manager, tool)
        except OrbError:
            return None  # the task meets the same error and answers it
        return issue_wire(sup, tool.name, arguments)

    async def _call(
        self,
        peer: Peer,
        request_id: Any,
        tool: BridgedTool,
        arguments: dict[str, Any],
        token: Any,
        *,
        issued: Issued | None = None,
    ) -> None:
        write = self._write
        assert write is not None

        async def progress(value: float, total: float | None, message: str | None) -> None:
            params: dict[str, Any] = {"progressToken": token, "progress": value}
            if total is not None:
                params["total"] = total
            if message:
                params["message"] = message
            await write(_line({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}))

        written = False

        def deliver(result: dict[str, Any], raw: bytes | None) -> bool:
            # From the server's reader, as the answer is read: a request the agent cancelled gets
            # no answer; anything else goes out now, not one trip round the event loop later.
            nonlocal written
            scope = self._running.get(request_id)
            if self._write_now is None or scope is None or scope.cancel_called:
                return False
            written = self._write_now(_answer(request_id, result, raw))
            return written

        call = InFlight(tool.server, None, request_id)
        peer.calls.append(call)
        peer.touch()
        result: dict[str, Any] | None = None
        try:
            with self._running[request_id]:
                try:
                    sup = owner_of(self._gateway.manager, tool)
                    await peer.roots_settled()
                    asker = AgentAsker(peer, call, self._gateway.hub.asker)
                    result = await call_tool_wire(
                        sup,
                        tool.name,
                        arguments,
                        progress=progress if token is not None else None,
                        asker=asker,
                        deliver=deliver,
                        issued=issued,
                    )
                except OrbError as err:
                    result = error_result(err).to_json()
        finally:
            peer.calls.remove(call)
            del self._running[request_id]
            if issued is not None:
                issued.abandon()  # a call that failed before it waited (a no-op after a wait)
        if written:  # answered from the reader; what the wire did not take goes out now
            await write(b"")
        elif result is not None:  # a cancelled request gets no answer
            await write(_answer(request_id, result))
