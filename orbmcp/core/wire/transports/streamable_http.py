"""Streamable HTTP: a server at a URL, POSTs answered with JSON or an event stream.

A URL that refuses Streamable HTTP the way a 2024-11-05 server would may be legacy SSE: this
kind's ``fallback`` names the transport ``connect`` tries next (and the era cache remembers).

Connect-time only: imports ``mcp`` and ``httpx2`` at the top.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client

from orbmcp.config.transports import STREAMABLE_HTTP, TransportKind
from orbmcp.core.wire.transports.base import MAX_SSE_EVENT_BYTES, Dial, Opened, url_options
from orbmcp.net.http import ResponseHook, make_http_client

__all__ = ["StreamableHttpTransport", "http_transport"]


@asynccontextmanager
async def http_transport(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
    timeout_s: float,
    request_timeout_s: float,
    on_response: ResponseHook | None = None,
) -> AsyncIterator[TransportStreams]:
    """A Streamable HTTP ``Transport`` on an httpx2 client orbmcp creates and closes itself.

    The client has real timeouts (connect = ``timeout_s``; read never below
    ``request_timeout_s``), sends ``headers`` on every request, and reports every response to
    ``on_response``: the SDK turns 401/403/500 into one ``MCPError(-32603)``, so the hook is the
    only way to tell them apart. A 2025-era session is ended with DELETE on close.
    """
    client = make_http_client(
        headers=headers,
        auth=auth,
        timeout_s=timeout_s,
        request_timeout_s=request_timeout_s,
        on_response=on_response,
    )
    async with (
        client,
        streamable_http_client(
            url, http_client=client, terminate_on_close=True, max_sse_event_size=MAX_SSE_EVENT_BYTES
        ) as streams,
    ):
        yield streams


class StreamableHttpTransport:
    """An httpx2 client orbmcp makes for the entry's URL, headers, auth and timeouts."""

    kind: TransportKind = STREAMABLE_HTTP
    throttles_itself = False

    async def open(self, dial: Dial) -> Opened:
        return Opened(http_transport(**await url_options(dial)))
