"""``orbmcp slash --stdio``: the agent protocol, version 1 (README "The agent protocol").

JSON Lines both ways on this process's stdin and stdout. The agent sends ``run``, ``cancel``,
``complete``, ``commands`` and ``answer``; orbmcp answers each with its ``id`` and, while a run is
in flight, sends ``ask`` (a server's question; ``session/agent_ui.py``), ``progress`` and
``notice``. Runs go concurrently, each in its own task with its own cancel scope. Everything the
agent sends is untrusted: a line over ``MAX_LINE_BYTES``, bad JSON, an unknown type, a missing
field or an answer to no question gets an ``error`` line, and the process goes on serving. When
stdin closes, every run is cancelled and the servers are stopped.

When a session daemon of this configuration runs (one this user's client trusts), each ``run``
and ``complete`` goes through it (``frontends/agent_via_daemon.py``): the agent shares its warm
servers with the shell and other agents, and the daemon's questions reach the agent as ``ask``.
Otherwise (no daemon, or it went away) the servers run in a persistent ``Sessions`` of this
process (one per project directory a run names with ``cwd``; the process's own project by
default), kept for its lifetime; a ``notice`` says so once each time the lines move here.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from contextlib import aclosing, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio

from orbmcp._version import __version__
from orbmcp.commands.context import CommandContext
from orbmcp.commands.slash_catalog import slash_catalog
from orbmcp.commands.table import find
from orbmcp.config.loader import load_config
from orbmcp.core.processes.pipes import PipeReceiveStream, PipeSendStream, claimed_stdio
from orbmcp.core.wire.lines import OverlongLine, read_lines_skipping
from orbmcp.errors import ConfigError, Interrupted, OrbError
from orbmcp.frontends.agent_via_daemon import DaemonLink, NoDaemon, daemon_link
from orbmcp.log import log_event
from orbmcp.render import present
from orbmcp.session.agent_reply import PROTOCOL_VERSION, error_envelope, internal_error, run_line
from orbmcp.session.agent_ui import AgentUI
from orbmcp.session.holder import PERSISTENT, Sessions
from orbmcp.session.runner import call_handler
from orbmcp.text import safe_text

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus

    from orbmcp.core.processes.pipes import PipeSendStream

MAX_LINE_BYTES = 1024 * 1024
MAX_ID_CHARS = 200
MAX_RUNS = 64  # runs in flight at once; more is an error, not a queue
ASK_TIMEOUT_S = 600.0  # a person filling a form in the agent's dialog
OUTBOX = 4096  # messages waiting for stdout; past it, progress and notices are dropped


class AgentSession:
    """One agent on one stdin/stdout pair: its runs, its open questions and the outbox."""

    def __init__(
        self,
        ctx: CommandContext,
        tg: TaskGroup,
        *,
        ask_timeout_s: float = ASK_TIMEOUT_S,
        link: DaemonLink | None = None,
    ) -> None:
        self._ctx = ctx
        self._link = link
        self._said_here = False  # the notice that lines run in this process's own session
        self._agent = os.urandom(8).hex()
        self._tg = tg
        self._ask_timeout_s = ask_timeout_s
        self._outbox, self._out_reader = anyio.create_memory_object_stream[bytes](OUTBOX)
        self._runs: dict[str, anyio.CancelScope] = {}
        self._questions: dict[str, tuple[anyio.Event, list[dict[str, Any]]]] = {}
        self._ids = itertools.count(1)
        self._sessions: dict[Path | None, Sessions] = {}
        self._opening = anyio.Lock()
        self._closing = anyio.Event()

    # -- the wire ----------------------------------------------------------------------------------

    @staticmethod
    def _encode(message: dict[str, Any]) -> bytes:
        return json.dumps(message, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass") + b"\n"

    async def send(self, message: dict[str, Any]) -> None:
        """Queue a message that must arrive (an answer, a question)."""
        try:
            await self._outbox.send(self._encode(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the agent is gone

    def post(self, message: dict[str, Any]) -> None:
        """Queue a message that may be dropped (progress, a notice) when the agent reads slowly."""
        with suppress(anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._outbox.send_nowait(self._encode(message))

    async def write_out(self, send: PipeSendStream) -> None:
        async with self._out_reader:
            async for data in self._out_reader:
                try:
                    await send.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    self._closing.set()  # nobody reads our answers: the agent is gone
                    return

    def error(self, request_id: object, reason: str, message: str) -> None:
        shown = request_id if isinstance(request_id, str) and len(request_id) <= MAX_ID_CHARS else None
        self.post(
            {"type": "error", "id": shown, "error": {"code": "usage", "reason": reason, "message": message}}
        )

    # -- questions ---------------------------------------------------------------------------------

    @property
    def agent(self) -> str:
        return self._agent

    async def ask(
        self, run: str | None, kind: str, server: str | None, message: str, **fields: Any
    ) -> dict[str, Any] | None:
        if run is None:  # one of these runs' question; runs that ended meanwhile are left out
            runs = [r for r in fields.pop("runs", ()) if isinstance(r, str) and r in self._runs]
            if len(runs) == 1:
                run = runs[0]
            else:
                fields["runs"] = runs
        qid = f"q{next(self._ids)}"
        event, box = anyio.Event(), list[dict[str, Any]]()
        self._questions[qid] = (event, box)
        question = {"type": "ask", "id": qid, "run": run, "kind": kind, "server": server}
        question["message"] = safe_text(message, max_len=4000, multiline=True)
        try:
            await self.send({**question, **fields})
            with anyio.move_on_after(self._ask_timeout_s):
                await event.wait()
        finally:
            self._questions.pop(qid, None)
            if not box:
                self.post({"type": "ask_cancelled", "id": qid})
        return box[0] if box else None

    def _answer(self, request: dict[str, Any]) -> None:
        waiting = self._questions.get(request["id"])
        if waiting is None:
            self.error(
                request["id"], "unknown-id", f"no open question has the id {str(request['id'])[:80]!r}"
            )
            return
        event, box = waiting
        box.append(request)
        event.set()

    # -- sessions ----------------------------------------------------------------------------------

    async def sessions_for(self, project: Path | None) -> Sessions:
        async with self._opening:
            found = self._sessions.get(project)
            if found is None:
                found = await self._tg.start(self._hold_session, project)
                self._sessions[project] = found
            return found

    async def _hold_session(self, project: Path | None, *, task_status: TaskStatus[Sessions]) -> None:
        """A session lives in a task of its own: a run that opened it may be cancelled."""
        config = load_config(project=project, config_file=self._ctx.config_file)
        async with Sessions(PERSISTENT, config, interactive=True) as sessions:
            task_status.started(sessions)
            await self._closing.wait()

    # -- requests ----------------------------------------------------------------------------------

    def handle(self, raw: bytes | OverlongLine) -> None:
        if isinstance(raw, OverlongLine):
            self.error(None, "too-long", f"a line of {raw.size} bytes is over the limit of {MAX_LINE_BYTES}")
            return
        if not raw.strip():
            return
        try:
            request = json.loads(raw)
        except (ValueError, RecursionError):
            self.error(None, "bad-json", "the line is not JSON")
            return
        if not isinstance(request, dict):
            self.error(None, "bad-json", "the line is not a JSON object")
            return
        kind, rid = request.get("type"), request.get("id")
        handler = self._HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            self.error(rid, "unknown-type", f"unknown message type {str(kind)[:40]!r}")
            return
        if not isinstance(rid, str) or not rid or len(rid) > MAX_ID_CHARS:
            self.error(
                rid, "missing-field", f"'{kind}' needs a string 'id' of up to {MAX_ID_CHARS} characters"
            )
            return
        handler(self, request)

    def _needs(self, request: dict[str, Any], field: str) -> str | None:
        value = request.get(field)
        if not isinstance(value, str):
            self.error(request["id"], "missing-field", f"'{request['type']}' needs a string '{field}'")
            return None
        return value

    def _run(self, request: dict[str, Any]) -> None:
        line = self._needs(request, "line")
        cwd = request.get("cwd")
        if line is None:
            return
        if cwd is not None and not isinstance(cwd, str):
            self.error(request["id"], "missing-field", "'cwd' must be a string (a directory)")
            return
        if request["id"] in self._runs:
            self.error(request["id"], "duplicate-id", "a run with this id is in flight")
            return
        if len(self._runs) >= MAX_RUNS:
            self.error(request["id"], "too-many-runs", f"{MAX_RUNS} runs are in flight; wait for one")
            return
        scope = anyio.CancelScope()
        self._runs[request["id"]] = scope
        self._tg.start_soon(self._run_line, request["id"], line, cwd, scope)

    async def _run_line(self, rid: str, line: str, cwd: str | None, scope: anyio.CancelScope) -> None:
        envelope: dict[str, Any] | None = None
        try:
            with scope:
                envelope = await self._line("run", rid, line, cwd)
        except OrbError as err:  # opening the session (the project's config), the daemon gone
            envelope = error_envelope(err)
        except Exception as exc:
            envelope = error_envelope(internal_error(exc))
        finally:
            self._runs.pop(rid, None)
        if envelope is None:
            envelope = error_envelope(Interrupted("cancelled by the agent", reason="cancelled"))
        await self.send({"type": "result", "id": rid, **envelope})

    async def _line(self, op: str, rid: str, line: str, cwd: str | None) -> dict[str, Any]:
        """A run's envelope, or a completion's ``{"items"}``: in the daemon when one takes the
        line, else in this process's own session."""
        project = self._project(cwd)
        if self._link is not None:
            try:
                answer = await self._link.request(op, rid, line, project, self)
            except NoDaemon as why:
                self._say_here(rid, str(why))
            else:
                self._said_here = False
                return answer
        ctx = await self._context(rid, project)
        if op == "complete":
            return {"items": await self._complete_here(ctx, line)}
        return await run_line(line, ctx)

    def _say_here(self, rid: str, why: str) -> None:
        if not self._said_here:
            self._said_here = True
            message = f"{why}: lines run in this process's own session (/mcp daemon start shares one)"
            self.post({"type": "notice", "run": rid, "level": "info", "message": message})

    def _project(self, cwd: str | None) -> Path | None:
        if cwd is None:
            return self._ctx.project
        path = Path(cwd)
        if not path.is_absolute() or not path.is_dir():
            raise ConfigError(f"cwd {cwd[:200]!r} is not an absolute path of a directory", reason="bad_cwd")
        return path

    async def _context(self, rid: str, project: Path | None) -> CommandContext:
        sessions = await self.sessions_for(project)
        ctx = CommandContext(
            ui=AgentUI(self, rid),
            sessions=sessions,
            project=project,
            config_file=self._ctx.config_file,
            front="slash",
            present=present,
        )
        ctx.set_config(sessions.config)
        return ctx

    def _cancel(self, request: dict[str, Any]) -> None:
        scope = self._runs.get(request["id"])
        if scope is None:
            self.error(request["id"], "unknown-id", "no run with this id is in flight")
            return
        scope.cancel()

    def _complete(self, request: dict[str, Any]) -> None:
        line = self._needs(request, "line")
        if line is not None:
            self._tg.start_soon(self._completions, request["id"], line)

    async def _completions(self, rid: str, line: str) -> None:
        items: list[Any] = []
        try:
            items = (await self._line("complete", rid, line, None))["items"]
        except Exception as exc:  # completion never breaks the agent's line
            log_event("agent.complete_failed", reason=type(exc).__name__)
        await self.send({"type": "completions", "id": rid, "items": items})

    @staticmethod
    async def _complete_here(ctx: CommandContext, line: str) -> list[Any]:
        spec = find(("complete",))  # its handler: frontends/handlers.py, bound by front_handlers.py
        assert spec is not None
        items: list[Any] = (await call_handler(spec, ctx, {"line": line})).to_json()["items"]
        return items

    def _commands(self, request: dict[str, Any]) -> None:
        self.post({"type": "commands", "id": request["id"], **slash_catalog().to_json()})

    _HANDLERS: ClassVar[dict[str, Callable[[AgentSession, dict[str, Any]], None]]] = {
        "run": _run,
        "cancel": _cancel,
        "complete": _complete,
        "commands": _commands,
        "answer": _answer,
    }

    async def close_outbox(self) -> None:
        await self._outbox.aclose()

    def close(self) -> None:
        """The agent closed stdin: every run and question ends, then the sessions."""
        for scope in list(self._runs.values()):
            scope.cancel()
        self._closing.set()


async def serve_agent(ctx: CommandContext) -> None:
    """Serve the agent protocol on this process's stdin and stdout until stdin closes."""
    with claimed_stdio() as (wire_in, wire_out):
        receive, send = PipeReceiveStream(os.dup(wire_in)), PipeSendStream(os.dup(wire_out))
        try:
            async with anyio.create_task_group() as outer:
                async with anyio.create_task_group() as tg:  # runs, completions, sessions
                    link = daemon_link(project=ctx.project, config_file=ctx.config_file)
                    session = AgentSession(ctx, tg, link=link)
                    outer.start_soon(session.write_out, send)
                    ready = {
                        "type": "ready",
                        "protocol": PROTOCOL_VERSION,
                        "orbmcp": __version__,
                        "daemon": await link.probe() if link is not None else None,
                    }
                    await session.send(ready)
                    async with aclosing(read_lines_skipping(receive, MAX_LINE_BYTES)) as lines:
                        async for raw in lines:
                            session.handle(raw)
                    session.close()
                # Every run has sent its result (a cancelled one, exit 130): the outbox may close.
                await session.close_outbox()
        finally:
            receive.close_now()
            send.close_now()


__all__ = ["MAX_LINE_BYTES", "AgentSession", "serve_agent"]
