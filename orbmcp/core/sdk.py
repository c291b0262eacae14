"""Loading the MCP SDK off the event loop, once.

``import mcp`` costs 0.6 to 1.1 s. A one-shot command spawns its stdio servers first and imports the
SDK in a worker thread meanwhile, so the server's start-up and the import overlap (DESIGN hint in
the connections issue).
"""

from __future__ import annotations

import gc
import importlib
import logging
import sys
import warnings

import anyio

_MODULES = (
    "mcp",
    "mcp_types",
    "mcp.client.client",
    "mcp.shared.exceptions",
    "mcp.shared.message",
    "httpx2",
)
_lock: anyio.Lock | None = None
_logging_set = False


def _import_all() -> None:
    # The import builds ~10^5 long-lived objects (pydantic models, schemas); the cyclic collector
    # would walk them again and again while they are being built (~15 % of the import time).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name in _MODULES:
            importlib.import_module(name)
        quiet_sdk_logging()
    finally:
        # Moving them out of the collector's generations keeps every later full collection from
        # walking them (~50 ms each).
        gc.freeze()
        if was_enabled:
            gc.enable()


class _DroppedToolRelay(logging.Handler):
    """The one SDK log line a user must see: a tool it dropped from a listing (an invalid
    ``x-mcp-header`` on 2026-07-28). It goes to the server being listed (``discovery``'s context
    variable), never to the terminal; every other record of that logger is discarded."""

    def emit(self, record: logging.LogRecord) -> None:
        # SDK 2.3: logger.warning("dropping tool %r: invalid x-mcp-header (%s)", name, reason)
        if isinstance(record.msg, str) and record.msg.startswith("dropping tool"):
            from orbmcp.core.discovery import report_dropped_tool

            args = record.args if isinstance(record.args, tuple) and len(record.args) == 2 else None
            report_dropped_tool(*(str(a) for a in args) if args else ("?", record.getMessage()))


def quiet_sdk_logging() -> None:
    global _logging_set
    _logging_set = True
    # The SDK and httpx2 log through stdlib logging at INFO (every request, cancelled-stream
    # tracebacks); that output would garble the terminal and can carry URLs with credentials.
    for name in ("mcp", "client", "httpx2", "httpcore", "httpcore2", "uvicorn", "sse_starlette"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # The SDK's session module logs as "client" (2.3); take its logger object, whatever its name.
    session_log = getattr(sys.modules.get("mcp.client.session"), "logger", None)
    if not isinstance(session_log, logging.Logger):  # pragma: no cover - a future SDK layout
        return
    if not any(isinstance(h, _DroppedToolRelay) for h in session_log.handlers):
        session_log.setLevel(logging.WARNING)
        session_log.propagate = False
        session_log.addHandler(_DroppedToolRelay())
    warnings.filterwarnings("ignore", module=r"mcp(\..*)?")
    try:
        from mcp.shared.exceptions import MCPDeprecationWarning  # type: ignore[attr-defined,unused-ignore]

        warnings.simplefilter("ignore", MCPDeprecationWarning)
    except ImportError:  # pragma: no cover - older SDKs
        pass


def loaded() -> bool:
    return all(name in sys.modules for name in _MODULES)


async def ensure_sdk() -> None:
    """Import the SDK in a worker thread; concurrent callers share one import."""
    global _lock
    if loaded():
        if not _logging_set:  # imported by someone else first (an agent host, a test)
            quiet_sdk_logging()
        return
    if _lock is None:
        _lock = anyio.Lock()
    async with _lock:
        if not loaded():
            # The import holds the GIL for long stretches; the event loop still has spawns and
            # pipes to serve meanwhile, and would wait up to 5 ms for every hand-off.
            interval = sys.getswitchinterval()
            sys.setswitchinterval(min(interval, 0.0005))
            try:
                await anyio.to_thread.run_sync(_import_all)
            finally:
                sys.setswitchinterval(interval)
