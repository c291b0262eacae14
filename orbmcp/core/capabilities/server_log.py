"""Log messages a server sends (``notifications/message``): levels, and one safe line per message.

Every message goes to the server's recent-output ring (``status NAME`` shows it with its level)
and, during ``call --verbose``, to stderr. The ring is the stderr tail's: bounded in lines and in
line length, escaped and redacted when read. ``data`` may be any JSON value; it is shown as text
(JSON for anything but a string), cut at ``MAX_TEXT`` characters before anything stores it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# RFC 5424 severities, least severe first: the levels of ``logging/setLevel``.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
MAX_TEXT = 2000
MAX_LOGGER = 100


@dataclass(frozen=True)
class LogMessage:
    """One ``notifications/message``: its level, logger and data as text (raw, cut)."""

    level: str
    logger: str | None
    text: str

    def line(self) -> str:
        """The line the recent-output ring keeps: ``[log warning] logger: text``."""
        who = f"{self.logger}: " if self.logger else ""
        return f"[log {self.level}] {who}{self.text}"


def message_from(level: object, logger: object, data: object) -> LogMessage:
    """A ``LogMessage`` from a notification's fields, whatever the server put in them."""
    lvl = level if isinstance(level, str) and level in LEVELS else "info"
    name = logger[:MAX_LOGGER] if isinstance(logger, str) and logger else None
    if isinstance(data, str):
        text = data[: MAX_TEXT + 1]
    else:
        try:
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)[: MAX_TEXT + 1]
        except (TypeError, ValueError, RecursionError):
            text = f"<{type(data).__name__}>"
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + "…"
    return LogMessage(lvl, name, text)


def check_level(value: str) -> str:
    """``value`` as a protocol log level (case-insensitive, ``warn`` for warning), or ValueError."""
    lowered = value.strip().lower()
    lowered = {"warn": "warning", "err": "error", "crit": "critical"}.get(lowered, lowered)
    if lowered not in LEVELS:
        raise ValueError(f"unknown log level {value[:40]!r}: one of {', '.join(LEVELS)}")
    return lowered


__all__ = ["LEVELS", "LogMessage", "check_level", "message_from"]
