"""Listing with cursors: the SDK returns one page; we follow at most MAX_PAGES."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

if TYPE_CHECKING:
    from orbmcp.core.tooling.listings import ToolListingSalvage

T = TypeVar("T")

MAX_PAGES = 100
MAX_ITEMS = 100_000


# Where a tool the SDK drops while listing is reported: the warn hook of the listing in progress
# (the SDK logs the drop synchronously, in the task that awaits the listing).
_dropped_tool_sink: ContextVar[Callable[[str], None] | None] = ContextVar("orbmcp_dropped_tool", default=None)


def report_dropped_tool(tool: str, reason: str) -> None:
    sink = _dropped_tool_sink.get()
    if sink is not None:
        sink(
            f"tool '{tool[:200]}' is not available: {reason[:400]} (2026-07-28 clients must drop such tools)"
        )


async def collect_pages(
    fetch: Callable[[str | None], Awaitable[tuple[list[T], str | None]]],
    *,
    what: str,
    server: str,
    warn: Callable[[str], None],
) -> list[T]:
    """Follow cursors. An empty-string cursor is a valid cursor (2026-07-28), not the end."""
    items: list[T] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page, cursor = await fetch(cursor)
        items.extend(page)
        if cursor is None or len(items) >= MAX_ITEMS:
            return items[:MAX_ITEMS]
        if cursor in seen:
            warn(f"server '{server}' repeated a {what} cursor; stopped after {len(seen) + 1} pages")
            return items
        seen.add(cursor)
    warn(f"server '{server}' sent more than {MAX_PAGES} pages of {what}; using the first {MAX_PAGES}")
    return items


def wire(model: Any) -> dict[str, Any]:
    """An SDK model in its wire (camelCase) JSON form."""
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


async def list_tools(
    client: Any, *, server: str, warn: Callable[[str], None], salvage: ToolListingSalvage | None = None
) -> list[Any]:
    """Every page of ``tools/list`` as the SDK's ``Tool`` models.

    Models, not wire dicts: ``ToolRegistry.sync`` reads their attributes, and turning 10,000
    tools into dicts first would cost more than the registry's own work (``bench/bench_status.py``).
    A page the SDK refuses because of invalid tools is taken from ``salvage`` (the connection's
    raw pages) without them, each skipped tool a warning; the rest of the server stays usable.
    """

    async def fetch(cursor: str | None) -> tuple[list[Any], str | None]:
        try:
            page = await client.list_tools(cursor=cursor)
        except ValidationError:
            rescued = salvage.salvage(cursor) if salvage is not None else None
            if rescued is None:
                raise
            page = rescued
        if salvage is not None:
            salvage.forget()
        return list(page.tools), page.next_cursor

    # No tool goes missing silently: one the SDK filters out becomes a warning of this server.
    token = _dropped_tool_sink.set(lambda message: warn(f"server '{server}': {message}"))
    try:
        return await collect_pages(fetch, what="tools", server=server, warn=warn)
    finally:
        _dropped_tool_sink.reset(token)


async def list_resources(client: Any, *, server: str, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    async def fetch(cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        page = await client.list_resources(cursor=cursor)
        return [wire(r) for r in page.resources], page.next_cursor

    return await collect_pages(fetch, what="resources", server=server, warn=warn)


async def list_prompts(client: Any, *, server: str, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    async def fetch(cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        page = await client.list_prompts(cursor=cursor)
        return [wire(p) for p in page.prompts], page.next_cursor

    return await collect_pages(fetch, what="prompts", server=server, warn=warn)
