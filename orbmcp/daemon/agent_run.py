"""An agent-protocol request inside the daemon: ``orbmcp slash --stdio`` runs its lines here.

The agent's process (``frontends/agent_via_daemon.py``) sends one ``agent`` request per line on a
connection of its own: ``{"t": "agent", "op": "run" | "complete", "line", "run", "agent",
"argv", "cwd", "env", "envDigests", "envSalt"}`` (``run``: the agent's id of the run; ``agent``:
which agent process; ``argv`` holds only the program options that pick the scope). The line
runs in the session of its directory, as the agent protocol runs it in a session of its own
(``agent_reply.run_line``: the same envelope), with an ``AgentUI`` whose questions are frames:

- daemon -> client: ``ask`` ``{"id", "kind", "server", "message", "fields"}`` (a server's
  question, as the protocol's ``ask`` says it; ``fields.runs``: the agent's runs it may be for,
  when it names no request and several of them wait on its server), ``ask_cancelled``
  ``{"id"}`` (no longer waited for), ``post`` ``{"message"}`` (progress or a notice), then the
  last frame: ``result`` ``{"envelope"}`` or ``completions`` ``{"items"}``; ``local`` when the
  line is not this daemon's (another configuration).
- client -> daemon: ``answer`` ``{"id", "answer"}`` (the agent's answer), ``cancel``. The client
  closing the connection cancels the line too: that is how a cancelled run or a dropped agent
  reaches the daemon's side.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from orbmcp import log
from orbmcp.fastpath.argv import ProgramLine
from orbmcp.session import daemon_protocol as protocol

if TYPE_CHECKING:
    from orbmcp.commands.context import CommandContext
    from orbmcp.daemon.remote import Answers
    from orbmcp.session.daemon_frames import FrameReader, FrameWriter

ASK_TIMEOUT_S = 660.0  # the agent's own wait (600 s) decides; this only bounds a silent client
MAX_LINE_CHARS = 1024 * 1024
OPS = ("run", "complete")


class Connection(Protocol):
    """What an agent line uses of its daemon connection (``daemon/connection.py`` imports this
    module, so the type is spelled here rather than imported back)."""

    @property
    def reader(self) -> FrameReader: ...

    @property
    def writer(self) -> FrameWriter: ...

    @property
    def answers(self) -> Answers: ...

    @property
    def daemon(self) -> Any: ...  # daemon/server.py's Daemon: its scope, sessions and counters


class RemoteAsks:
    """``frontends.agent_ui.AgentAsks`` over a connection: a question is an ``ask`` frame and
    waits for the client's ``answer`` frame (bounded; the client leaving ends every wait)."""

    def __init__(self, conn: Connection, agent: str, *, timeout_s: float = ASK_TIMEOUT_S) -> None:
        self._conn = conn
        self._agent = agent
        self._timeout_s = timeout_s

    @property
    def agent(self) -> str:
        """The agent process the line came from: its runs waiting on one server may be asked
        together (``AgentUI.joint``), each on its own connection."""
        return self._agent

    async def ask(
        self, run: str | None, kind: str, server: str | None, message: str, **fields: Any
    ) -> dict[str, Any] | None:
        qid, event, box = self._conn.answers.open()
        self._conn.writer.send_nowait(
            {"t": "ask", "id": qid, "kind": kind, "server": server, "message": message, "fields": fields}
        )
        try:
            with anyio.move_on_after(self._timeout_s):
                await event.wait()
        finally:
            if not box:
                self._conn.answers.forget(qid)
                self._conn.writer.send_nowait({"t": "ask_cancelled", "id": qid})
        answer = box[0].get("answer") if box else None
        return answer if isinstance(answer, dict) else None

    def post(self, message: dict[str, Any]) -> None:
        self._conn.writer.send_nowait({"t": "post", "message": message})


async def agent_request(conn: Connection, request: Mapping[str, Any]) -> None:
    """Serve one ``agent`` request (see the module docstring)."""
    op, line, argv = request.get("op"), request.get("line"), request.get("argv")
    if (
        op not in OPS
        or not isinstance(line, str)
        or len(line) > MAX_LINE_CHARS
        or not isinstance(argv, list)
        or not all(isinstance(a, str) for a in argv)
    ):
        raise protocol.ProtocolError("an agent request needs op (run or complete), line and argv")
    scope = conn.daemon.scope_of(ProgramLine(argv), request)
    if scope.key != conn.daemon.scope.key:
        conn.writer.send_nowait({"t": "local"})  # another configuration: the agent's own session
        return
    conn.daemon.clients_served += 1
    conn.daemon.agent_requests += 1
    answer: dict[str, Any] | None = None
    with anyio.CancelScope() as cancel:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_client, conn, cancel)
            try:
                answer = await _answer(conn, request, op, line, scope)
            finally:
                tg.cancel_scope.cancel()
    if answer is not None:
        conn.writer.send_nowait(answer)


async def _answer(
    conn: Connection, request: Mapping[str, Any], op: str, line: str, scope: Any
) -> dict[str, Any]:
    from orbmcp.errors import OrbError
    from orbmcp.session.agent_reply import error_envelope, internal_error, run_line

    agent, run = request.get("agent"), request.get("run")
    asks = RemoteAsks(conn, agent[:100] if isinstance(agent, str) and agent else f"connection-{id(conn)}")
    try:
        ctx = await _context(conn, request, scope, asks, run[:200] if isinstance(run, str) else "daemon")
    except OrbError as err:  # the session of the directory (its project's configuration)
        if op == "complete":
            return {"t": "completions", "items": []}
        return {"t": "result", "envelope": error_envelope(err)}
    except Exception as exc:
        if op == "complete":
            return {"t": "completions", "items": []}
        return {"t": "result", "envelope": error_envelope(internal_error(exc))}
    if op == "complete":
        return {"t": "completions", "items": await _completions(ctx, line)}
    return {"t": "result", "envelope": await run_line(line, ctx)}


async def _context(
    conn: Connection, request: Mapping[str, Any], scope: Any, asks: RemoteAsks, run: str
) -> CommandContext:
    """The command context of the line: the session of its directory, brought up to date with the
    config files (their warnings and the client's variable drift said as notices)."""
    from orbmcp.commands.context import CommandContext
    from orbmcp.commands.spelling import spell_for
    from orbmcp.errors import cmd
    from orbmcp.render import present
    from orbmcp.session.agent_ui import AgentUI

    session = await conn.daemon.sessions.session_for(scope)
    config = await session.refresh()
    notes = list(config.warnings) if config is not None else []
    digests, salt = request.get("envDigests"), str(request.get("envSalt", ""))[:200]
    for name in session.env_drift(digests if isinstance(digests, dict) else {}, salt):
        notes.append(
            f"${name} differs from the value the session daemon started with; "
            f"run {spell_for(cmd('daemon', 'restart'), 'slash')} to use yours"
        )
    ui = AgentUI(asks, run)
    for note in notes:
        ui.notify(note, level="warning")
    ctx = CommandContext(
        ui=ui,
        sessions=session.sessions,
        project=Path(scope.project_dir),
        config_file=None if session.scope.config_file is None else Path(session.scope.config_file),
        front="slash",
        present=present,
    )
    ctx.set_config(session.config)
    return ctx


async def _completions(ctx: CommandContext, line: str) -> list[Any]:
    from orbmcp.commands.table import find
    from orbmcp.session.runner import call_handler

    spec = find(("complete",))  # its handler: frontends/handlers.py, bound by front_handlers.py
    assert spec is not None
    try:
        items: list[Any] = (await call_handler(spec, ctx, {"line": line})).to_json()["items"]
    except Exception as exc:  # completion never breaks the agent's line
        log.log_event("agent.complete_failed", reason=type(exc).__name__)
        return []
    return items


async def _watch_client(conn: Connection, cancel: anyio.CancelScope) -> None:
    """Frames the client sends while its line runs: answers, a cancel; EOF cancels."""
    while True:
        try:
            message = await conn.reader.receive()
        except protocol.ProtocolError:
            message = None
        if message is None or message["t"] == "cancel":
            conn.answers.abandon()
            cancel.cancel()
            return
        if message["t"] == "answer":
            conn.answers.deliver(message)


__all__ = ["RemoteAsks", "agent_request"]
