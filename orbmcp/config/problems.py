"""What is wrong with one entry, collected while pydantic validates it, in orbmcp's words.

An invalid entry is skipped with one warning and never hides the valid ones; a key that is merely
ignored (say ``headers`` on a stdio server) gets its own warning and the entry still loads.
Validators raise ``invalid(...)`` (a pydantic error carrying orbmcp's message, so one entry's
problems arrive together in one ``ValidationError``) and note ignored keys and fixes in the
``Problems`` the validation context carries.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from orbmcp.config.basics import ConfigWarning
from orbmcp.config.jsonc import type_name

if TYPE_CHECKING:
    from pydantic import ValidationError, ValidationInfo
    from pydantic_core import PydanticCustomError

# The longest wait any setting may ask for: a day. Far above anything useful, and far below the
# values (1e308, 10**400) that overflow once turned into seconds.
MAX_DURATION_MS = 86_400_000
# The pydantic error type of orbmcp's own messages: its text is shown as it is.
ERROR_TYPE = "orbmcp"
# A hostile entry (10,000 bad env values, a key a megabyte long) still makes one readable line.
MAX_SHOWN = 5
MAX_MESSAGE = 400


def _bounded(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


class Problems:
    """Collects what is wrong with one entry: fatal problems skip it, ignored keys only warn."""

    def __init__(self, server: str | None, file: str | None) -> None:
        self.server = server
        self.file = file
        self.fatal: list[str] = []
        self.ignored: list[tuple[str, str]] = []
        self.fixes: list[str] = []  # what would fix a fatal problem (a misspelled key, a variable)
        self._fatal_reason = "invalid_entry"

    def invalid(self, message: str, *, reason: str = "invalid_entry") -> None:
        """A problem that skips the entry; the entry's one warning carries the first one's reason."""
        if not self.fatal:
            self._fatal_reason = reason
        self.fatal.append(message)

    def ignore(self, message: str, *, reason: str = "ignored_key") -> None:
        self.ignored.append((message, reason))

    def suggest(self, fix: str) -> None:
        if fix not in self.fixes:
            self.fixes.append(fix)

    def add_errors(self, error: ValidationError) -> None:
        """Every problem pydantic found, in field order: orbmcp's messages as they are, any other
        (a bug in a model, not in the file) with the key it concerns."""
        for item in error.errors(include_url=False):
            if item["type"] == ERROR_TYPE:
                self.invalid(item["msg"])
            else:
                where = ".".join(str(part) for part in item["loc"])
                self.invalid(f'"{where}": {item["msg"]}')

    def warnings(self) -> list[ConfigWarning]:
        out = [ConfigWarning(m, self.file, self.server, reason) for m, reason in self.ignored]
        if self.fatal:
            shown = [_bounded(m) for m in self.fatal[:MAX_SHOWN]]
            if len(self.fatal) > MAX_SHOWN:
                shown.append(f"and {len(self.fatal) - MAX_SHOWN} more problems")
            message = "; ".join(shown) + "; entry skipped"
            fix = "; ".join(self.fixes) or None
            out.append(
                ConfigWarning(message, self.file, self.server, self._fatal_reason, fix=fix, skipped=True)
            )
        return out


def invalid(message: str) -> PydanticCustomError:
    """The error a validator raises: orbmcp's message, kept verbatim in the ValidationError."""
    from pydantic_core import PydanticCustomError

    return PydanticCustomError(ERROR_TYPE, "{message}", {"message": message})


def problems_of(info: ValidationInfo) -> Problems:
    """The entry's collector, from the validation context (a throwaway one when validated bare)."""
    context: Any = info.context
    found = context.get("problems") if isinstance(context, dict) else None
    return found if isinstance(found, Problems) else Problems(None, None)


def show(value: object) -> str:
    """A value as a message quotes it: short, and a container only by its type."""
    text = repr(value) if not isinstance(value, dict | list) else type_name(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_int(value: object) -> int | None:
    """An integer, also from an integral float (JSON5 reads ``1e4`` as a float); never a bool."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None
