"""Exit statuses: the one place an error (or a result's outcome) becomes a process exit code.

The library raises errors as data (``orbmcp.errors``); every front that reports an exit status
(the shell, ``orbmcp slash``, the REPL, the daemon) asks here.
"""

from __future__ import annotations

from enum import IntEnum

from orbmcp.errors import OrbError


class ExitCode(IntEnum):
    OK = 0
    TOOL_ERROR = 1  # a tool returned isError, or a check failed
    USAGE = 2
    CONFIG = 3
    CONNECTION = 4  # connection or protocol
    AUTH = 5
    TIMEOUT = 6
    INTERNAL = 70
    INTERRUPTED = 130


_BY_CODE: dict[str, ExitCode] = {
    "tool": ExitCode.TOOL_ERROR,
    "usage": ExitCode.USAGE,
    "config": ExitCode.CONFIG,
    "connection": ExitCode.CONNECTION,
    "protocol": ExitCode.CONNECTION,
    "auth": ExitCode.AUTH,
    "timeout": ExitCode.TIMEOUT,
    "interrupted": ExitCode.INTERRUPTED,
    "internal": ExitCode.INTERNAL,
}


def exit_code_for_code(code: str | None, *, default: ExitCode = ExitCode.CONNECTION) -> ExitCode:
    """The status of an error code (``OrbError.code``); ``default`` for none or an unknown one."""
    return _BY_CODE.get(code or "", default)


def exit_code_for(exc: BaseException) -> ExitCode:
    """The one mapping from an exception to a process exit status."""
    if isinstance(exc, OrbError):
        return exit_code_for_code(exc.code, default=ExitCode.INTERNAL)
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    return ExitCode.INTERNAL
