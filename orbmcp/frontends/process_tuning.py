"""Process-wide tuning for the orbmcp command line, which owns its process.

An agent that embeds orbmcp owns its process, so library code never does any of this; the shell
entry point calls ``tune_for_cli()`` before a command runs. Nothing happens until a command loads
the MCP SDK (``orbmcp.core.wire.sdk`` runs the import through ``_tuned_import``), so commands that
never connect pay nothing.
"""

from __future__ import annotations

import gc
import sys
import warnings
from collections.abc import Callable
from functools import partial

from orbmcp.config import pydantic_plugins
from orbmcp.core.wire import sdk

# The SDK, httpx2 and the server stacks the SDK imports log through stdlib logging at INFO (every
# request, tracebacks of cancelled streams); on a terminal that garbles the output and can show
# URLs with credentials.
_THIRD_PARTY_LOGGERS = ("mcp", "client", "httpx2", "httpcore", "httpcore2", "uvicorn", "sse_starlette")
# While the import holds the GIL for long stretches, the event loop still has spawns and pipes to
# serve, and would wait up to the default 5 ms for every hand-off.
_IMPORT_SWITCH_INTERVAL_S = 0.0005


_owned = False


def owns_process() -> bool:
    """True in the orbmcp program itself (``tune_for_cli`` ran), never in an embedder's process:
    only then may a command leave work to a detached child when it exits."""
    return _owned


def tune_for_cli(*, client_only: bool = False) -> None:
    """Make the SDK import faster, pydantic's start cheaper (no plugins: ``config/pydantic_plugins.py``)
    and keep third-party log output and warnings off the terminal.

    ``client_only``: this process never hosts an MCP server, so the SDK's server stack is left
    out of the import (``frontends/sdk_trim.py``).
    """
    global _owned  # set once, by the program's entry point
    _owned = True
    pydantic_plugins.leave_out()
    sdk.wrap_import(partial(_tuned_import, client_only=client_only))
    if sdk.loaded():  # imported before this command (an in-process caller): quiet it now
        _quiet_before_import()
        _quiet_after_import()


def _tuned_import(do_import: Callable[[], None], *, client_only: bool = False) -> None:
    if client_only:  # only now, when the SDK is really about to load
        from orbmcp.frontends import sdk_trim

        sdk_trim.install()

    _quiet_before_import()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, _IMPORT_SWITCH_INTERVAL_S))
    # The import builds ~10^5 long-lived objects (pydantic models, schemas); the cyclic collector
    # would walk them again and again while they are being built (~15 % of the import time).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        do_import()
    finally:
        # Moving them out of the collector's generations keeps every later full collection from
        # walking them (~50 ms each).
        gc.freeze()
        if was_enabled:
            gc.enable()
        sys.setswitchinterval(interval)
    _quiet_after_import()


def _quiet_before_import() -> None:
    import logging

    for name in _THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore", module=r"mcp(\..*)?")


def _quiet_after_import() -> None:
    import logging

    # The session logger's one record that matters (a dropped tool) goes to the relay orbmcp
    # puts on it, and from there to the server's warnings; nothing of it reaches the terminal.
    session = sdk.session_logger()
    if session is not None:
        session.setLevel(logging.WARNING)
        session.propagate = False
    from mcp.shared.exceptions import MCPDeprecationWarning

    warnings.simplefilter("ignore", MCPDeprecationWarning)


__all__ = ["tune_for_cli"]
