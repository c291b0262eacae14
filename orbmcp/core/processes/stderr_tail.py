"""The last lines a server wrote to stderr, kept raw and bounded, made safe and redacted when read.

Shown as "Recent output" by ``status <server>``, and one tail is kept per server across restarts,
so a crash loop still shows what the server said before it died.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from orbmcp.text import one_line


def _identity(text: str) -> str:
    return text


class StderrTail:
    """The last ``max_lines`` stderr lines of a server, cleaned and redacted when read.

    Raw lines are kept (each capped at 4 bytes per allowed character) and only cleaned and
    redacted in ``lines()``: a flood of millions of lines then costs one ``split`` per chunk
    instead of a regex pass and a redactor call per line. Memory stays below roughly
    ``max_lines * max_line_chars * 4`` bytes whatever the server writes.
    """

    def __init__(
        self,
        *,
        redact: Callable[[str], str] = _identity,
        max_lines: int = 100,
        max_line_chars: int = 2000,
    ) -> None:
        self._redact = redact
        self._max_line_chars = max_line_chars
        self._max_line_bytes = max_line_chars * 4
        self._max_lines = max_lines
        self._raw: deque[tuple[bytes, bool]] = deque(maxlen=max_lines)
        self._pending = bytearray()
        self._pending_truncated = False
        self.committed = 0  # lines kept so far, ever: ``lines_since`` counts from a mark of it

    def feed(self, data: bytes) -> None:
        """Add a chunk of raw stderr bytes."""
        parts = data.split(b"\n")
        self._extend_pending(parts[0])
        if len(parts) == 1:
            return
        self._commit(bytes(self._pending), self._pending_truncated)
        # Only the last max_lines complete lines of a chunk can survive in the deque.
        for part in parts[1:-1][-self._max_lines :]:
            limit = self._max_line_bytes
            self._commit(part[:limit], len(part) > limit)
        self._pending = bytearray()
        self._pending_truncated = False
        self._extend_pending(parts[-1])

    def flush(self) -> None:
        """Commit a final line that ended without a newline (the stream reached EOF)."""
        if self._pending:
            self._commit(bytes(self._pending), self._pending_truncated)
        self._pending = bytearray()
        self._pending_truncated = False

    def add_line(self, text: str) -> None:
        """One whole line from orbmcp's side of the conversation (a server's log message): kept
        like a stderr line, so it is bounded, cleaned and redacted the same way."""
        raw = text.encode("utf-8", "replace")
        self._commit(raw[: self._max_line_bytes], len(raw) > self._max_line_bytes)

    def lines(self) -> list[str]:
        """The retained lines, oldest first: made safe to print (``orbmcp.text``), redacted, bounded."""
        out: list[str] = []
        for raw, truncated in self._raw:
            line = self._clean(raw, truncated)
            if line:
                out.append(line)
        return out

    def _extend_pending(self, part: bytes) -> None:
        room = self._max_line_bytes - len(self._pending)
        if len(part) > room:
            self._pending_truncated = True
            part = part[: max(room, 0)]
        self._pending += part

    def lines_since(self, mark: int) -> list[str]:
        """The retained lines committed after ``committed`` was ``mark`` (one process's output)."""
        fresh = self.committed - mark
        return self.lines()[-fresh:] if fresh > 0 else []

    def _commit(self, raw: bytes, truncated: bool) -> None:
        if raw.strip():
            self._raw.append((raw, truncated))
            self.committed += 1

    def _clean(self, raw: bytes, truncated: bool) -> str:
        text = raw.decode("utf-8", "replace")
        if "\r" in text:
            # A terminal would show only what the last carriage return left (progress bars).
            segments = [segment for segment in text.split("\r") if segment]
            text = segments[-1] if segments else ""
        # Made safe before redaction so the redactor sees plain text, and again after it.
        text = one_line(self._redact(one_line(text))).strip()
        if truncated or len(text) > self._max_line_chars:
            text = text[: self._max_line_chars - 1] + "…"
        return text


__all__ = ["StderrTail"]
