"""The edits of the header and key/value rules: given a match, what span becomes what.

``splice`` applies an edit function to every match of a rule, left to right, never twice to the
same span; the ``*_edit`` functions decide for one match (and return None to leave it).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from orbmcp.redact.keys import is_sensitive_text_key, looks_like_code
from orbmcp.redact.patterns import (
    AUTH_PARAMS_RE,
    COOKIE_PAIRS_RE,
    FIRST_TOKEN_RE,
    HEADER_KEY_AHEAD_RE,
    KEY_AHEAD_RE,
    KEY_SHAPE_RE,
    KV_VALUE_RE,
    KV_WINDOW,
    MASK,
    NON_SECRET_LITERALS,
    PARAM_SCHEMES,
    QUOTED_CONTENT_RE,
    SCHEME_RE,
    SEPARATOR_AHEAD_RE,
    TOKEN68_SCHEMES,
)

_Edit = tuple[int, int, str]


def splice(
    text: str,
    pattern: re.Pattern[str],
    edit: Callable[[re.Match[str]], _Edit | None],
) -> str:
    """Apply ``edit`` (start, end, replacement) to each match, left to right, never twice to a span.

    A key inside an earlier value still counts (``password: api_key: s3cr3t``); when its value
    starts inside the earlier edit, the part past that edit is masked. A match whose value would
    start well inside an earlier edit is dropped before its value is read, which keeps a line of
    ten thousand ``token=token=…`` linear.
    """
    pieces: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        # Slack of two: a value may open with the quote (``'`` or ``\\"``) that closed the last one.
        if m.end() < last - 2:
            continue
        change = edit(m)
        if change is None:
            continue
        start, end, new = change
        if start < last:
            if end <= last:
                continue
            start, new = last, MASK
        pieces.append(text[last:start])
        pieces.append(new)
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _quoted_value(m: re.Match[str]) -> str | None:
    quote = m.group("q")
    if quote is None:
        return None
    content = QUOTED_CONTENT_RE[quote].rx.match(m.string, m.end())
    return "" if content is None else content.group(0)


def auth_edit(m: re.Match[str]) -> _Edit | None:
    text, start = m.string, m.end()
    quoted = _quoted_value(m)
    if text.startswith(MASK, start) or _is_key_not_value(m, quoted, header_only=False):
        return None
    if quoted is not None:
        masked = _mask_quoted_auth(quoted)
        return None if masked is None else (start, start + len(quoted), masked)
    unquoted = _mask_unquoted_auth(text, start)
    return None if unquoted is None else (start, unquoted[0], unquoted[1])


def _mask_quoted_auth(value: str) -> str | None:
    """A quoted header value is masked whole, after the scheme when the scheme is a known one."""
    scheme_match = SCHEME_RE.rx.match(value)
    if scheme_match is None:
        return None if not value or value.lower() in TOKEN68_SCHEMES else MASK
    rest = value[scheme_match.end() :]
    if scheme_match.group(1).lower() not in TOKEN68_SCHEMES | PARAM_SCHEMES:
        return MASK
    if not rest or rest.startswith(MASK):
        return None
    return value[: scheme_match.end()] + MASK


def _mask_unquoted_auth(text: str, start: int) -> tuple[int, str] | None:
    """Where the credential of an unquoted header value ends, and its replacement."""
    scheme_match = SCHEME_RE.rx.match(text, start)
    if scheme_match is None:
        token = FIRST_TOKEN_RE.rx.match(text, start)
        if token is None or token.group(0).lower() in TOKEN68_SCHEMES:
            return None
        return token.end(), MASK
    lowered = scheme_match.group(1).lower()
    rest = scheme_match.end()
    if lowered in TOKEN68_SCHEMES or lowered in PARAM_SCHEMES:
        if text.startswith(MASK, rest):
            return None
        credential = (AUTH_PARAMS_RE if lowered in PARAM_SCHEMES else FIRST_TOKEN_RE).rx.match(text, rest)
        if credential is None:
            return None
        return credential.end(), text[start:rest] + MASK
    # Unknown scheme: its name may itself be the credential, and so is the token after it.
    token = FIRST_TOKEN_RE.rx.match(text, rest)
    return (token.end() if token else scheme_match.end(1)), MASK


def cookie_edit(m: re.Match[str]) -> _Edit | None:
    start = m.end()
    quoted = _quoted_value(m)
    if _is_key_not_value(m, quoted, header_only=True):
        return None
    if quoted is not None:
        return (start, start + len(quoted), MASK) if quoted else None
    pairs = COOKIE_PAIRS_RE.rx.match(m.string, start)
    return None if pairs is None else (start, pairs.end(), MASK)


def userinfo_sub(m: re.Match[str]) -> str:
    userinfo = f"{MASK}:{MASK}" if ":" in m.group("ui") else MASK
    return f"{m.group('scheme')}{userinfo}@"


def kv_edit(m: re.Match[str]) -> _Edit | None:
    key = m.group("key")
    lowered = key.lower()
    if not is_sensitive_text_key(key):
        return None
    # ``Cookie: a=b; c=d`` is masked whole by the cookie rule; only ``--cookie x`` is left here.
    if lowered.endswith("cookie") and m.group("sep").strip():
        return None
    start = m.end()
    # Decide on a bounded window: a rejected value is read again by every key inside it
    # (``code=code=code=…``), so reading it whole would make such a line quadratic.
    window = m.string[start : start + KV_WINDOW]
    found = KV_VALUE_RE.rx.match(window)
    if found is None:
        return None
    value = found.group(0)
    if m.group("dash") and not m.group("sep").strip() and value.startswith("-"):
        return None  # ``--token --verbose``: the next flag, not a value
    if lowered == "code" and not looks_like_code(value):
        return None
    # In ``password: api_key: s3cr3t`` the first "value" is the next key; its own value is masked.
    if _is_next_sensitive_key(value, window, found.end()):
        return None
    if found.end() == len(window) == KV_WINDOW:
        whole = KV_VALUE_RE.rx.match(m.string, start)
        value = whole.group(0) if whole is not None else value
    masked = _mask_kv_value(value)
    return None if masked == value else (start, start + len(value), masked)


def _mask_kv_value(value: str) -> str:
    body = value[1:] if value[:1] == "b" and value[1:2] in {'"', "'"} else value
    prefix = value[: len(value) - len(body)]
    if body.startswith('\\"'):
        inner, opening, closing = body[2:-2], '\\"', '\\"'
    elif body[:1] in {'"', "'"}:
        # A line cut off inside the string has no closing quote; the rest is still the value.
        closed = len(body) > 1 and body.endswith(body[0])
        inner, opening, closing = (body[1:-1] if closed else body[1:]), body[0], body[0] if closed else ""
    else:
        inner, opening, closing = body, "", ""
    if not inner or inner == MASK or inner.lower() in NON_SECRET_LITERALS:
        return value
    return f"{prefix}{opening}{MASK}{closing}"


def _is_key_not_value(m: re.Match[str], quoted: str | None, *, header_only: bool) -> bool:
    """``Cookie: Authorization: Bearer x``: the header's "value" is the next header, left to its rule."""
    text = m.string
    if quoted is not None:
        # The quoted text is a key when the closing quote is followed by a separator.
        end = m.end() + len(quoted) + len(m.group("q"))
        if SEPARATOR_AHEAD_RE.rx.match(text, end) is None or KEY_SHAPE_RE.rx.fullmatch(quoted) is None:
            return False
        word = quoted
    else:
        ahead = (HEADER_KEY_AHEAD_RE if header_only else KEY_AHEAD_RE).rx.match(text, m.end())
        if ahead is None:
            return False
        word = ahead.group(1)
    if word.lower().endswith(("authorization", "cookie")):
        return True
    return not header_only and is_sensitive_text_key(word)


def _is_next_sensitive_key(value: str, text: str, end: int) -> bool:
    if value[-1:] in {":", "="}:
        word = value[:-1]
    elif SEPARATOR_AHEAD_RE.rx.match(text, end):
        word = value
    else:
        return False
    if word[:2] in {"b'", 'b"'}:
        word = word[1:]
    word = word.strip("\"'\\")
    if KEY_SHAPE_RE.rx.fullmatch(word) is None:
        return False
    return word.lower().endswith(("authorization", "cookie")) or is_sensitive_text_key(word)
