"""The transports orbmcp reaches servers over: one module each, and the registry keyed by name.

Each module (``stdio``, ``streamable_http``, ``sse``) holds one ``ServerTransport`` (``base``): its
kind from ``orbmcp.config.transports`` (name, label, spellings, entry fields, fallback) and
``open``, which builds the SDK ``Transport`` for one connection attempt. ``connect`` looks a
transport up here by the name an entry (or the era cache's fallback) gives; nothing else compares
transport names. Adding a transport: its kind in ``config/transports.py`` (which names its entry
model, ``config/<name>_entry.py``), its module here, and its line in ``TRANSPORTS``.

Connect-time only: imports ``mcp`` and ``httpx2``.
"""

from __future__ import annotations

from orbmcp.core.wire.transports.base import Dial, Opened, ServerTransport
from orbmcp.core.wire.transports.sse import SseTransport
from orbmcp.core.wire.transports.stdio import StdioTransport
from orbmcp.core.wire.transports.streamable_http import StreamableHttpTransport

TRANSPORTS: dict[str, ServerTransport] = {
    transport.kind.name: transport
    for transport in (StdioTransport(), StreamableHttpTransport(), SseTransport())
}


def transport_for(name: str) -> ServerTransport:
    """The transport of this name (a validated entry's, or a fallback a kind names)."""
    return TRANSPORTS[name]


__all__ = ["TRANSPORTS", "Dial", "Opened", "ServerTransport", "transport_for"]
