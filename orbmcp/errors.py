"""The OrbError tree and the single place that maps errors to exit codes.

Every error a user can see is an OrbError with a stable ``code`` (also the JSON ``error.code``)
and an exit status. Anything else that escapes is a bug: exit 70 with a crash log.
"""

from __future__ import annotations

from enum import IntEnum


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


class OrbError(Exception):
    """Base of every user-facing error. ``message`` is one line, already redacted."""

    code: str = "internal"
    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, *, server: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.server = server
        self.hint = hint

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, object]:
        body: dict[str, object] = {"code": self.code, "message": self.message, "server": self.server}
        if self.hint:
            body["hint"] = self.hint
        return {"error": body}


class ConfigError(OrbError):
    code = "config"
    exit_code = ExitCode.CONFIG

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        server: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, server=server, hint=hint)
        self.file = file


class UsageError(OrbError):
    code = "usage"
    exit_code = ExitCode.USAGE


class ConnectionFailed(OrbError):
    code = "connection"
    exit_code = ExitCode.CONNECTION


class ProtocolError(OrbError):
    code = "protocol"
    exit_code = ExitCode.CONNECTION


class AuthError(OrbError):
    code = "auth"
    exit_code = ExitCode.AUTH


class TimeoutFailed(OrbError):
    code = "timeout"
    exit_code = ExitCode.TIMEOUT


class ToolError(OrbError):
    """The tool ran and reported ``isError``; also used for a failed ``check``."""

    code = "tool"
    exit_code = ExitCode.TOOL_ERROR


class Interrupted(OrbError):
    code = "interrupted"
    exit_code = ExitCode.INTERRUPTED


class InternalError(OrbError):
    code = "internal"
    exit_code = ExitCode.INTERNAL


def exit_code_for(exc: BaseException) -> ExitCode:
    """The one mapping from an exception to a process exit status."""
    if isinstance(exc, OrbError):
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    return ExitCode.INTERNAL
