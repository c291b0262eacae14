"""The OrbError tree: every failure a user or an embedding agent can see, as data.

Each error has a stable ``code`` (its category, also the JSON ``error.code``), a machine
``reason`` (finer than the code, e.g. ``unknown_server`` or ``env_missing``; defaults to the code),
a one-line ``message`` already redacted, and optionally the ``server`` concerned and a ``hint``.
Exit codes are not the library's business: ``orbmcp.commands.outcome`` maps codes to them, once.

Messages and hints name orbmcp commands with ``cmd("auth", name)``: a reference each front spells
its own way (``orbmcp auth x`` in a shell, ``/mcp:auth x`` in an agent). ``message`` and ``hint``
read in the shell's spelling; ``message_in`` / ``hint_in`` take a front's speller.

Codes: ``usage``, ``config``, ``connection``, ``protocol``, ``auth``, ``timeout``, ``tool``,
``interrupted``, ``internal``. Reasons in use are listed beside the raises that set them; a
reason is stable once released (scripts may branch on it), a message is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar

_CMD_RE = re.compile(r"\{cmd:([^{}]*)\}")

Speller = Callable[[str], str]


def cmd(*words: str) -> str:
    """A reference to an orbmcp command (``cmd("auth", "github", "--reset")``) for a message or
    hint; fronts spell it (see the module docstring)."""
    return "{cmd:" + " ".join(words) + "}"


def shell_spelling(words: str) -> str:
    return f"orbmcp {words}"


def spell(text: str, speller: Speller = shell_spelling) -> str:
    """``text`` with every command reference spelled by ``speller`` (its argument: the words)."""
    if "{cmd:" not in text:
        return text
    return _CMD_RE.sub(lambda m: speller(m.group(1)), text)


class OrbError(Exception):
    """Base of every user-facing error. See the module docstring."""

    code: ClassVar[str] = "internal"

    def __init__(
        self,
        message: str,
        *,
        server: str | None = None,
        hint: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.template = message
        self.server = server
        self.hint_template = hint
        self.reason = reason or self.code

    @property
    def message(self) -> str:
        return spell(self.template)

    @property
    def hint(self) -> str | None:
        return None if self.hint_template is None else spell(self.hint_template)

    def message_in(self, speller: Speller) -> str:
        return spell(self.template, speller)

    def hint_in(self, speller: Speller) -> str | None:
        return None if self.hint_template is None else spell(self.hint_template, speller)

    def spelled(self, speller: Speller) -> OrbError:
        """This error with its command references spelled once and for all by ``speller`` (for
        a front whose error boundary is another's: ``orbmcp slash LINE`` prints through the
        shell's)."""
        self.template = self.message_in(speller)
        self.hint_template = self.hint_in(speller)
        return self

    def __str__(self) -> str:
        return self.message

    def to_json(self, speller: Speller = shell_spelling) -> dict[str, object]:
        body: dict[str, object] = {
            "code": self.code,
            "message": self.message_in(speller),
            "server": self.server,
        }
        if self.reason != self.code:
            body["reason"] = self.reason
        hint = self.hint_in(speller)
        if hint:
            body["hint"] = hint
        return {"error": body}


class ConfigError(OrbError):
    code = "config"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        server: str | None = None,
        hint: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message, server=server, hint=hint, reason=reason)
        self.file = file


class UsageError(OrbError):
    code = "usage"


class ConnectionFailed(OrbError):
    code = "connection"


class ProtocolError(OrbError):
    code = "protocol"


class AuthError(OrbError):
    code = "auth"


class TimeoutFailed(OrbError):
    code = "timeout"


class ToolError(OrbError):
    """The tool ran and reported ``isError``; also used for a failed ``check``."""

    code = "tool"


class Interrupted(OrbError):
    code = "interrupted"


class InternalError(OrbError):
    code = "internal"
