"""The gateway over Streamable HTTP: one listener, one MCP session per agent, every request checked.

Before a request reaches the SDK's session manager it must pass, in order:

1. the path: ``/mcp`` only (404);
2. ``Origin`` (DNS rebinding, and browsers in general): absent, or a loopback origin when the
   listener is on loopback, or the listener's own origin when it is remote (403);
3. ``Host`` on a loopback listener: a loopback name (421), so a rebound DNS name cannot reach it;
4. the bearer token (``Authorization: Bearer``, constant-time; 401 with ``WWW-Authenticate``).

A session belongs to the token that opened it. Each SSE stream starts with a priming event and a
``retry`` hint, and recent events are kept so a broken stream can be resumed (``events``).
Stopping (SIGTERM, the serve process leaving the daemon) ends every session, then the listener.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from orbmcp.errors import UsageError
from orbmcp.log import log_event
from orbmcp.serve import token as tokens
from orbmcp.serve.events import memory_event_store
from orbmcp.serve.options import MCP_PATH, HttpAddress, is_loopback

if TYPE_CHECKING:
    from orbmcp.serve.gateway import Gateway

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

RETRY_MS = 3000
SESSION_IDLE_TIMEOUT_S = 30 * 60.0
MAX_SESSIONS = 100
SHUTDOWN_GRACE_S = 2
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def listen(address: HttpAddress, *, allow_remote: bool) -> socket.socket:
    """Bind the listener (port 0: a free one). A non-loopback host needs ``allow_remote``."""
    if not address.loopback and not allow_remote:
        raise UsageError(
            f"refusing to listen on {address.host}: not a loopback address",
            hint="add --allow-remote to accept other machines (they still need the token)",
            reason="remote_not_allowed",
        )
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    try:
        return socket.create_server((address.host, address.port), family=family, backlog=128)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {address.host}:{address.port}: {exc.strerror or exc}",
            hint="choose another port, or 0 for a free one",
            reason="listen_failed",
        ) from None


def bound_address(sock: socket.socket, requested: HttpAddress) -> HttpAddress:
    return HttpAddress(requested.host, int(sock.getsockname()[1]))


class Guard:
    """The checks every request passes before the session manager sees it."""

    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        token: str,
        address: HttpAddress,
        negotiated: Callable[[str], str | None] = lambda session: None,
    ) -> None:
        self._app = app
        self._token = token
        self._address = address
        self._negotiated = negotiated  # the protocol version a session's handshake agreed on

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if scope.get("path", "").rstrip("/") != MCP_PATH:
            await _refuse(send, 404, "not found", f"the MCP endpoint is {MCP_PATH}")
            return
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            log_event("serve.refused", level="warn", reason="origin")
            await _refuse(send, 403, "forbidden origin", "requests from web pages are not accepted")
            return
        if self._address.loopback and not _loopback_host(headers.get("host")):
            log_event("serve.refused", level="warn", reason="host")
            await _refuse(send, 421, "misdirected request", "this server answers loopback host names only")
            return
        if not tokens.matches(self._token, headers.get("authorization")):
            log_event("serve.refused", level="warn", reason="token")
            challenge = [(b"www-authenticate", b'Bearer realm="orbmcp", error="invalid_token"')]
            await _refuse(
                send,
                401,
                "unauthorized",
                "send Authorization: Bearer <orbmcp serve --print-token>",
                challenge,
            )
            return
        await self._app(self._versioned(scope, headers), receive, send)

    def _versioned(self, scope: Scope, headers: dict[str, str]) -> Scope:
        """A request of a session that names an older protocol version than the session agreed on
        is served as the agreed one: what the agent can parse (an SSE stream's priming event, from
        2025-11-25 on) is what its handshake said."""
        session = headers.get("mcp-session-id")
        stated = headers.get("mcp-protocol-version")
        agreed = self._negotiated(session) if session and stated else None
        if agreed is None or stated is None or not stated < agreed:
            return scope
        kept = [(k, v) for k, v in scope["headers"] if k.lower() != b"mcp-protocol-version"]
        return {**scope, "headers": [*kept, (b"mcp-protocol-version", agreed.encode("latin-1"))]}

    def _origin_allowed(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
            host = parts.hostname or ""
            port = parts.port
        except ValueError:
            return False
        if parts.scheme not in ("http", "https"):
            return False
        if self._address.loopback:
            return is_loopback(host)
        return host == self._address.host.lower() and port == self._address.port


def _loopback_host(host: str | None) -> bool:
    if not host:
        return False
    name = host.lower()
    return any(name == n or name.startswith(n + ":") for n in LOOPBACK_NAMES)


async def _refuse(
    send: Send, status: int, error: str, detail: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps({"error": error, "detail": detail}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def session_manager(gateway: Gateway, address: HttpAddress) -> Any:
    if address.loopback:  # the SDK checks the same again: defence in depth
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{name}:*" for name in LOOPBACK_NAMES] + list(LOOPBACK_NAMES),
            allowed_origins=[
                f"{scheme}://{name}:*" for scheme in ("http", "https") for name in LOOPBACK_NAMES
            ]
            + [f"{scheme}://{name}" for scheme in ("http", "https") for name in LOOPBACK_NAMES],
        )
    else:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return StreamableHTTPSessionManager(
        app=gateway.server,
        event_store=memory_event_store(),
        retry_interval=RETRY_MS,
        security_settings=security,
        session_idle_timeout=SESSION_IDLE_TIMEOUT_S,
        max_sessions=MAX_SESSIONS,
    )


@contextmanager
def _quiet_signals(server: Any) -> Iterator[None]:
    yield


async def serve_http(
    gateway: Gateway,
    sock: socket.socket,
    address: HttpAddress,
    token: str,
    *,
    on_listening: Callable[[HttpAddress], None] | None = None,
) -> None:
    """Serve until cancelled; every session ends before the listener closes."""

    manager = session_manager(gateway, address)
    app = Guard(manager.handle_request, token, address, gateway.negotiated_version)

    class Listener(uvicorn.Server):
        def capture_signals(self) -> Any:  # the front (or the daemon) owns the signals
            return _quiet_signals(self)

    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    listener = Listener(config)

    async def run_listener() -> None:
        with anyio.CancelScope(shield=True):  # stopped by should_exit, after the sessions ended
            await listener.serve(sockets=[sock])

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_listener)
        try:
            async with manager.run():
                if on_listening is not None:
                    on_listening(address)
                await anyio.sleep_forever()
        finally:
            listener.should_exit = True
