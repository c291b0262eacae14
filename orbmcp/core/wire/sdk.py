"""Loading the MCP SDK off the event loop, once, and hearing the one SDK log record a user must see.

``import mcp`` costs 0.6 to 1.1 s. A command that connects spawns its stdio servers first and
imports the SDK in a worker thread meanwhile, so a server's start-up and the import overlap.

This is library code, also inside someone else's agent: it leaves the process alone (no garbage
collector, switch interval, warning filter or log level is changed here). The process owner may
wrap the import (``wrap_import``); the CLI entry point does, to make it faster
(``orbmcp.frontends.process_tuning``). What correctness needs stays here: the relay that turns a
tool the SDK drops from a listing into a warning of its server. Every command imports this module
(``--help`` included), so ``anyio``, ``logging`` and ``discovery`` (pydantic) are imported inside
the functions that need them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

    import anyio

_MODULES = (
    "mcp",
    "mcp_types",
    "mcp.client.client",
    "mcp.shared.exceptions",
    "mcp.shared.message",
    "httpx2",
)
# SDK 2.3 logs a dropped tool as: logger.warning("dropping tool %r: invalid x-mcp-header (%s)", ...)
_DROPPED_TOOL_PREFIX = "dropping tool"

ImportWrapper = Callable[[Callable[[], None]], None]
# Imported by the CLI entry point before every command, so this module imports nothing heavy at
# load time (anyio and logging come with the first connection).

_lock: anyio.Lock | None = None
_wrapper: ImportWrapper | None = None


def wrap_import(wrapper: ImportWrapper | None) -> None:
    """From now on run the SDK import as ``wrapper(do_import)`` (None: plainly), in the worker
    thread that imports. For the owner of the process (a CLI entry point), never for a library."""
    global _wrapper
    _wrapper = wrapper


def loaded() -> bool:
    return all(name in sys.modules for name in _MODULES)


async def ensure_sdk() -> None:
    """Import the SDK in a worker thread; concurrent callers share one import."""
    global _lock
    if not loaded():
        import anyio

        if _lock is None:
            _lock = anyio.Lock()
        async with _lock:
            if not loaded():
                job = _import_all if _wrapper is None else partial(_wrapper, _import_all)
                await anyio.to_thread.run_sync(job)
    install_dropped_tool_relay()


def _import_all() -> None:
    for name in _MODULES:
        importlib.import_module(name)


def session_logger() -> logging.Logger | None:
    """The logger of the SDK's session module (named "client" in 2.3), once the SDK is loaded."""
    import logging

    logger = getattr(sys.modules.get("mcp.client.session"), "logger", None)
    return logger if isinstance(logger, logging.Logger) else None


def install_dropped_tool_relay() -> None:
    """Put the relay on the SDK's session logger (once). Only a handler is added: the level,
    propagation and other handlers of that logger stay as whoever owns the process set them. A
    host that raises that logger above WARNING silences the record, and with it the relay: there
    is no other signal of a dropped tool than this record."""
    logger = session_logger()
    if logger is None:  # pragma: no cover - a future SDK layout
        return
    if not any(getattr(handler, "orbmcp_dropped_tool_relay", False) for handler in logger.handlers):
        logger.addHandler(_dropped_tool_relay())


def _dropped_tool_relay() -> logging.Handler:
    """A handler that sends "dropping tool" records to the server being listed (``discovery``'s
    context variable) and ignores every other record."""
    import logging

    class DroppedToolRelay(logging.Handler):
        orbmcp_dropped_tool_relay = True

        def emit(self, record: logging.LogRecord) -> None:
            if isinstance(record.msg, str) and record.msg.startswith(_DROPPED_TOOL_PREFIX):
                from orbmcp.core.session.discovery import report_dropped_tool

                args = record.args if isinstance(record.args, tuple) and len(record.args) == 2 else None
                report_dropped_tool(*(str(a) for a in args) if args else ("?", record.getMessage()))

    return DroppedToolRelay()
