"""Listing with cursors: the SDK returns one page; we follow at most MAX_PAGES."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

MAX_PAGES = 100
MAX_ITEMS = 100_000


class PageWarning(Exception):
    """Discovery stopped early (repeated cursor or page cap); the items so far are still usable."""


async def collect_pages(
    fetch: Callable[[str | None], Awaitable[tuple[list[dict[str, Any]], str | None]]],
    *,
    what: str,
    server: str,
    warn: Callable[[str], None],
) -> list[dict[str, Any]]:
    """Follow cursors. An empty-string cursor is a valid cursor (2026-07-28), not the end."""
    items: list[dict[str, Any]] = []
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


def tool_wire(tool: Any) -> dict[str, Any]:
    """The wire form of the fields the bridge uses, without re-serialising the schemas.

    ``model_dump(mode="json")`` deep-copies every input schema: 10,000 tools cost ~90 ms that
    way and ~10 ms this way. Schemas are passed through unchanged, so sharing them is safe.
    """
    out: dict[str, Any] = {"name": tool.name, "inputSchema": tool.input_schema}
    if tool.description is not None:
        out["description"] = tool.description
    if tool.title is not None:
        out["title"] = tool.title
    if tool.annotations is not None:
        out["annotations"] = wire(tool.annotations)
    if tool.output_schema is not None:
        out["outputSchema"] = tool.output_schema
    return out


async def list_tools(client: Any, *, server: str, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    async def fetch(cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        page = await client.list_tools(cursor=cursor)
        return [tool_wire(t) for t in page.tools], page.next_cursor

    return await collect_pages(fetch, what="tools", server=server, warn=warn)


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
