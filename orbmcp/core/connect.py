"""Opening one connection for a supervisor: process or HTTP client, SDK Client, negotiated era.

Connect-time only. For stdio the process is spawned *before* the SDK import finishes, so a server's
start-up overlaps the ~0.7 s ``import mcp``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp._version import __version__
from orbmcp.core.sdk import ensure_sdk

if TYPE_CHECKING:
    from orbmcp.core.supervisor import Supervisor

SSE_FALLBACK_NOTE = (
    "connected over legacy SSE: the URL refused Streamable HTTP; "
    'set "transport": "sse" for this server to skip that attempt'
)


async def _spawn(sup: Supervisor) -> None:
    from orbmcp.core.process import SpawnSpec, StderrTail, spawn
    from orbmcp.core.reaper import GroupRegistry

    cfg = sup.cfg
    assert cfg.command is not None
    spec = SpawnSpec(name=cfg.name, command=cfg.command, args=list(cfg.args), env=dict(cfg.env), cwd=cfg.cwd)
    if sup.stderr is None:  # one tail per server, kept across restarts for `/mcp <name>`
        sup.stderr = StderrTail(redact=sup.runtime.redact)
    sup.process = await spawn(
        spec,
        task_group=sup.runtime.task_group(),
        registry=GroupRegistry(sup.runtime.global_dir),
        redact=sup.runtime.redact,
        stderr_tail=sup.stderr,
    )


@asynccontextmanager
async def open_client(sup: Supervisor) -> AsyncIterator[Any]:
    """Yield a connected ``mcp.Client``; the caller's task must be the one that leaves the block."""
    cfg = sup.cfg
    if cfg.is_stdio:
        await _spawn(sup)  # before the SDK import: the server boots while Python imports
    await ensure_sdk()

    from orbmcp.core import era

    cache = era.EraCache(sup.runtime.era_cache_path)
    key = cfg.definition_hash()
    cached = cache.get(key)
    # A URL that refused Streamable HTTP last time and took legacy SSE goes straight to SSE.
    transport = cache.transport(key) if cfg.transport == "streamable-http" else None
    transport = transport or cfg.transport
    async with AsyncExitStack() as stack:
        try:
            client = await stack.enter_async_context(await _client(sup, cached, transport))
        except Exception as exc:
            if transport != cfg.transport:
                if not sup.http_refused():
                    raise
                # The remembered SSE endpoint is gone: the server may speak Streamable HTTP now.
                cache.forget(key)
                transport = cfg.transport
                client = await stack.enter_async_context(await _client(sup, None, transport))
            elif transport == "streamable-http" and sup.http_refused():
                client = await _sse_fallback(stack, sup, exc)
                transport = "sse"
            elif cached == "legacy" and era.should_retry_with_auto(exc):
                # Remembered as 2025-era, but it refused initialize: it may have become modern-only.
                # Forget that and probe; a stdio server gets a fresh process for the new session.
                cache.forget(key)
                if cfg.is_stdio:
                    await sup._stop_process()
                    await _spawn(sup)
                client = await stack.enter_async_context(await _client(sup, None, transport))
            else:
                raise
        if transport != cfg.transport:
            sup._warn(SSE_FALLBACK_NOTE)
        version = client.protocol_version
        sup.snap.protocol_version = version
        sup.snap.transport = transport
        info = client.server_info
        sup.snap.server_info = f"{info.name} {info.version}" if info is not None else None
        cache.record(key, version, transport=None if transport == cfg.transport else transport)
        yield client


async def _sse_fallback(stack: AsyncExitStack, sup: Supervisor, refused: Exception) -> Any:
    """Spec backward compatibility (R-A7): a URL that answers 400/404/405 to both the probe and
    ``initialize`` may be a 2024-11-05 HTTP+SSE server: GET it and expect an ``endpoint`` event.
    If that fails too, the Streamable HTTP error is the one to report."""
    status = sup.last_http_status
    try:
        return await stack.enter_async_context(await _client(sup, "legacy", "sse"))
    except Exception:
        sup.last_http_status = status
        raise refused from None


async def _client(sup: Supervisor, cached: str | None, transport: str) -> Any:
    """An SDK ``Client`` (not yet entered) for a server whose cached era is ``cached``."""
    from mcp import Client
    from mcp_types import Implementation

    from orbmcp.core import era

    stream = await _transport(sup, transport, probe_timeout=era.discover_timeout_for(cached))
    return Client(
        stream,
        mode=era.client_mode_for(cached),  # type: ignore[arg-type,unused-ignore]
        read_timeout_seconds=sup.cfg.request_timeout_ms / 1000,
        message_handler=_message_handler(sup),
        elicitation_callback=sup.runtime.elicitation,
        client_info=Implementation(name="orbmcp", version=__version__),
        cache=None,  # list_changed must always refetch; a stale cached list would hide new tools
    )


async def _transport(sup: Supervisor, transport: str, *, probe_timeout: float | None) -> Any:
    from orbmcp.core import transports

    cfg = sup.cfg
    if cfg.is_stdio:
        proc = sup.process
        assert proc is not None

        def garbage(line: str) -> None:
            sup._warn(f"skipped a non-JSON line from stdout: {line[:200]}")

        return transports.stdio_pipe_transport(
            proc.stdin, proc.stdout, server=cfg.name, on_garbage=garbage, discover_timeout_s=probe_timeout
        )
    assert cfg.url is not None
    auth = await _auth_for(sup)
    factory = transports.sse_transport if transport == "sse" else transports.http_transport
    return factory(
        cfg.url,
        headers=dict(cfg.headers),
        auth=auth,
        timeout_s=cfg.timeout_ms / 1000,
        request_timeout_s=cfg.request_timeout_ms / 1000,
        on_response=lambda status, headers: sup.record_http_status(status, headers.get("www-authenticate")),
    )


async def _auth_for(sup: Supervisor) -> Any:
    if sup.runtime.auth_factory is not None:
        return sup.runtime.auth_factory(sup.cfg)
    if sup.cfg.auth is None:
        return None
    from orbmcp.auth.provider import build_auth

    # Connections never log in interactively: silent start-up and background reconnects must not
    # open a browser or register a client (seed 003). A missing or rejected token puts the server
    # in needs-auth; the person authorizes through `orbmcp auth` or the startup prompt.
    return build_auth(
        sup.cfg,
        sup.runtime.global_dir,
        interactive=False,
        ui=None,
        on_challenge=lambda challenge: sup.auth_challenged(challenge.message),
    )


def _message_handler(sup: Supervisor) -> Any:
    from mcp_types import ToolListChangedNotification

    async def handle(message: Any) -> None:
        # 2025-era sessions push list_changed here; 2026-07-28 ones tee listen() events here too.
        root = getattr(message, "root", message)
        if isinstance(root, ToolListChangedNotification) or isinstance(message, ToolListChangedNotification):
            sup.request_rediscovery()
        elif isinstance(message, Exception):
            sup._warn(f"transport: {type(message).__name__}")
        await anyio.lowlevel.checkpoint()

    return handle
