"""A legacy SSE server's entry: ``{"transport": "sse", "url": ...}``."""

from __future__ import annotations

from typing import Literal

from orbmcp.config.http_entry import UrlEntry


class SseEntry(UrlEntry):
    """The same fields as Streamable HTTP; only the wire differs."""

    transport: Literal["sse"] = "sse"
