"""One supervisor per server: it owns the process, transport and SDK session.

An SDK session must be closed by the task that opened it, so every connection lives inside
``_lifecycle``, a task of the manager's task group. Other tasks only *ask*: ``start``/``stop``/
``reconnect`` set flags and cancel scopes; calls use the live client but report a dead connection
back here (``connection_lost``), which deactivates the server's tools at once.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp.core.capabilities.askers import asked_by_nobody
from orbmcp.core.capabilities.client_side import ClientSide
from orbmcp.core.processes.exits import STDERR_WAIT_S, ExitRace, exit_text
from orbmcp.core.processes.stderr_tail import StderrTail
from orbmcp.core.session.classify import classify_error
from orbmcp.core.session.discovery import list_tools
from orbmcp.core.session.state import Snapshot, State, effective_max_retries, retry_delay
from orbmcp.core.tooling import toolcache
from orbmcp.core.wire.connect import Connection, HttpResponses, ProcessExit, SessionCallbacks, open_client
from orbmcp.errors import AuthError, ConnectionFailed, OrbError, TimeoutFailed, cmd
from orbmcp.log import log_event

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from orbmcp.config.model import ServerConfig
    from orbmcp.config.settings import Settings
    from orbmcp.core.processes.process import ManagedProcess
    from orbmcp.core.session.runtime import Runtime
    from orbmcp.core.tooling.listings import ToolListingSalvage
    from orbmcp.core.wire.raw_channel import RawChannel


class Supervisor:
    def __init__(self, cfg: ServerConfig, settings: Settings, runtime: Runtime) -> None:
        self.cfg = cfg
        self.settings = settings
        self.runtime = runtime
        self.snap = Snapshot()
        self._state_since = time.monotonic()  # the debug log's ``ms``: time in the current state
        self.client: Any = None  # mcp.Client while ready
        self.listings: ToolListingSalvage | None = None  # the connection's raw tool listings
        self.process: ManagedProcess | None = None
        self.raw_channel: RawChannel | None = None  # a stdio connection's raw side, while it lives
        self.stderr: StderrTail | None = None
        self._scope: anyio.CancelScope | None = None
        self._done: anyio.Event | None = None
        self._settled = anyio.Event()
        self._lost = anyio.Event()
        self._rediscover = anyio.Event()
        self._want_running = False
        self._retry_wait: anyio.CancelScope | None = None
        self.http = HttpResponses()  # what the current connection attempt's responses said
        self.exit = ProcessExit()  # how the current attempt's stdio server ended by itself
        self._exit_race = ExitRace()  # its exit before ready ends the attempt at once
        self._stderr_mark = 0  # the stderr tail's ``committed`` when the current attempt began
        self._auth_challenge: str | None = None
        self._lost_reason = "connection_closed"
        # Why orbmcp stopped it (a config change): what the requests that stop cut short say.
        self.stopped_because: str | None = None
        # Answers the server's own requests (elicitation, sampling, roots), keeps its log messages.
        self.client_side = ClientSide(
            cfg.name, runtime, roots=lambda: runtime.roots_for(self.cfg), output=self._output_line
        )

    # -- queries ---------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.cfg.name

    @property
    def state(self) -> State:
        return self.snap.state

    @property
    def running(self) -> bool:
        return self._done is not None and not self._done.is_set()

    @property
    def max_retries(self) -> int:
        return effective_max_retries(self.cfg.max_retries)

    def stderr_tail(self) -> list[str]:
        return self.stderr.lines() if self.stderr is not None else []

    def attempt_stderr(self) -> list[str]:
        """What the current (or last) connection attempt's process wrote to stderr."""
        return self.stderr.lines_since(self._stderr_mark) if self.stderr is not None else []

    def _output_line(self, line: str) -> None:
        if self.stderr is None:
            self.stderr = StderrTail(redact=self.runtime.redact)
        self.stderr.add_line(line)

    # -- control (any task) ----------------------------------------------------------------------

    def start(self, tg: TaskGroup) -> None:
        """Begin connecting unless already running; ``wait_settled`` tells the outcome."""
        if self.running:
            return
        self._want_running = True
        self.stopped_because = None
        self._settled = anyio.Event()
        self._done = anyio.Event()
        tg.start_soon(self._lifecycle, name=f"orbmcp:{self.name}")

    async def wait_settled(self) -> State:
        await self._settled.wait()
        return self.snap.state

    async def stop(self, *, because: str | None = None) -> None:
        self.stopped_because = because
        self._want_running = False
        if self._scope is not None:
            self._scope.cancel()
        if self._done is not None:
            await self._done.wait()

    def retry_now(self) -> bool:
        """A person asked to start a server that waits for its next retry: try at once.

        Returns True when a wait was cut short; ``wait_settled`` then reports that new attempt.
        """
        wait = self._retry_wait
        if wait is None:
            return False
        self._settled = anyio.Event()
        wait.cancel()
        return True

    @property
    def auth_challenge(self) -> str | None:
        """Why the server refused the token on this connection (redacted), if it did."""
        return self._auth_challenge

    def connection_lost(self, message: str, *, reason: str = "connection_closed") -> None:
        """A request saw the connection die: deactivate tools now, reconnect in the owner task.
        ``message`` becomes the server's last error; ``reason`` the machine reason of the loss."""
        self.runtime.tools.set_server_active(self.name, False)
        self.snap.last_error = self.runtime.redact(message)
        if not self._lost.is_set():
            self._lost_reason = reason
        if not self._lost.is_set() and self.snap.state == State.READY:
            # Whoever asks next must wait for what the owner task makes of the loss, not be told
            # "ready" by a state it has not updated yet.
            self._settled = anyio.Event()
        self._lost.set()

    @property
    def loss(self) -> tuple[str, str] | None:
        """(message, reason) of a connection that died under requests, once the supervisor knows
        why (a line over the size cap, the process exited); None while it is connected."""
        if not self._lost.is_set() or self.snap.last_error is None:
            return None
        return self.snap.last_error, self._lost_reason

    @property
    def connected(self) -> bool:
        """Ready, and no request has seen the connection die since."""
        return self.snap.state == State.READY and not self._lost.is_set()

    def roots_changed(self) -> bool:
        """The roots this server is told changed. A connection that was offered roots is told (in
        the background). True when the capability itself must change (roots given to a connection
        made without them, or taken from one made with them): only a new connection can say so,
        and the caller reconnects the server."""
        tg = self.runtime.tg
        if not self.connected or self.client is None or tg is None:
            return False
        offered = "roots" in (self.snap.advertised or {})
        if offered != self.client_side.offers_roots():
            return True
        if offered:
            tg.start_soon(self.client_side.roots_changed, self.client, self.snap.protocol_version)
        return False

    def request_rediscovery(self) -> None:
        self._rediscover.set()

    def auth_challenged(self, message: str) -> None:
        """A 401 / 403 insufficient_scope the provider could not resolve: the server needs auth."""
        self._auth_challenge = self.runtime.redact(message)
        if self.snap.state == State.READY:
            self.connection_lost(message, reason="auth_required")

    def warn(self, message: str) -> None:
        """Record a warning about this server (redacted, each text once), shown with its status."""
        clean = self.runtime.redact(message)
        if clean in self.snap.warnings:
            return  # a re-discovery or reconnect repeating itself adds nothing
        self.snap.warnings.append(clean)
        log_event("server.warning", level="warn", server=self.name, message=message)

    # -- the owner task --------------------------------------------------------------------------

    async def _lifecycle(self) -> None:
        asked_by_nobody()  # started from a command's task: the questions this task hears are not its
        done = self._done
        assert done is not None
        attempt = 0
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                while self._want_running:
                    try:
                        await self._connect_and_serve()
                        attempt = 0  # a once-healthy server starts its schedule afresh
                        self.snap.retries = 0
                    except AuthError as err:
                        # Retrying cannot fix credentials. needs-auth only where `orbmcp auth` can
                        # help (OAuth configured); a 401 to static headers or none is a failure.
                        self._set_error(err)
                        self._set_state(State.NEEDS_AUTH if self.cfg.auth is not None else State.FAILED)
                        self._settled.set()
                        return
                    except OrbError as err:
                        if self.snap.state == State.READY:
                            attempt = 0  # it was healthy until this loss: the schedule starts afresh
                        self._set_error(err)
                    if not self._want_running:
                        break
                    if not self.runtime.retries_enabled or attempt >= self.max_retries:
                        self._set_state(State.FAILED)
                        self._settled.set()
                        return
                    attempt += 1
                    self.snap.retries = attempt
                    delay = retry_delay(attempt)
                    self._set_state(State.STARTING)
                    # The try has settled: whoever waits for it (start_eager at a host's start-up)
                    # must not sit out the whole schedule; retries go on in the background.
                    self._settled.set()
                    log_event(
                        "server.retry",
                        server=self.name,
                        attempt=attempt,
                        delay_ms=int(delay * 1000),
                        max_retries=self.max_retries,
                    )
                    with anyio.CancelScope() as wait:
                        self._retry_wait = wait
                        self.snap.retry_at = time.time() + delay
                        try:
                            await anyio.sleep(delay)
                        finally:
                            self.snap.retry_at = None
                    self._retry_wait = None
                    # After each wait: the user may have stopped it meanwhile.
        finally:
            self.runtime.tools.set_server_active(self.name, False)
            if self.snap.state in (State.STARTING, State.READY) or not self._want_running:
                self._set_state(State.STOPPED)
            self._scope = None
            self._settled.set()
            done.set()

    async def _connect_and_serve(self) -> None:
        cfg = self.cfg
        self._lost = anyio.Event()
        self._lost_reason = "connection_closed"
        self.http.reset()
        self.exit.reset()
        self._stderr_mark = self.stderr.committed if self.stderr is not None else 0
        self._auth_challenge = None
        self.snap.started_at = time.time()
        self._set_state(State.STARTING)
        timeout_s = cfg.timeout_ms / 1000
        try:
            # One deadline bounds spawn + initialize + initial discovery; it is lifted once ready.
            with anyio.CancelScope(deadline=anyio.current_time() + timeout_s) as connect_scope:
                self._exit_race.begin(connect_scope)
                try:
                    await self._open_and_serve(connect_scope)
                except BaseException as exc:
                    if isinstance(exc, anyio.get_cancelled_exc_class()):
                        raise
                    raise self._classify(exc) from None
            if connect_scope.cancelled_caught and self._exit_race.code is not None:
                raise self._exited_while_connecting(self._exit_race.code, None)
            if connect_scope.cancelled_caught and self.snap.state != State.READY:
                raise TimeoutFailed(
                    f"server '{cfg.name}' did not become ready within {cfg.timeout_ms} ms "
                    "(connect + initialize + discovery)",
                    server=cfg.name,
                    hint=f"raise timeoutMs for '{cfg.name}' or check its command/URL",
                    reason="connect_timeout",
                )
            if self._lost.is_set():
                if self._auth_challenge is not None:
                    raise self._auth_required()
                raise ConnectionFailed(
                    self.snap.last_error or f"server '{cfg.name}' closed the connection",
                    server=cfg.name,
                    reason=self._lost_reason,
                )
        finally:
            # The connection's block has exited: its process tree is stopped already.
            self._exit_race.end()
            self.client = None
            self.listings = None
            self.process = None
            self.raw_channel = None
            self.runtime.tools.set_server_active(self.name, False)

    def _mark_ready(self) -> None:
        self.snap.last_error = None
        self.snap.last_error_code = None
        self.snap.last_error_reason = None
        self.snap.last_error_hint = None
        self._set_state(State.READY)
        self._settled.set()

    async def _open_and_serve(self, connect_scope: anyio.CancelScope) -> None:
        if self.stderr is None:  # one tail per server, kept across restarts for its status view
            self.stderr = StderrTail(redact=self.runtime.redact)
        callbacks = SessionCallbacks(
            warn=self.warn,
            rediscover=self.request_rediscovery,
            auth_challenged=self.auth_challenged,
            notified=lambda notification: self.runtime.server_notified(self.name, notification),
            lost=lambda message, reason: self.connection_lost(message, reason=reason),
            client_side=self.client_side,
            spawned=lambda process: self._exit_race.spawned(process, self.runtime.task_group()),
        )
        async with open_client(
            self.cfg,
            self.runtime,
            stderr_tail=self.stderr,
            callbacks=callbacks,
            http=self.http,
            exit_record=self.exit,
        ) as connection:
            self._take(connection)
            await self.client_side.connected(connection.client, connection.protocol_version)
            await self._discover(connection.client)
            connect_scope.deadline = math.inf
            self._exit_race.ready()
            self._mark_ready()
            await self._serve(connection.client)

    def _take(self, connection: Connection) -> None:
        self.client = connection.client
        self.listings = connection.listings
        self.process = connection.process
        self.raw_channel = connection.raw
        self.snap.protocol_version = connection.protocol_version
        self.snap.transport = connection.transport
        self.snap.server_info = connection.server_info
        self.snap.instructions = connection.instructions
        self.snap.capabilities = connection.capabilities
        self.snap.advertised = connection.advertised
        for warning in connection.warnings:
            self.warn(warning)

    async def _discover(self, client: Any) -> None:
        tools = await list_tools(client, server=self.name, warn=self.warn, salvage=self.listings)
        added, removed = self.runtime.tools.sync(self.name, tools, active=True)
        log_event("server.discovered", server=self.name, tools=len(tools), count=added, reason=f"-{removed}")

        # Shell completion offers tool names without connecting: remember the last listing. In a
        # worker thread of the session (a changed list is a durable write), and not awaited: the
        # tools just activated and the ready state must not be seen apart.
        names = [t.name for t in tools]
        tg = self.runtime.tg
        if tg is not None:
            tg.start_soon(
                anyio.to_thread.run_sync, toolcache.save, self.runtime.tool_cache_path, self.name, names
            )

    async def _serve(self, client: Any) -> None:
        """Wait until the connection dies or the user stops it; meanwhile keep tools fresh."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch_rediscovery, client)
            if self.process is not None:
                tg.start_soon(self._watch_process)
            if self.cfg.health_check_interval_ms:
                tg.start_soon(self._health_checks, client)
            if self.snap.protocol_version and self.snap.protocol_version >= "2026":
                tg.start_soon(self._listen_modern, client)
            await self._lost.wait()
            tg.cancel_scope.cancel()

    async def _watch_rediscovery(self, client: Any) -> None:
        while True:
            await self._rediscover.wait()
            self._rediscover = anyio.Event()
            try:
                with anyio.fail_after(self.cfg.request_timeout_ms / 1000):
                    await self._discover(client)
            except Exception as exc:  # a failed refresh keeps the old list; the error is shown
                self.warn(f"re-discovery failed: {self._classify(exc).message}")

    async def _listen_modern(self, client: Any) -> None:
        # On 2026-07-28 sessions list_changed only arrives inside subscriptions/listen.
        try:
            # Prompt and resource changes are teed to the message handler, which relays them.
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as sub:
                async for _event in sub:
                    self.request_rediscovery()
        except Exception as exc:
            log_event("server.listen_unavailable", server=self.name, reason=type(exc).__name__)

    async def _watch_process(self) -> None:
        proc = self.process
        assert proc is not None
        code = await proc.wait()
        with anyio.move_on_after(STDERR_WAIT_S):
            await proc.stderr_closed()
        self.connection_lost(exit_text(self.name, code, self.attempt_stderr()), reason="server_exited")

    async def _health_checks(self, client: Any) -> None:
        interval = (self.cfg.health_check_interval_ms or 0) / 1000
        while True:
            await anyio.sleep(interval)
            try:
                with anyio.fail_after(min(interval, self.cfg.request_timeout_ms / 1000)):
                    if self.snap.protocol_version and self.snap.protocol_version < "2026":
                        await client.session.send_ping()
                    else:
                        await client.list_tools()
            except Exception as exc:
                log_event("server.health_failed", server=self.name, reason=type(exc).__name__)
                self.connection_lost(
                    f"health check failed: {self._classify(exc).message}", reason="health_check_failed"
                )
                return

    # -- helpers ---------------------------------------------------------------------------------

    def _classify(self, exc: BaseException) -> OrbError:
        if isinstance(exc, OrbError):
            return exc
        if self._auth_challenge is not None:
            return self._auth_required()

        status, www = self.http.refusal or (self.http.status, None)
        error = classify_error(exc, server=self.name, http_status=status, www_authenticate=www)
        if error.reason == "connection_closed" and self.exit.code is not None:
            # The server died on its own: its exit code and last words say why, "closed" does not.
            return self._exited_while_connecting(self.exit.code, error.hint_template)
        return error

    def _exited_while_connecting(self, code: int, hint: str | None) -> ConnectionFailed:
        text = exit_text(self.name, code, self.attempt_stderr(), during="while connecting")
        return ConnectionFailed(
            self.runtime.redact(text), server=self.name, hint=hint, reason="server_exited"
        )

    def _auth_required(self) -> AuthError:
        assert self._auth_challenge is not None
        return AuthError(
            self._auth_challenge, server=self.name, hint=cmd("auth", self.name), reason="auth_required"
        )

    def _set_error(self, err: OrbError) -> None:
        self.snap.last_error = self.runtime.redact(err.template)  # spelled by the front that shows it
        self.snap.last_error_code = err.code
        self.snap.last_error_reason = err.reason
        # Command references stay unspelled: each front spells them (see ``hints``).
        self.snap.last_error_hint = self.runtime.redact(err.hint_template) if err.hint_template else None
        log_event("server.error", level="warn", server=self.name, code=err.code, error=self.snap.last_error)

    def _set_state(self, state: State) -> None:
        old = self.snap.state
        if old == state:
            return
        self.snap.state = state
        now = time.monotonic()
        ms, self._state_since = round((now - self._state_since) * 1000), now
        message = f"Server {self.name} state {old} -> {state}"
        log_event(
            "server.state", server=self.name, message=message, ms=ms, **{"from": str(old), "to": str(state)}
        )
        self.runtime.state_changed(self, old, state)
