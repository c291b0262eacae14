"""``orbmcp auth NAME [--reset] [--no-browser]`` and ``orbmcp logout NAME`` (which revokes first).

``authorize`` holds the server's cross-process lock for the whole flow, then makes one real MCP
request (``initialize`` for Streamable HTTP, the event-stream GET for legacy SSE) through the
provider: a stored, still-valid or refreshable credential is used as is; otherwise the 401 starts
the interactive flow. The heavy imports (``mcp``, ``httpx2`` and the modules that import them) stay
inside the functions that connect: ``status`` imports this module and never loads the SDK
(``tests/auth/test_storage.py`` pins it).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from orbmcp._version import __version__
from orbmcp.auth.callback import DEFAULT_CALLBACK_TIMEOUT_S
from orbmcp.auth.lock import AuthLock
from orbmcp.auth.messages import clean, log_auth_event
from orbmcp.auth.storage import AuthStore
from orbmcp.config.transports import kind_of
from orbmcp.errors import AuthError, ConnectionFailed, OrbError, TimeoutFailed

if TYPE_CHECKING:
    import httpx2

    from orbmcp.auth.provider import OrbOAuthProvider
    from orbmcp.auth.revoke import Revocation
    from orbmcp.auth.ui import AuthUI
    from orbmcp.config.model import ServerConfig

LOCK_WAIT_S = 30.0
_PROBE_PROTOCOL = "2025-11-25"


@dataclass(frozen=True)
class AuthOutcome:
    server: str
    status: Literal["authorized", "already-authorized", "not-required"]
    scope: str | None
    expires_at: float | None
    corrupt_backup: Path | None
    message: str


def _oauth_store(
    cfg: ServerConfig, global_dir: Path, notify: Callable[[str], None] | None = None
) -> AuthStore:
    if cfg.auth is None or not cfg.url:
        raise AuthError(
            f"server '{cfg.name}' is not configured for OAuth",
            server=cfg.name,
            hint='add "auth": {"type": "oauth"} to its entry (HTTP servers only)',
        )
    return AuthStore(global_dir, cfg, notify=notify)


async def authorize(
    cfg: ServerConfig,
    global_dir: Path,
    *,
    reset: bool,
    ui: AuthUI,
    no_browser: bool,
    timeout_s: float = DEFAULT_CALLBACK_TIMEOUT_S,
) -> AuthOutcome:
    from orbmcp.auth.provider import OrbOAuthProvider
    from orbmcp.auth.sdk_logging import install_sdk_log_scrubber

    install_sdk_log_scrubber()
    store = _oauth_store(cfg, global_dir, ui.notify)
    store.load()  # quarantines a corrupt file up front, so the outcome can report it
    async with AuthLock(store.lock_path, server=cfg.name, wait_s=LOCK_WAIT_S):
        if reset:
            store.clear(tokens=True, client=True)
            log_auth_event(
                "oauth.reset", server=cfg.name, message=f"discarded stored credentials of '{cfg.name}'"
            )
        # This flow holds the lock already; the provider must not take it again (no lock_factory).
        provider = OrbOAuthProvider(
            cfg, store, interactive=True, ui=ui, no_browser=no_browser, callback_timeout_s=timeout_s
        )
        status = await _probe(cfg, provider)
    if status in (401, 403):
        raise AuthError(f"server '{cfg.name}' still refuses the credentials (HTTP {status})", server=cfg.name)
    record = store.load()
    tokens = (record.tokens or {}) if record else {}
    scope = tokens.get("scope") if isinstance(tokens.get("scope"), str) else None
    expires_at = record.expires_at if record else None
    if provider.logins:
        result: Literal["authorized", "already-authorized", "not-required"] = "authorized"
        message = f"authorized '{cfg.name}'"
    elif tokens:
        result = "already-authorized"
        message = f"'{cfg.name}' is already authorized" + (" (token refreshed)" if provider.refreshes else "")
    else:
        result = "not-required"
        message = f"'{cfg.name}' accepted the request without authorization"
    return AuthOutcome(
        server=cfg.name,
        status=result,
        scope=scope,
        expires_at=expires_at,
        corrupt_backup=store.corrupt_backup,
        message=message,
    )


async def _probe(cfg: ServerConfig, provider: OrbOAuthProvider) -> int:
    """One authenticated MCP request; the provider runs whatever authorization it needs."""
    import httpx2

    from orbmcp.net.http import make_http_client

    assert cfg.url is not None
    try:
        async with make_http_client(
            headers=dict(cfg.headers),
            auth=provider,
            timeout_s=cfg.timeout_ms / 1000,
            request_timeout_s=cfg.request_timeout_ms / 1000,
        ) as client:
            # Only response headers are awaited here, never an idle stream: the stream read floor
            # (300 s) would let a server that accepts but never answers hold `orbmcp auth` for minutes.
            connect_s, request_s = cfg.timeout_ms / 1000, cfg.request_timeout_ms / 1000
            client.timeout = httpx2.Timeout(
                connect=connect_s, read=request_s, write=request_s, pool=connect_s
            )
            if kind_of(cfg.transport).endpoint_event:  # legacy SSE: GET the event stream
                return await _probe_sse(client, cfg.url)
            return await _probe_initialize(client, cfg.url)
    except OrbError:
        raise
    except httpx2.TimeoutException:
        raise TimeoutFailed(f"server '{cfg.name}' did not answer in time", server=cfg.name) from None
    except httpx2.HTTPError as exc:
        why = clean(str(exc) or type(exc).__name__, provider.known_secrets())
        raise ConnectionFailed(
            f"cannot reach server '{cfg.name}': {why}",
            server=cfg.name,
        ) from None


async def _probe_initialize(client: httpx2.AsyncClient, url: str) -> int:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": _PROBE_PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "orbmcp", "version": __version__},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with client.stream("POST", url, json=body, headers=headers) as response:
        status = response.status_code
        session = response.headers.get("mcp-session-id")
    if session and 200 <= status < 300:
        # Leave no half-open session behind on a stateful server.
        with suppress(Exception):
            await client.delete(
                url, headers={"mcp-session-id": session, "mcp-protocol-version": _PROBE_PROTOCOL}
            )
    return status


async def _probe_sse(client: httpx2.AsyncClient, url: str) -> int:
    async with client.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
        return response.status_code


@dataclass(frozen=True)
class LogoutOutcome:
    removed: bool  # anything was stored (and is gone now)
    revocation: Revocation

    def __bool__(self) -> bool:
        return self.removed


async def logout(cfg: ServerConfig, global_dir: Path, *, forget_client: bool = True) -> LogoutOutcome:
    """Revoke the server's tokens at its authorization server (RFC 7009, when it advertises a
    revocation endpoint), then forget them (and its client registration)."""
    from orbmcp.auth.revoke import revoke_tokens

    store = _oauth_store(cfg, global_dir)
    async with AuthLock(store.lock_path, server=cfg.name, wait_s=LOCK_WAIT_S):
        record = store.load()
        had = record is not None and (
            record.tokens is not None or (forget_client and record.client is not None)
        )
        revocation = await revoke_tokens(record, cfg)
        store.clear(tokens=True, client=forget_client)
    if had:
        log_auth_event("oauth.logout", server=cfg.name, message=f"forgot the credentials of '{cfg.name}'")
    return LogoutOutcome(had, revocation)
