"""Make server-supplied text safe to print: no terminal control, no bidi tricks, no rich markup.

A server name, tool description or stderr line can carry escape sequences that recolour, retitle,
hyperlink or overwrite the terminal. Everything a server supplies passes through here first.
Stdlib only, so renderers that never load rich can use it. ``TextSink``, where text is written (a
terminal, a buffer, a daemon's frame), lives here too: the one protocol every layer writes through.
"""

from __future__ import annotations

import re

# ``typing`` only for mypy: the daemon's client imports this module (fastpath/__init__.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

# CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC strings, and the two-byte and nF escapes, in
# both 7-bit (ESC ...) and 8-bit (C1) introducers. An unterminated string is left for the
# control-character pass, which makes its ESC visible and harmless.
_ESCAPE_SEQUENCE_RE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)"
    r"|\x1b[ -/]+[0-~]"
    r"|\x1b[0-~]"
)
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_NEWLINE_RE = re.compile(r"\r\n|[\n\x0b\x0c\x85\u2028\u2029]")
_COLLAPSE_RE = re.compile(r"[ \t]*⏎[ \t⏎]*")

_LINE_BREAK = "⏎"
_REPLACEMENT = "\ufffd"

# Characters that render as nothing (Unicode format characters, category Cf, and the Hangul
# fillers and grapheme joiner that look blank): "ad\u200bmin" reads as "admin", and tag
# characters (U+E0020..) carry text an LLM reads but a person cannot see. The zero-width joiner is
# kept between two emoji, where it builds one picture (family, profession); it is invisible
# anywhere else. Listed by hand: deriving it from ``unicodedata`` costs ~100 ms at import.
_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200C),
    (0x200E, 0x200F),
    (0x2060, 0x2065),
    (0x206A, 0x206F),
    (0x3164, 0x3164),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE007F),
)
_INVISIBLE = frozenset(code for low, high in _INVISIBLE_RANGES for code in range(low, high + 1))
_ZWJ = "\u200d"
# What a ZWJ may join: these characters and ranges. Checked by hand, not by a regex: a character
# class this wide in a lookbehind takes ~2-5 ms to compile, on every start (the daemon's client
# imports this module).
_EMOJI_CHARS = frozenset("\u00a9\u00ae\u203c\u2049\ufe0f")
_EMOJI_RANGES = ((0x2122, 0x2BFF), (0x1F000, 0x1FAFF))
# What ``shown_name`` spells as an escape: controls, bidi controls, surrogates and the invisible.
_NAME_ESCAPE_RE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200d\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
    + "".join(f"{chr(low)}-{chr(high)}" for low, high in _INVISIBLE_RANGES)
    + "]"
)


def _control_table(*, multiline: bool) -> dict[int, str]:
    # C0 controls become their visible Control Pictures (U+2400 block): a `\r` overwrite trick
    # shows up as ␍ instead of hiding the text before it.
    table = {code: chr(0x2400 + code) for code in range(0x20)}
    table[0x7F] = "\u2421"
    table.update(dict.fromkeys(range(0x80, 0xA0), _REPLACEMENT))
    # Explicit bidi embeddings, overrides and isolates reorder what the user reads (Trojan Source).
    table.update(dict.fromkeys((*range(0x202A, 0x202F), *range(0x2066, 0x206A)), _REPLACEMENT))
    table.update(dict.fromkeys(_INVISIBLE, _REPLACEMENT))
    table[ord("\t")] = "\t" if multiline else " "
    if multiline:
        table[ord("\n")] = "\n"
    return table


_SINGLE_LINE_TABLE = _control_table(multiline=False)
_MULTILINE_TABLE = _control_table(multiline=True)


def safe_text(s: str, *, max_len: int | None = None, multiline: bool = False) -> str:
    """``s`` with escape sequences removed and control characters made visible.

    Newlines and tabs survive only with ``multiline``; otherwise a newline becomes ``⏎``. With
    ``max_len`` the result keeps that many characters and ends with ``…[+N chars]``.
    """
    if not isinstance(s, str):
        s = str(s)
    if _SURROGATE_RE.search(s):
        s = _SURROGATE_RE.sub(_REPLACEMENT, s)
    if "\x1b" in s or any(c in s for c in "\x90\x98\x9b\x9d\x9e\x9f"):
        s = _ESCAPE_SEQUENCE_RE.sub("", s)
    s = _NEWLINE_RE.sub("\n" if multiline else _LINE_BREAK, s)
    if _ZWJ in s:
        s = _without_stray_zwj(s)
    s = s.translate(_MULTILINE_TABLE if multiline else _SINGLE_LINE_TABLE)
    return _truncate(s, max_len)


def _joins(c: str) -> bool:
    code = ord(c)
    return c in _EMOJI_CHARS or any(low <= code <= high for low, high in _EMOJI_RANGES)


def _without_stray_zwj(s: str) -> str:
    """Every zero-width joiner that does not stand between two emoji made visible."""
    out = list(s)
    last = len(s) - 1
    for i, c in enumerate(s):
        if c == _ZWJ and not (0 < i < last and _joins(s[i - 1]) and _joins(s[i + 1])):
            out[i] = _REPLACEMENT
    return "".join(out)


# What a terminal may be sent on behalf of another process (the session daemon's output frames):
# colour and style (SGR) and the cursor moves and line erases a live display (a progress bar)
# redraws with, in their 7-bit form. Everything else that reaches a terminal as a command (OSC:
# titles, clipboard writes (OSC 52), hyperlinks; DCS/APC/PM/SOS strings; other CSI such as
# reports that inject input; 8-bit C1 introducers) is removed, and a stray C0 control other than
# tab, newline and carriage return is made visible.
_KEPT_SEQUENCE_RE = re.compile(r"\x1b\[(?:[0-9;:]*m|[0-9]*[ABCDGK]|\?25[hl])")
_OUTPUT_CONTROL_RE = re.compile(f"{_ESCAPE_SEQUENCE_RE.pattern}|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_OUTPUT_TABLE = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}


def _output_piece(match: re.Match[str]) -> str:
    piece = match.group()
    if _KEPT_SEQUENCE_RE.fullmatch(piece):
        return piece
    if len(piece) > 1:
        return ""
    return _OUTPUT_TABLE.get(ord(piece), _REPLACEMENT)


def terminal_output(s: str) -> str:
    """Output rendered elsewhere, made safe for this terminal: styling kept, control removed."""
    if not _OUTPUT_CONTROL_RE.search(s):
        return s
    return _OUTPUT_CONTROL_RE.sub(_output_piece, s)


def shown_name(name: str) -> str:
    """A server-supplied name (a tool's, a prompt's) as a person can read it and type it back.

    A name of visible characters is shown as it is. Otherwise every control, invisible or bidi
    character is spelled ``\\xNN``/``\\uNNNN``/``\\UNNNNNNNN`` and a backslash ``\\\\``, so
    ``bad\\x1b[31mname`` is what the listing shows and what ``call`` accepts, and two names that
    differ only invisibly are shown differently.
    """
    if not _NAME_ESCAPE_RE.search(name):
        return name
    out: list[str] = []
    for c in name:
        code = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif not _NAME_ESCAPE_RE.match(c):
            out.append(c)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def one_line(s: str, *, max_len: int | None = None) -> str:
    """For a table cell or a status line: line breaks collapse to a single `` ⏎ ``, ends trimmed."""
    text = safe_text(s).strip(" \t" + _LINE_BREAK)
    text = _COLLAPSE_RE.sub(f" {_LINE_BREAK} ", text)
    return _truncate(text, max_len)


def _truncate(s: str, max_len: int | None) -> str:
    if max_len is None or len(s) <= max_len:
        return s
    keep = max(max_len, 0)
    return f"{s[:keep]}…[+{len(s) - keep} chars]"


if TYPE_CHECKING:

    class TextSink(Protocol):
        """Where printed text goes: ``sys.stdout``, an ``io.StringIO``, a daemon client's frames
        (a type only: import it under ``TYPE_CHECKING``)."""

        def write(self, text: str, /) -> Any: ...

        def flush(self) -> Any: ...
