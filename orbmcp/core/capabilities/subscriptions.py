"""Following a resource: subscribe, and run a callback each time the server says it changed.

2025-era servers take ``resources/subscribe`` and then send ``notifications/resources/updated``;
2026-07-28 servers deliver the same event inside a ``subscriptions/listen`` stream. Updates that
arrive while the callback still runs are coalesced into one more run, so a server that floods
notifications costs one re-read at a time, never a growing queue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.client.subscriptions import ResourceUpdated
from mcp_types import EmptyResult, SubscribeRequest, SubscribeRequestParams, UnsubscribeRequest
from mcp_types import UnsubscribeRequestParams as UnsubscribeParams

from orbmcp.core.capabilities.client_side import is_legacy
from orbmcp.core.tooling.calls import request
from orbmcp.errors import UsageError

if TYPE_CHECKING:
    from orbmcp.core.session.supervisor import Supervisor

UNSUBSCRIBE_WAIT_S = 2.0


def _offers_subscriptions(sup: Supervisor) -> bool:
    resources = getattr(getattr(sup.client, "server_capabilities", None), "resources", None)
    return bool(getattr(resources, "subscribe", False))


async def follow(sup: Supervisor, uri: str, on_update: Callable[[], Awaitable[None]]) -> None:
    """Until cancelled: ``on_update()`` after every change of ``uri`` the server reports."""
    if is_legacy(sup.snap.protocol_version):
        if not _offers_subscriptions(sup):
            raise UsageError(
                f"server '{sup.name}' does not offer resource subscriptions",
                server=sup.name,
                reason="unsupported",
            )
        await _follow_legacy(sup, uri, on_update, request)
    else:
        await _follow_modern(sup, uri, on_update)


async def _follow_legacy(
    sup: Supervisor, uri: str, on_update: Callable[[], Awaitable[None]], request: Any
) -> None:
    changed = anyio.Event()

    def listener(updated: str) -> None:
        if updated == uri:
            changed.set()

    listeners = sup.client_side.resource_listeners
    listeners.append(listener)
    try:
        subscribe = SubscribeRequest(params=SubscribeRequestParams(uri=uri))
        await request(
            sup, f"resources/subscribe {uri}", lambda c: c.session.send_request(subscribe, EmptyResult)
        )
        while True:
            await changed.wait()
            changed = anyio.Event()
            await on_update()
    finally:
        listeners.remove(listener)
        client = sup.client
        if client is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(UNSUBSCRIBE_WAIT_S):
                try:
                    request_ = UnsubscribeRequest(params=UnsubscribeParams(uri=uri))
                    await client.session.send_request(request_, EmptyResult)
                except Exception:
                    pass  # the session may be gone; the server forgets subscriptions with it


async def _follow_modern(sup: Supervisor, uri: str, on_update: Callable[[], Awaitable[None]]) -> None:
    client = sup.client
    if client is None:
        raise UsageError(f"server '{sup.name}' is not connected", server=sup.name, reason="not_connected")
    async with client.listen(resource_subscriptions=(uri,)) as sub:
        async for event in sub:
            if isinstance(event, ResourceUpdated) and str(event.uri) == uri:
                await on_update()


__all__ = ["follow"]
