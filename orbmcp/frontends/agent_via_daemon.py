"""The agent protocol through the session daemon: a run or a completion of ``slash --stdio`` goes
to this configuration's daemon when one runs, so the agent shares its warm servers with the shell
and other agents (``daemon/agent_run.py`` is the daemon's side; its module docstring has the frames).

Each line has a connection of its own to a daemon ``session/daemon_trust.py`` verified (the one check every
client of the socket makes). The daemon's questions come back as ``ask`` frames and are asked of
the agent as the protocol's ``ask`` (with the agent's run id), its progress and notices as
``post`` frames; the agent's answers go back as ``answer`` frames. Cancelling the run (the agent's
``cancel``, or the agent gone) closes the connection, which cancels the line in the daemon.

Frames from the daemon are untrusted like everything else: unknown kinds and fields are dropped,
strings are bounded and escaped, the envelope is checked field by field. When no daemon answers
(none runs, another configuration, an older daemon), ``NoDaemon`` says why and the line runs in
the agent process's own session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import UNIXSocketStream

from orbmcp import environment
from orbmcp.errors import ConnectionFailed
from orbmcp.fastpath.argv import ProgramLine
from orbmcp.fastpath.daemon_client import request_frame
from orbmcp.session import daemon_protocol as protocol
from orbmcp.session.daemon_frames import FrameReader
from orbmcp.session.daemon_scope import current_scope, socket_path
from orbmcp.session.daemon_trust import UntrustedDaemon, connect_verified
from orbmcp.text import one_line, safe_text

if TYPE_CHECKING:
    from anyio.abc import ByteStream

    from orbmcp.session.agent_ui import AgentAsks
    from orbmcp.session.daemon_scope import Scope

CONNECT_TIMEOUT_S = 2.0
HELLO_TIMEOUT_S = 10.0  # a daemon that does not greet in this long is not used for this line
ASK_KINDS = frozenset({"form", "url", "confirm", "input"})
ERROR_CODES = frozenset(
    {"usage", "config", "connection", "protocol", "auth", "timeout", "tool", "interrupted", "internal"}
)
ITEM_KINDS = frozenset(
    {"command", "subcommand", "server", "tool", "prompt", "resource", "argument", "value", "option"}
)
MAX_ITEMS = 2000
MAX_BLOCKS = 1000
MAX_TEXT = 64 * 1024 * 1024


class NoDaemon(Exception):
    """The line was not run by a daemon (nothing was run): run it here. ``str`` says why."""


def _bounded(value: object, limit: int, *, multiline: bool = False) -> str | None:
    return safe_text(value, max_len=limit, multiline=multiline) if isinstance(value, str) else None


class DaemonLink:
    """This agent process's way to its configuration's daemon."""

    def __init__(self, *, project: Path | None, config_file: Path | None, environ: Mapping[str, str]) -> None:
        self._project = project
        self._config_file = config_file
        self._environ = environ
        self.pid: int | None = None  # the daemon that answered last

    def _scope(self, project: Path | None) -> Scope:
        return current_scope(project=project, config_file=self._config_file, environ=self._environ)

    def _argv(self, project: Path | None) -> list[str]:
        """The program options that name the scope, as a command line would carry them."""
        argv = ["--project", str(project)] if project is not None else []
        if self._config_file is not None:
            argv += ["--config", str(self._config_file)]
        return [*argv, "slash"]

    async def _open(self, scope: Scope) -> tuple[ByteStream, FrameReader, dict[str, Any]]:
        """A verified connection that has greeted us, and the daemon's hello."""
        path = socket_path(scope, self._environ)
        try:
            sock = connect_verified(path, timeout=CONNECT_TIMEOUT_S)
        except UntrustedDaemon as exc:
            raise NoDaemon(
                f"not using the session daemon at {one_line(exc.path)}: {one_line(exc.why)}"
            ) from None
        if sock is None:
            raise NoDaemon("no session daemon runs for this configuration")
        sock.setblocking(False)
        stream = await UNIXSocketStream.from_socket(sock.detach())  # anyio wraps the descriptor
        reader = FrameReader(stream)
        hello = None
        try:
            await stream.send(protocol.encode({"t": "hello", "protocol": protocol.PROTOCOL_VERSION}))
            with anyio.move_on_after(HELLO_TIMEOUT_S):
                hello = await reader.receive()
        except (OSError, anyio.BrokenResourceError, protocol.ProtocolError):
            hello = None
        if not hello or hello.get("t") != "hello" or hello.get("protocol") != protocol.PROTOCOL_VERSION:
            await stream.aclose()
            raise NoDaemon("the session daemon did not answer (or speaks another protocol version)")
        pid = hello.get("pid")
        self.pid = pid if isinstance(pid, int) and pid > 0 else None
        return stream, reader, hello

    async def probe(self) -> int | None:
        """The pid of the daemon that would serve this process's own project, or None."""
        try:
            stream, _reader, _hello = await self._open(self._scope(self._project))
        except NoDaemon:
            return None
        await stream.aclose()
        return self.pid

    async def request(
        self, op: str, rid: str, line: str, project: Path | None, asks: AgentAsks
    ) -> dict[str, Any]:
        """Run ``op`` (run, complete) of ``line`` in the daemon: the envelope of a run, or
        ``{"items": [...]}`` of a completion. ``NoDaemon`` when no daemon took the line;
        ``ConnectionFailed`` when the daemon went away while it ran."""
        scope = self._scope(project)
        stream, reader, hello = await self._open(scope)
        request = {**request_frame("agent", self._argv(project), hello, scope, self._environ), "op": op}
        request.update(line=line, run=rid, agent=asks.agent)
        answer: dict[str, Any] = {}
        failure: Exception | None = None  # raised outside the task group: no ExceptionGroup
        async with stream, anyio.create_task_group() as tg:
            relay = _Relay(stream, tg, rid, asks)
            try:
                try:
                    await relay.send(request)
                except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    raise NoDaemon("the session daemon closed the connection") from None
                answer = await relay.play(reader)
            except (NoDaemon, ConnectionFailed) as exc:
                failure = exc
            finally:
                tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return answer


class _Relay:
    """One line's frames from the daemon, turned into the agent's messages and back."""

    def __init__(self, stream: ByteStream, tg: Any, rid: str, asks: AgentAsks) -> None:
        self._stream = stream
        self._tg = tg
        self._rid = rid
        self._asks = asks
        self._lock = anyio.Lock()
        self._questions: dict[int, anyio.CancelScope] = {}
        self._heard = False  # a frame of the line's own: the line ran (or runs) in the daemon

    async def send(self, message: dict[str, Any]) -> None:
        async with self._lock:
            await self._stream.send(protocol.encode(message))

    async def play(self, reader: FrameReader) -> dict[str, Any]:
        while True:
            try:
                frame = await reader.receive()
            except protocol.ProtocolError:
                frame = None
            if frame is None:
                if not self._heard:
                    raise NoDaemon("the session daemon closed the connection")
                raise ConnectionFailed(
                    "the session daemon closed the connection before the command ended",
                    hint="run it again: without a daemon it runs in this process's own session",
                    reason="daemon_gone",
                )
            kind = frame["t"]
            if kind == "local":
                raise NoDaemon("the session daemon serves another configuration")
            if kind == "error" and not self._heard:
                raise NoDaemon(
                    f"the session daemon refused: {one_line(str(frame.get('message')), max_len=200)}"
                )
            self._heard = True
            if kind == "result":
                return envelope_from(frame.get("envelope"))
            if kind == "completions":
                return {"items": items_from(frame.get("items"))}
            if kind == "ask":
                self._ask(frame)
            elif kind == "ask_cancelled":
                qid = frame.get("id")
                if isinstance(qid, int) and qid in self._questions:
                    self._questions[qid].cancel()
            elif kind == "post":
                self._post(frame.get("message"))
            elif kind == "error":
                raise ConnectionFailed(
                    f"the session daemon failed: {one_line(str(frame.get('message')), max_len=300)}",
                    reason="daemon_error",
                )

    def _ask(self, frame: Mapping[str, Any]) -> None:
        qid = frame.get("id")
        if not isinstance(qid, int) or qid in self._questions or len(self._questions) >= 64:
            return
        scope = anyio.CancelScope()
        self._questions[qid] = scope
        self._tg.start_soon(self._relay_question, qid, frame, scope)

    async def _relay_question(self, qid: int, frame: Mapping[str, Any], scope: anyio.CancelScope) -> None:
        answer: dict[str, Any] | None = None
        try:
            with scope:
                kind = frame.get("kind")
                fields = ask_fields(kind, frame.get("fields"))
                if fields is not None:
                    assert isinstance(kind, str)
                    server = _bounded(frame.get("server"), 200)
                    message = _bounded(frame.get("message"), 4000, multiline=True) or ""
                    runs = frame["fields"].get("runs")
                    if isinstance(runs, list) and runs:  # one of these runs' (the agent keeps its own)
                        fields["runs"] = [r for r in runs[:64] if isinstance(r, str)]
                        answer = await self._asks.ask(None, kind, server, message, **fields)
                    else:
                        answer = await self._asks.ask(self._rid, kind, server, message, **fields)
        finally:
            self._questions.pop(qid, None)
        if not scope.cancelled_caught:
            kept = {k: answer[k] for k in ("action", "content", "value") if answer and k in answer}
            try:
                await self.send({"t": "answer", "id": qid, "answer": kept or {"action": "cancel"}})
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the daemon is gone: the line's end says so

    def _post(self, message: object) -> None:
        if not isinstance(message, dict):
            return
        kind = message.get("type")
        if kind == "notice":
            level = message.get("level")
            self._asks.post(
                {
                    "type": "notice",
                    "run": self._rid,
                    "level": level if level in ("info", "warning", "error") else "info",
                    "message": _bounded(message.get("message"), 4000, multiline=True) or "",
                }
            )
        elif kind == "progress":
            numbers = [message.get("progress"), message.get("total")]
            if not isinstance(numbers[0], int | float) or not isinstance(numbers[1], int | float | None):
                return
            self._asks.post(
                {
                    "type": "progress",
                    "run": self._rid,
                    "server": _bounded(message.get("server"), 200),
                    "tool": _bounded(message.get("tool"), 200),
                    "progress": numbers[0],
                    "total": numbers[1],
                    "message": _bounded(message.get("message"), 300),
                }
            )


def ask_fields(kind: object, fields: object) -> dict[str, Any] | None:
    """The fields of a question of ``kind`` (the protocol's, checked); None: not a question."""
    if kind not in ASK_KINDS or not isinstance(fields, dict):
        return None
    if kind == "form":
        schema = fields.get("schema")
        if not isinstance(schema, dict):
            return None
        errors = fields.get("errors")
        out: dict[str, Any] = {"schema": schema}
        if isinstance(errors, list) and errors:
            out["errors"] = [one_line(str(e), max_len=300) for e in errors[:50]]
        return out
    if kind == "url":
        url = fields.get("url")
        return {"url": one_line(url, max_len=4096)} if isinstance(url, str) else None
    if kind == "confirm":
        return {"detail": _bounded(fields.get("detail"), 10_000, multiline=True)}
    return {"secret": fields.get("secret") is not False}


def envelope_from(raw: object) -> dict[str, Any]:
    """The result envelope the daemon sent, checked: a field of the wrong kind is replaced."""
    body = raw if isinstance(raw, dict) else {}
    code = body.get("exit")
    exit_code = code if isinstance(code, int) and not isinstance(code, bool) and 0 <= code <= 255 else 70
    error = body.get("error")
    content = body.get("content")
    return {
        "exit": exit_code,
        "text": _bounded(body.get("text"), MAX_TEXT, multiline=True) or "",
        "json": body.get("json"),
        "error": _error_from(error) if error is not None else None,
        "content": [b for b in content[:MAX_BLOCKS] if isinstance(b, dict)]
        if isinstance(content, list)
        else [],
    }


def _error_from(error: object) -> dict[str, Any]:
    body = error if isinstance(error, dict) else {}
    code = body.get("code")
    return {
        "code": code if code in ERROR_CODES else "internal",
        "reason": _bounded(body.get("reason"), 100) or "daemon",
        "message": _bounded(body.get("message"), 2000) or "the session daemon sent no message",
        "hint": _bounded(body.get("hint"), 2000),
        "server": _bounded(body.get("server"), 200),
    }


def items_from(raw: object) -> list[dict[str, Any]]:
    """Completion items the daemon sent, checked (others dropped)."""
    items = []
    for item in raw[:MAX_ITEMS] if isinstance(raw, list) else []:
        if not isinstance(item, dict) or item.get("kind") not in ITEM_KINDS:
            continue
        value, start = item.get("value"), item.get("replace_from")
        if not isinstance(value, str) or not isinstance(start, int) or isinstance(start, bool) or start < 0:
            continue
        items.append(
            {
                "value": safe_text(value, max_len=4000),
                "description": _bounded(item.get("description"), 1000) or "",
                "kind": item["kind"],
                "replace_from": start,
            }
        )
    return items


def daemon_link(*, project: Path | None, config_file: Path | None) -> DaemonLink | None:
    """The link to this configuration's daemon; None when ``ORBMCP_NO_DAEMON`` or ``--no-daemon``
    says to keep the agent's own session."""
    if environment.no_daemon() or ProgramLine(sys.argv[1:]).no_daemon:
        return None
    return DaemonLink(project=project, config_file=config_file, environ=dict(os.environ))


__all__ = ["DaemonLink", "NoDaemon", "ask_fields", "daemon_link", "envelope_from", "items_from"]
