"""The one place orbmcp builds an ``httpx2.AsyncClient``: timeouts, User-Agent, response hook.

Connect-time only (imports httpx2 at the top): nothing on the CLI start-up path imports it.
Every HTTP transport and OAuth probe goes through :func:`make_http_client`, so one TLS/proxy
configuration and one timeout policy apply everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx2

from orbmcp._version import __version__
from orbmcp.log import get_logger
from orbmcp.net.bounded import cap_response

USER_AGENT = f"orbmcp/{__version__}"

# An idle event stream (the 2025-era GET stream, a legacy SSE connection, a long tool call that
# streams nothing) must not die of a read timeout: request deadlines are the session's job
# (``read_timeout_seconds``), so the socket read timeout only has to be long enough never to
# fire first. 300 s is the SDK's own choice for these streams.
STREAM_READ_FLOOR_S = 300.0

ResponseHook = Callable[[int, Mapping[str, str]], None]
"""Called with the status and headers of every HTTP response, auth retries included."""

logger = get_logger(__name__)


def client_timeout(timeout_s: float, request_timeout_s: float) -> httpx2.Timeout:
    """connect/pool bounded by the connect budget; read/write never shorter than a request may take."""
    return httpx2.Timeout(
        connect=timeout_s,
        read=max(request_timeout_s, STREAM_READ_FLOOR_S),
        write=max(timeout_s, request_timeout_s),
        pool=timeout_s,
    )


def make_http_client(
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
    timeout_s: float,
    request_timeout_s: float,
    on_response: ResponseHook | None = None,
) -> httpx2.AsyncClient:
    """A client with orbmcp's timeouts (never httpx2's 5 s default), User-Agent, bounded
    response bodies (``bounded``: 16 MiB, an event stream per event) and hook.

    Configured ``headers`` go out on every request; a configured ``User-Agent`` wins over ours.
    The caller owns the client and must close it (``async with``).
    """
    # Compression is decoded by ``bounded`` (so that the cap counts inflated bytes); asking for
    # none spares the work with every server that listens.
    merged: dict[str, str] = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    merged.update(headers or {})
    # Every body is bounded before anything reads it (``bounded``); then the observer.
    hooks: dict[str, list[Callable[[httpx2.Response], object]]] = {"response": [cap_response]}
    if on_response is not None:
        hooks["response"].append(_response_hook(on_response))
    return httpx2.AsyncClient(
        headers=merged,
        auth=auth,
        timeout=client_timeout(timeout_s, request_timeout_s),
        event_hooks=hooks,
    )


def _response_hook(on_response: ResponseHook) -> Callable[[httpx2.Response], object]:
    async def hook(response: httpx2.Response) -> None:
        # Observing a response must never be able to fail the request that produced it.
        try:
            on_response(response.status_code, response.headers)
        except Exception:
            logger.debug("on_response callback raised", exc_info=True)

    return hook
