"""Opening one connection to a server: its process or HTTP client, the SDK Client, the negotiated era.

``open_client`` is connect-time only and writes nothing of its caller's. It takes the server's
config, the session's ``Runtime``, the stderr tail to fill, the callbacks for what happens during
the session (``SessionCallbacks``) and an ``HttpResponses`` record the caller keeps reading; it
yields a ``Connection`` value and stops the process it spawned when the block exits. For stdio
the process is spawned *before* the SDK import finishes, so a server's start-up overlaps the
~0.7 s ``import mcp``: the SDK and the modules that import it (``listings``, ``inbound``,
``transports``, ``auth.provider``) are imported inside the functions that connect, which also keeps
them out of an empty ``status`` (it imports this module).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp._version import __version__
from orbmcp.config.transports import kind_of
from orbmcp.core.processes.reaper import GroupRegistry
from orbmcp.core.processes.spawn import SpawnSpec, spawn
from orbmcp.core.wire import era
from orbmcp.core.wire.flood import NotificationThrottle
from orbmcp.core.wire.sdk import ensure_sdk

if TYPE_CHECKING:
    from orbmcp.config.model import ServerConfig
    from orbmcp.core.capabilities.client_side import ClientSide
    from orbmcp.core.processes.process import ManagedProcess
    from orbmcp.core.processes.stderr_tail import StderrTail
    from orbmcp.core.session.runtime import Runtime
    from orbmcp.core.tooling.listings import ToolListingSalvage
    from orbmcp.core.wire.era import EraCache
    from orbmcp.core.wire.raw_channel import RawChannel
    from orbmcp.core.wire.transports import ServerTransport

# How long a failed connection waits for its stdio server to finish exiting, to learn its code.
EXIT_NOTE_S = 0.5


def fallback_note(configured: str, used: str) -> str:
    """The warning of a connection that took its kind's fallback (an entry that says so skips it)."""
    wanted, taken = kind_of(configured), kind_of(used)
    return (
        f"connected over legacy {taken.label}: the URL refused {wanted.label}; "
        f'set "transport": "{taken.name}" for this server to skip that attempt'
    )


@dataclass
class HttpResponses:
    """What the transport saw of one connection's HTTP responses: the SDK reports 401, 403 and
    500 alike as one JSON-RPC error, so the status only reaches orbmcp through this record."""

    status: int | None = None  # of the latest response
    refusal: tuple[int, str | None] | None = None  # the latest 401/403 and its WWW-Authenticate

    def reset(self) -> None:
        """Forget what an earlier connection attempt saw."""
        self.status = None
        self.refusal = None

    def record(self, status: int, www_authenticate: str | None) -> None:
        self.status = status
        if status in (401, 403):
            self.refusal = (status, www_authenticate)

    def refused(self) -> bool:
        """Did the latest response refuse the request the way a server of another transport
        would (400, 404, 405: the spec's "Backwards Compatibility")?"""
        return self.status in (400, 404, 405)


def _ignore(notification: Any) -> None:
    """What happens to a notification nobody relays."""


@dataclass
class ProcessExit:
    """How a connection's stdio server ended, when it ended by itself (not stopped by orbmcp):
    the owner reads it after a failed connect to say "exited with code 3" instead of "closed"."""

    code: int | None = None

    def reset(self) -> None:
        self.code = None


@dataclass(frozen=True)
class SessionCallbacks:
    """What a connection reports while it lives, to whoever owns it."""

    warn: Callable[[str], None]  # something the server did that a person should see
    rediscover: Callable[[], None]  # the server's tool list changed
    auth_challenged: Callable[[str], None]  # a 401/403 the OAuth provider could not resolve
    # Any other notification of the server (an SDK model): resources updated, list changes
    notified: Callable[[Any], None] = _ignore
    # The transport is killing the connection: (message, reason), before requests fail.
    lost: Callable[[str, str], None] = field(default=lambda message, reason: None)
    # A stdio server was started (the owner races the attempt against its exit).
    spawned: Callable[[ManagedProcess], None] = _ignore
    # What answers the server's own requests (elicitation, sampling, roots) and takes its log
    # messages; None: nothing is advertised and nothing answered.
    client_side: ClientSide | None = None


@dataclass(frozen=True)
class Connection:
    """A connected server, as ``open_client`` yields it; valid until its block exits."""

    client: Any  # the entered mcp.Client
    process: ManagedProcess | None  # the stdio server; stopped when the block exits
    transport: str  # the one used: "sse" when a Streamable HTTP URL refused it
    protocol_version: str | None
    server_info: str | None  # "name version" from the handshake
    warnings: tuple[str, ...] = ()  # about how the connection was made, to show with the server
    listings: ToolListingSalvage | None = None  # this connection's raw tool listings, for salvage
    instructions: str | None = None  # the server's instructions (initialize result), raw
    capabilities: dict[str, Any] | None = None  # what the server offers (wire JSON)
    advertised: dict[str, Any] | None = None  # what orbmcp advertised to it (wire JSON)
    raw: RawChannel | None = None  # a stdio connection's raw side (``raw_channel``), else None


@asynccontextmanager
async def open_client(
    cfg: ServerConfig,
    runtime: Runtime,
    *,
    stderr_tail: StderrTail,
    callbacks: SessionCallbacks,
    http: HttpResponses,
    exit_record: ProcessExit | None = None,
) -> AsyncIterator[Connection]:
    """Yield a ``Connection``; the caller's task must be the one that leaves the block.
    ``exit_record`` learns the exit code of a stdio server that ended by itself."""
    opener = _Opener(cfg, runtime, stderr_tail, callbacks, http, exit_record=exit_record)
    try:
        async with opener.connect() as connection:
            yield connection
    except Exception:
        await opener.note_exit()
        raise
    finally:
        await opener.stop_process()


class _Opener:
    """One ``open_client`` call: the process it owns and the attempts it makes."""

    def __init__(
        self,
        cfg: ServerConfig,
        runtime: Runtime,
        stderr_tail: StderrTail,
        callbacks: SessionCallbacks,
        http: HttpResponses,
        *,
        exit_record: ProcessExit | None = None,
    ) -> None:
        self.cfg = cfg
        self.runtime = runtime
        self.stderr_tail = stderr_tail
        self.callbacks = callbacks
        self.http = http
        self.exit_record = exit_record
        self.process: ManagedProcess | None = None
        self.listings: ToolListingSalvage | None = None  # the latest attempt's
        self.advertised: dict[str, Any] = {}
        self.raw: RawChannel | None = None  # the latest stdio transport's

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Connection]:
        cfg = self.cfg
        kind = kind_of(cfg.transport)
        if kind.local:
            await self._spawn()  # before the SDK import: the server boots while Python imports
        await ensure_sdk()

        cache = era.EraCache(self.runtime.era_cache_path)
        key = cfg.definition_hash()
        cached = cache.get(key)
        # A URL that refused Streamable HTTP last time and took legacy SSE goes straight to SSE.
        remembered = cache.transport(key)
        transport = remembered if remembered is not None and remembered == kind.fallback else cfg.transport
        async with AsyncExitStack() as stack:
            try:
                client = await stack.enter_async_context(await self._client(cached, transport))
            except Exception as exc:
                client, transport = await self._second_attempt(
                    stack, exc, cache=cache, key=key, cached=cached, transport=transport
                )
            version = client.protocol_version
            info = client.server_info
            offered = _server_capabilities(client)
            fallback = None if transport == cfg.transport else transport
            # In a worker thread: a changed entry is a durable write; other servers keep connecting.
            await anyio.to_thread.run_sync(partial(cache.record, key, version, transport=fallback))
            yield Connection(
                client=client,
                process=self.process,
                transport=transport,
                protocol_version=version,
                server_info=f"{info.name} {info.version}" if info is not None else None,
                warnings=(fallback_note(cfg.transport, transport),) if transport != cfg.transport else (),
                listings=self.listings,
                instructions=_instructions(client),
                capabilities=offered,
                advertised=self.advertised,
                raw=self.raw,
            )

    async def _second_attempt(
        self,
        stack: AsyncExitStack,
        exc: Exception,
        *,
        cache: EraCache,
        key: str,
        cached: str | None,
        transport: str,
    ) -> tuple[Any, str]:
        """After a failed first attempt: the one retry that may succeed, or ``exc`` again."""
        cfg = self.cfg
        if transport != cfg.transport:
            if not self.http.refused():
                raise exc
            # The remembered SSE endpoint is gone: the server may speak Streamable HTTP now.
            cache.forget(key)
            return await stack.enter_async_context(await self._client(None, cfg.transport)), cfg.transport
        fallback = kind_of(transport).fallback
        if fallback is not None and self.http.refused():
            return await self._fallback(stack, exc, fallback), fallback
        if cached == "legacy" and era.should_retry_with_auto(exc):
            # Remembered as 2025-era, but it refused initialize: it may have become modern-only.
            # Forget that and probe; a stdio server gets a fresh process for the new session.
            cache.forget(key)
            if kind_of(cfg.transport).local:
                await self.stop_process()
                await self._spawn()
            return await stack.enter_async_context(await self._client(None, transport)), transport
        raise exc

    async def _fallback(self, stack: AsyncExitStack, refused: Exception, transport: str) -> Any:
        """The spec's backward compatibility: a URL that answers 400/404/405 to both the probe and
        ``initialize`` may be a 2024-11-05 HTTP+SSE server: GET it and expect an ``endpoint``
        event. If that fails too, the Streamable HTTP error is the one to report."""
        status = self.http.status
        try:
            return await stack.enter_async_context(await self._client("legacy", transport))
        except Exception:
            self.http.status = status
            raise refused from None

    async def _spawn(self) -> None:
        cfg = self.cfg
        assert cfg.command is not None
        spec = SpawnSpec(
            name=cfg.name, command=cfg.command, args=list(cfg.args), env=dict(cfg.env), cwd=cfg.cwd
        )
        self.process = await spawn(
            spec,
            task_group=self.runtime.task_group(),
            registry=GroupRegistry(self.runtime.global_dir),
            redact=self.runtime.redact,
            stderr_tail=self.stderr_tail,
        )
        self.callbacks.spawned(self.process)

    async def note_exit(self) -> None:
        """After a failure: a server that is exiting by itself (its stdout just closed) gets a
        moment to be reaped, so its exit code is what the error reports."""
        process = self.process
        if process is None or self.exit_record is None:
            return
        with anyio.move_on_after(EXIT_NOTE_S):
            self.exit_record.code = await process.wait()

    async def stop_process(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            code = process.returncode  # before the stop: an exit of its own, not our SIGTERM
            if code is not None and self.exit_record is not None:
                self.exit_record.code = code
            handed_off = self.runtime.handed_off
            if handed_off is not None:
                group = process.hand_off()
                if group is not None:
                    handed_off.append(group)
                return
            with anyio.CancelScope(shield=True):
                await process.stop(
                    stdin_grace=self.runtime.stdin_grace_s, term_grace=self.runtime.term_grace_s
                )

    async def _client(self, cached: str | None, transport: str) -> Any:
        """An SDK ``Client`` (not yet entered) for a server whose cached era is ``cached``."""
        from mcp import Client
        from mcp_types import Implementation

        from orbmcp.core.tooling.listings import ToolListingSalvage
        from orbmcp.core.wire.inbound import guarded
        from orbmcp.core.wire.transports import transport_for

        throttle = NotificationThrottle(self.callbacks.warn)
        server_transport = transport_for(transport)
        stream = await self._transport(
            server_transport, probe_timeout=era.discover_timeout_for(cached), throttle=throttle
        )
        self.listings = ToolListingSalvage(self.cfg.name, self.callbacks.warn)
        client_side = self.callbacks.client_side
        answers = client_side.client_kwargs() if client_side is not None else {}
        self.advertised = advertised_capabilities(answers)
        return Client(
            # A transport that thins notifications itself does it before parsing them.
            guarded(
                stream,
                salvage=self.listings,
                throttle=None if server_transport.throttles_itself else throttle,
            ),
            mode=era.client_mode_for(cached),  # type: ignore[arg-type,unused-ignore]
            read_timeout_seconds=self.cfg.request_timeout_ms / 1000,
            message_handler=self._message_handler(),
            client_info=Implementation(name="orbmcp", version=__version__),
            cache=None,  # list_changed must always refetch; a stale cached list would hide new tools
            **answers,
        )

    async def _transport(
        self, transport: ServerTransport, *, probe_timeout: float | None, throttle: NotificationThrottle
    ) -> Any:
        from orbmcp.core.wire.transports import Dial

        callbacks = self.callbacks
        opened = await transport.open(
            Dial(
                cfg=self.cfg,
                throttle=throttle,
                warn=callbacks.warn,
                lost=callbacks.lost,
                process=self.process,
                probe_timeout=probe_timeout,
                auth=self._auth,
                on_response=lambda status, headers: self.http.record(status, headers.get("www-authenticate")),
            )
        )
        self.raw = opened.raw
        return opened.transport

    async def _auth(self) -> Any:
        if self.runtime.auth_factory is not None:
            return self.runtime.auth_factory(self.cfg)
        if self.cfg.auth is None:
            return None
        from orbmcp.auth.provider import build_auth

        # Connections never log in interactively: silent start-up and background reconnects must
        # not open a browser or register a client. A missing or rejected token puts the server in
        # needs-auth; the person authorizes through the auth command or the startup prompt.
        challenged = self.callbacks.auth_challenged
        return build_auth(
            self.cfg,
            self.runtime.global_dir,
            interactive=False,
            ui=None,
            on_challenge=lambda challenge: challenged(challenge.message),
            notify=self.callbacks.warn,
        )

    def _message_handler(self) -> Any:
        from mcp_types import ToolListChangedNotification

        callbacks = self.callbacks
        client_side = callbacks.client_side

        async def handle(message: Any) -> None:
            # 2025-era sessions push list_changed here; 2026-07-28 ones tee listen() events here too.
            root = getattr(message, "root", message)
            if isinstance(root, ToolListChangedNotification):
                callbacks.rediscover()
            elif isinstance(message, Exception):
                callbacks.warn(f"transport: {type(message).__name__}")
            else:
                if client_side is not None:
                    client_side.notification(root)
                callbacks.notified(root)  # every front that relays them hears them too
            await anyio.lowlevel.checkpoint()

        return handle


MAX_INSTRUCTIONS = 16_000


def _instructions(client: Any) -> str | None:
    """The server's instructions, cut to ``MAX_INSTRUCTIONS`` characters (a server controls them)."""
    try:
        text = client.instructions
    except Exception:
        return None
    if not isinstance(text, str) or not text.strip():
        return None
    return text if len(text) <= MAX_INSTRUCTIONS else text[:MAX_INSTRUCTIONS] + "…"


def _server_capabilities(client: Any) -> dict[str, Any] | None:
    """What the server offers, in wire JSON."""

    def dump(model: Any) -> dict[str, Any] | None:
        if model is None:
            return None
        data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
        return data

    try:
        return dump(client.server_capabilities)
    except Exception:
        return None


def advertised_capabilities(client_kwargs: dict[str, Any]) -> dict[str, Any]:
    """What the SDK advertises for these ``Client`` callbacks: a capability per callback."""
    out: dict[str, Any] = {}
    if client_kwargs.get("elicitation_callback") is not None:
        out["elicitation"] = {"form": {}, "url": {}}
    if client_kwargs.get("list_roots_callback") is not None:
        out["roots"] = {"listChanged": True}
    if client_kwargs.get("sampling_callback") is not None:
        out["sampling"] = {}
    return out
