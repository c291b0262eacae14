"""One client connection to the daemon: the greeting, then one request (a command, status, stop).

A command runs through the same command table, handlers, renderers and error boundary as a one-shot
run, on the client's terminal (``RemoteConsole``), in the daemon's live session. A ``cancel``
frame (the client's Ctrl-C) or the client going away cancels that command only.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.abc import ByteStream

from orbmcp import environment, log
from orbmcp._version import __version__
from orbmcp.commands import adhoc
from orbmcp.commands.complete import resolve, shell_commands
from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.spec import CommandSpec
from orbmcp.daemon.agent_run import agent_request
from orbmcp.daemon.remote import STDIN_LIMIT, Answers, RemoteConsole
from orbmcp.errors import Interrupted, OrbError
from orbmcp.fastpath.argv import ProgramLine, runs_in_daemon
from orbmcp.render import render_to_terminal
from orbmcp.session import daemon_protocol as protocol
from orbmcp.session import requests
from orbmcp.session.command_line import parse_words
from orbmcp.session.daemon_frames import FrameReader, FrameWriter
from orbmcp.session.runner import call_handler, report_failure, shell_context
from orbmcp.session.terminal import TerminalUI

if TYPE_CHECKING:
    from orbmcp.daemon.session import DaemonSession
    from orbmcp.session.daemon_scope import Scope


class Daemon(Protocol):
    """What a connection uses of its daemon (``daemon.server``, which accepts the connections)."""

    scope: Scope
    socket_file: Path
    hello_timeout_s: float
    clients_served: int
    sessions: Any  # SessionMap, once serving
    writers: set[Any]  # each connection's FrameWriter

    @property
    def session(self) -> Any: ...

    def begin_request(self, connection: Any) -> None: ...

    def request_stop(self, reason: str) -> None: ...

    def status(self) -> dict[str, Any]: ...

    def scope_of(self, line: ProgramLine, request: Mapping[str, Any]) -> Scope: ...


class Connection:
    def __init__(self, daemon: Daemon, stream: ByteStream) -> None:
        self.daemon = daemon
        self.stream = stream
        self.reader = FrameReader(stream)
        self.writer = FrameWriter(stream, spool_dir=str(daemon.socket_file.parent))
        self.answers = Answers()
        self._request: Mapping[str, Any] = {}
        self.counted = False  # set by ``Daemon.begin_request``

    async def serve(self) -> None:
        self.daemon.writers.add(self.writer)
        try:
            await self._serve()
        finally:
            self.daemon.writers.discard(self.writer)

    async def _serve(self) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.writer.run)
            try:
                await self._conversation()
            except (protocol.ProtocolError, requests.BadRequest) as exc:
                log.log_event("daemon.bad_frame", level="warn", reason=str(exc))
                self.writer.send_nowait({"t": "error", "message": str(exc)})
            finally:
                self.answers.abandon()
                self.writer.close()

    async def _opening(self) -> dict[str, Any] | None:
        """The next frame of the opening (hello, request), or None when the client closed or
        took longer than the daemon's hello timeout: a silent connection does not hold a slot."""
        with anyio.move_on_after(self.daemon.hello_timeout_s):
            return await self.reader.receive()
        log.log_event("daemon.silent_client", level="warn", ms=round(self.daemon.hello_timeout_s * 1000))
        return None

    async def _conversation(self) -> None:
        hello = await self._opening()
        if hello is None:
            return
        if hello.get("t") != "hello":
            raise protocol.ProtocolError("expected a hello frame first")
        sessions = self.daemon.sessions
        session = self.daemon.session
        self.writer.send_nowait(
            {
                "t": "hello",
                "protocol": protocol.PROTOCOL_VERSION,
                "version": __version__,
                "pid": os.getpid(),
                "env": sessions.referenced_variables() if sessions is not None else [],
                "nonce": sessions.nonce if sessions is not None else "",
            }
        )
        if hello.get("protocol") != protocol.PROTOCOL_VERSION:
            return  # the client restarts us or runs one-shot
        request = await self._opening()
        if request is None:
            return
        self.daemon.begin_request(self)
        kind = request["t"]
        if kind == "run":
            await self._run(request)
        elif kind == "status":
            if request.get("settled") and session is not None:
                # `daemon start` reports the eager servers' first attempts, as a one-shot status would.
                await session.sessions.wait_eager()
            self.writer.send_nowait({"t": "status", **self.daemon.status()})
        elif kind == "stop":
            self.writer.send_nowait({"t": "stopping", "pid": os.getpid()})
            self.daemon.request_stop("a client asked")
        elif kind == "agent":
            await agent_request(self, request)
        elif kind == "ping":
            self.writer.send_nowait({"t": "pong"})
        elif (handler := requests.handler_for(kind)) is not None:
            await handler(self, request)  # registered by another front (serve's `serve`)
        else:
            raise protocol.ProtocolError(f"unknown request type {kind!r}")

    # -- a command -------------------------------------------------------------------------------

    async def _run(self, request: dict[str, Any]) -> None:
        self._request = request
        prepared = self._prepare(request)
        if prepared is None:
            self.writer.send_nowait({"t": "local"})
            return
        self.daemon.clients_served += 1
        if prepared.error is not None:
            console = self.console(request)
            code = report_failure(prepared.error, console=console, json_output=prepared.json_output)
        else:
            code = await self._execute(prepared, request)
        self.writer.send_nowait({"t": "exit", "code": code})

    def _prepare(self, request: Mapping[str, Any]) -> Prepared | None:
        """The command of this argv, bound by the parser of every front (a usage error is the
        one the shell front would show); None: run it one-shot (help, a line that names no
        command the daemon runs, or another scope)."""
        argv = request.get("argv")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise protocol.ProtocolError("a run request needs argv, a list of strings")
        line = ProgramLine(argv)
        if line.help or line.no_daemon:
            return None
        try:
            inv = parse_words(line.words, front="cli")
        except OrbError as err:
            return self._refused(line, request, err)
        if inv.help or not runs_in_daemon(inv.spec.path) or adhoc.requested(inv.kwargs):
            return None  # an ad-hoc server runs one-shot, never in the shared session
        scope = self.daemon.scope_of(line, request)
        if scope.key != self.daemon.scope.key:
            return None  # another user's configuration (global dir, --config): not this daemon's
        client_env = _strings(request.get("env"))
        if "-" in line.words and environment.max_input_bytes(client_env) > STDIN_LIMIT:
            return None  # the client allows more stdin than one frame carries: one-shot reads it
        if environment.stated_settings(client_env) != environment.stated_settings():
            return None  # the client states other settings (ORBMCP_LOCK, ...) than the daemon: one-shot
        no_color = line.no_color or environment.no_color(client_env)
        json_output = line.json or bool(inv.kwargs.get("json"))
        if "json" in inv.kwargs:
            inv.kwargs["json"] = json_output
        return Prepared(inv.spec, inv.kwargs, json_output, no_color, scope)

    def _refused(self, line: ProgramLine, request: Mapping[str, Any], err: OrbError) -> Prepared | None:
        """A usage error in a command this daemon runs is answered here, as one-shot words it."""
        spec, _n = resolve(shell_commands(), line.words)
        if spec is None or not runs_in_daemon(spec.path):
            return None
        scope = self.daemon.scope_of(line, request)
        if scope.key != self.daemon.scope.key:
            return None
        json_output = line.json or "--json" in line.words
        return Prepared(spec, {}, json_output, line.no_color, scope, error=err)

    # -- what a registered request handler uses (session.requests.DaemonRequest) -----------------

    @property
    def global_dir(self) -> str:
        return self.daemon.scope.global_dir

    def in_scope(self, line: ProgramLine, request: Mapping[str, Any]) -> bool:
        """The line's configuration is this daemon's (not another global dir or --config)."""
        return self.daemon.scope_of(line, request).key == self.daemon.scope.key

    def served(self) -> None:
        self.daemon.clients_served += 1

    async def session_of(self, line: ProgramLine, request: Mapping[str, Any]) -> DaemonSession:
        session: DaemonSession = await self.daemon.sessions.session_for(self.daemon.scope_of(line, request))
        return session

    def console(self, request: Mapping[str, Any]) -> RemoteConsole:
        """The client's terminal, as its request describes it."""
        return RemoteConsole(
            self.writer,
            self.answers,
            tty=_mapping(request.get("tty")),
            env=_strings(request.get("env")),
            columns=request.get("columns") if isinstance(request.get("columns"), int) else None,
            input_limit=environment.max_input_bytes(_strings(request.get("env"))),
        )

    async def _execute(self, prepared: Prepared, request: Mapping[str, Any]) -> int:
        json_output, no_color = prepared.json_output, prepared.no_color
        console = self.console(request)
        cancelled: list[str] = []
        outcome: list[Any] = []
        error: list[BaseException] = []
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch_client, scope, cancelled)
                try:
                    outcome.append(await self._call(prepared, console))
                except Exception as exc:  # raised again outside the task group: no ExceptionGroup
                    error.append(exc)
                tg.cancel_scope.cancel()
        failure: BaseException | None = error[0] if error else None
        if scope.cancelled_caught or (cancelled and not outcome):
            why = cancelled[0] if cancelled else "SIGINT"
            failure = Interrupted(f"interrupted by {why}; the session daemon keeps its servers running")
        try:
            if failure is None:
                return render_to_terminal(
                    outcome[0], json_output=json_output, no_color=no_color, console=console
                )
            return report_failure(failure, console=console, json_output=json_output)
        except Exception as exc:
            try:
                return report_failure(exc, console=console, json_output=json_output)
            except Exception:
                return int(ExitCode.INTERNAL)

    async def _call(self, prepared: Prepared, console: RemoteConsole) -> Any:
        """Bring the session of the command's directory up to date with the config files, then
        run the handler."""

        session = await self.daemon.sessions.session_for(prepared.scope)
        config = await session.refresh()
        if config is not None:
            for warning in config.warnings:
                console.write_err(f"orbmcp: warning: {warning}\n")
        salt = str(self._request.get("envSalt", ""))[:200]
        for name in session.env_drift(_mapping(self._request.get("envDigests")), salt):
            console.write_err(
                f"orbmcp: warning: ${name} differs from the value the session daemon started with; "
                "run `orbmcp daemon restart` to use yours\n"
            )
        ctx = shell_context(
            console=console,
            sessions=session.sessions,
            project=Path(prepared.scope.project_dir),
            config_file=None if session.scope.config_file is None else Path(session.scope.config_file),
            json_output=prepared.json_output,
            no_color=prepared.no_color,
        )
        ctx.set_config(session.config)
        try:
            return await call_handler(prepared.spec, ctx, prepared.kwargs)
        finally:
            if isinstance(ctx.ui, TerminalUI):
                ctx.ui.end_progress()

    async def _watch_client(self, scope: anyio.CancelScope, cancelled: list[str]) -> None:
        """Frames the client sends while its command runs: answers, stdin, a cancel; EOF cancels."""
        while True:
            try:
                message = await self.reader.receive()
            except protocol.ProtocolError:
                message = None
            if message is None:
                cancelled.append("the client leaving")
                self.answers.abandon()
                scope.cancel()
                return
            kind = message["t"]
            if kind in ("answer", "stdin"):
                self.answers.deliver(message)
            elif kind == "cancel":
                sig = message.get("signal")
                cancelled.append(
                    sig if isinstance(sig, str) and sig in signal.Signals.__members__ else "SIGINT"
                )
                self.answers.abandon()
                scope.cancel()
                return


@dataclass(frozen=True)
class Prepared:
    """A command line bound by the one parser of every front, and its output mode."""

    spec: CommandSpec
    kwargs: dict[str, Any]
    json_output: bool
    no_color: bool
    scope: Scope  # the command's: its project dir picks its session
    error: OrbError | None = None  # a usage error, shown instead of running the command


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in list(value.items())[:1000] if isinstance(v, str)}
