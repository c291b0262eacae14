"""One redactor for everything that leaves the process as text: debug log, stderr buffer, errors.

Rules run in a fixed order; each leaves ``<redacted>`` in a form the later rules (and a second
pass) skip, which is what makes ``redact`` idempotent. Over-masking a harmless value is accepted;
leaking a credential is not. Stdlib only: this module sits on the CLI start-up path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import pairwise

MASK = "<redacted>"

_MIN_SECRET_LEN = 4
_MAX_DEPTH = 64
_CACHED_KEY_LEN = 128


class _LazyPattern:
    """A regex compiled on first use: compiling them all costs milliseconds the CLI start-up
    should not pay when nothing is redacted."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled


# Token68 schemes carry one credential token after the scheme name; parameter schemes carry a
# comma-separated list that is masked whole. Anything else is masked without keeping the scheme.
_TOKEN68_SCHEMES = frozenset({"bearer", "basic", "dpop", "negotiate", "ntlm", "pop"})
_PARAM_SCHEMES = frozenset({"digest", "hoba", "mutual", "aws4-hmac-sha256", "signature", "gnap"})

# Substrings of a normalised key (lower case, no ``-_.``) that mark it sensitive in free text.
_STRONG_KEY_PARTS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "privatekey",
    "credential",
    "verifier",
    "sessionid",
    "signature",
    "cookie",
)
# Whole components that are sensitive only on their own (``pwd`` but not ``pwdump``).
_WEAK_KEY_COMPONENTS = frozenset({"pwd", "session", "assertion", "jwt"})
# A key whose last component names metadata about a secret holds no secret: token_type,
# token_endpoint, password_file, client_secret_expires_at, token_endpoint_auth_methods_supported.
_NON_SECRET_LAST = frozenset(
    {
        "type",
        "types",
        "endpoint",
        "url",
        "uri",
        "file",
        "path",
        "dir",
        "name",
        "names",
        "expires",
        "expiry",
        "expiration",
        "at",
        "in",
        "ttl",
        "lifetime",
        "method",
        "methods",
        "supported",
        "length",
        "env",
        "var",
        "hint",
        "required",
        "present",
        "format",
    }
)
# R-H3: sensitive JSON keys by case-insensitive substring (keys normalised to ``_``).
_MAPPING_KEY_PARTS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "api_key",
    "apikey",
    "auth",
    "credentials",
    "mysql_pwd",
    "privatekey",
    "private_key",
    "token",
    "session",
    "csrftoken",
    "x_forwarded_for",
    "cookie",
    "verifier",
    "assertion",
)
_QUERY_KEYS = (
    "code|state|token|access_token|refresh_token|id_token|client_secret|client_assertion|code_verifier"
    "|api_key|apikey|api-key|key|sig|signature|assertion|password|passwd|pwd|secret|session|sessionid"
    "|jwt|auth|awsaccesskeyid|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature"
    "|x-goog-credential"
)
_NON_SECRET_LITERALS = frozenset({"null", "true", "false", "none", "nil", "undefined"})

# Only key, separator and an opening quote are consumed; the value is read from the match end,
# so the scan goes on inside it and a second header on the same line is still found.
# A quoted key also allows the ``('authorization', 'Bearer x')`` form of a header list repr.
_HEADER_HEAD = (
    r"""(?<!\w)(?P<key>(?:\w+-)*{name})(?P<kq>\\?["'])?"""
    r"""[ \t]*(?(kq)(?:[:=]|,[ \t]*b?)|[:=])[ \t]*(?P<q>\\"|["'])?"""
)
_AUTH_RE = _LazyPattern(_HEADER_HEAD.format(name="authorization"), re.IGNORECASE)
_COOKIE_RE = _LazyPattern(_HEADER_HEAD.format(name="cookie"), re.IGNORECASE)
_QUOTED_CONTENT_RE = {
    '"': _LazyPattern(r"""(?:[^"\\\r\n]|\\.)*"""),
    "'": _LazyPattern(r"""(?:[^'\\\r\n]|\\.)*"""),
    '\\"': _LazyPattern(r"""[^"\\\r\n]*"""),
}
_SCHEME_RE = _LazyPattern(r"([A-Za-z][\w.+-]*)[ \t]+")
_FIRST_TOKEN_RE = _LazyPattern(r"""[^\s,;"']+""")
_AUTH_PARAM = r"""[\w-]+[ \t]*=[ \t]*(?:"(?:[^"\\\r\n]|\\.)*"|[^\s,"']*)"""
_AUTH_PARAMS_RE = _LazyPattern(_AUTH_PARAM + r"(?:[ \t]*,[ \t]*" + _AUTH_PARAM + ")*")
_COOKIE_PAIRS_RE = _LazyPattern(r"""[^\s;,"']+(?:;[ \t]*[^\s;,"'=]+=[^\s;,"']*)*""")

_USERINFO_RE = _LazyPattern(r"""(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<ui>[^\s/?#"'<>\\]+)@""")
_QUERY_RE = _LazyPattern(
    r"""(?P<head>[?&#;](?:""" + _QUERY_KEYS + r""")=)(?!<redacted>)(?P<val>[^&#\s"'<>\\]+)""",
    re.IGNORECASE,
)
# Key and separator only: the value is read by the edit, so a rejected key never hides a sensitive
# key inside its value from the scan.
_KV_RE = _LazyPattern(
    r"""(?<![\w.\-])(?P<dash>--)?(?P<q>\\?["'])?(?P<key>[A-Za-z_][\w.\-]*)(?(q)(?P=q))"""
    r"""(?P<sep>[ \t]*[:=][ \t]*|(?(dash)[ \t]+(?![:=])|(?!)))"""
)
# Read at the end of a key match, only for a sensitive key: a regex lookahead here would rescan
# the rest of ``token=token=token=…`` at every key.
_KV_VALUE_RE = _LazyPattern(
    r"""b?"(?:[^"\\\r\n]|\\.)*(?:"|(?=[\r\n])|\Z)|b?'(?:[^'\\\r\n]|\\.)*(?:'|(?=[\r\n])|\Z)"""
    r"""|\\"[^"\r\n]*?\\"|(?!<redacted>)[^\s,;&"'(){}\[\]]+"""
)
_KV_WINDOW = 512
_KV_TRIGGER_RE = _LazyPattern(
    "|".join(_STRONG_KEY_PARTS) + r"|pwd|session|assertion|jwt|code|key|pass.phrase"
)
_SEPARATOR_AHEAD_RE = _LazyPattern(r"[ \t]*[:=]")
_KEY_SHAPE_RE = _LazyPattern(r"[A-Za-z_][\w.\-]*")
_KEY_AHEAD_RE = _LazyPattern(r"""\\?["']?([A-Za-z_][\w.\-]*)\\?["']?[ \t]*[:=]""")
_HEADER_KEY_AHEAD_RE = _LazyPattern(r"""\\?["']?([A-Za-z_][\w.\-]*)\\?["']?[ \t]*:""")
_CAMEL_RE = _LazyPattern(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Long, opaque, and either has a digit or mixes case: an authorization code, not ``invalid_grant``.
_CODE_VALUE_RE = _LazyPattern(r"(?=.*\d|(?=.*[a-z])(?=.*[A-Z]))[A-Za-z0-9._~+/=\-]{16,}")

_VALUE_RE = _LazyPattern(
    r"""(?<![A-Za-z0-9_\-])(?:"""
    r"""eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]*)?"""
    r"""|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"""
    r"""|xox[abposre]-[A-Za-z0-9\-]{10,}"""
    r"""|sk-[A-Za-z0-9_\-]{16,}"""
    r"""|(?:AKIA|ASIA)[0-9A-Z]{16}"""
    r"""|AIza[0-9A-Za-z_\-]{35}|glpat-[0-9A-Za-z_\-]{20,}|npm_[A-Za-z0-9]{36}"""
    r""")|-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY-----|\Z)"""
)
_VALUE_TRIGGER_RE = _LazyPattern(r"eyJ|gh[pousr]_|github_pat_|xox|sk-|AKIA|ASIA|AIza|glpat-|npm_|PRIVATE KEY")


def redact(text: str, *, extra_secrets: Iterable[str] = ()) -> str:
    """Mask every credential-looking part of ``text``. Never raises; idempotent."""
    try:
        if not isinstance(text, str):
            text = str(text)
        text = _redact_extras(text, extra_secrets)
        return _redact_patterns(text)
    except Exception:
        # A bug here must not leak the text it failed on, nor break the caller.
        return MASK


def redact_field(name: str, value: str) -> str:
    """``value`` redacted as if it followed ``name=``, so the name's own sensitivity counts too."""
    prefix = f"{name}="
    out = redact(prefix + value)
    return out[len(prefix) :] if out.startswith(prefix) else redact(value)


def mask_value(v: str) -> str:
    """How a configured header or env value is displayed: ``Bearer <redacted>`` or ``<redacted>``."""
    if not v:
        return ""
    scheme, _, rest = v.strip().partition(" ")
    if rest.strip() and scheme.lower() in _TOKEN68_SCHEMES | _PARAM_SCHEMES:
        return f"{scheme} {MASK}"
    return MASK


def redact_mapping(obj: object) -> object:
    """A copy of JSON-like ``obj`` with values under sensitive keys masked and every string redacted."""
    try:
        return _redact_obj(obj, masked=False, depth=0)
    except Exception:
        return MASK


def is_sensitive_mapping_key(key: str) -> bool:
    normal = key.lower().replace("-", "_")
    if not any(part in normal for part in _MAPPING_KEY_PARTS):
        return False
    return _last_component(key) not in _NON_SECRET_LAST


def _redact_obj(obj: object, *, masked: bool, depth: int) -> object:
    if depth > _MAX_DEPTH:
        return MASK
    if isinstance(obj, dict):
        out: dict[object, object] = {}
        for key, value in obj.items():
            if isinstance(key, str):
                if isinstance(value, str) and key.lower().endswith("authorization"):
                    out[redact(key)] = mask_value(value)
                    continue
                child_masked = masked or is_sensitive_mapping_key(key)
                out[redact(key)] = _redact_obj(value, masked=child_masked, depth=depth + 1)
            else:
                out[key] = _redact_obj(value, masked=masked, depth=depth + 1)
        return out
    if isinstance(obj, list | tuple):
        items = [_redact_obj(item, masked=masked, depth=depth + 1) for item in obj]
        return tuple(items) if isinstance(obj, tuple) else items
    if obj is None or isinstance(obj, bool):
        return obj
    if isinstance(obj, int | float):
        return MASK if masked else obj
    if isinstance(obj, str):
        return (MASK if obj else obj) if masked else redact(obj)
    # Not JSON-like: its repr could carry anything, so it leaves as redacted text.
    return MASK if masked else redact(str(obj))


def _redact_extras(text: str, secrets: Iterable[str]) -> str:
    variants: set[str] = set()
    for secret in secrets:
        if not isinstance(secret, str) or len(secret) < _MIN_SECRET_LEN or secret in MASK:
            continue
        variants.add(secret)
        variants.update(_encoded_forms(secret))
    # Longest first, so a secret that contains another is masked whole.
    for variant in sorted(variants, key=len, reverse=True):
        if len(variant) >= _MIN_SECRET_LEN and variant in text:
            text = text.replace(variant, MASK)
    return text


def _encoded_forms(secret: str) -> tuple[str, str]:
    """The same value as it appears inside JSON text or a URL; imported here to keep start-up lean."""
    import json
    from urllib.parse import quote

    return json.dumps(secret)[1:-1], quote(secret, safe="")


def _redact_patterns(text: str) -> str:
    # Known token shapes go first so every later rule sees them as masked. The header rules run
    # after the key/value rule, so a header value they read as one opaque token has had any
    # ``key: secret`` inside it masked already.
    low = text.lower()
    if _VALUE_TRIGGER_RE.rx.search(text):
        text = _VALUE_RE.rx.sub(MASK, text)
    if "@" in text and "://" in text:
        text = _USERINFO_RE.rx.sub(_userinfo_sub, text)
    if "=" in text:
        text = _QUERY_RE.rx.sub(r"\g<head>" + MASK, text)
    if ("=" in text or ":" in text or "--" in text) and _KV_TRIGGER_RE.rx.search(low):
        text = _splice(text, _KV_RE.rx, _kv_edit)
    if "cookie" in low:
        text = _splice(text, _COOKIE_RE.rx, _cookie_edit)
    if "authorization" in low:
        text = _splice(text, _AUTH_RE.rx, _auth_edit)
    return text


_Edit = tuple[int, int, str]


def _splice(
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
    content = _QUOTED_CONTENT_RE[quote].rx.match(m.string, m.end())
    return "" if content is None else content.group(0)


def _auth_edit(m: re.Match[str]) -> _Edit | None:
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
    scheme_match = _SCHEME_RE.rx.match(value)
    if scheme_match is None:
        return None if not value or value.lower() in _TOKEN68_SCHEMES else MASK
    rest = value[scheme_match.end() :]
    if scheme_match.group(1).lower() not in _TOKEN68_SCHEMES | _PARAM_SCHEMES:
        return MASK
    if not rest or rest.startswith(MASK):
        return None
    return value[: scheme_match.end()] + MASK


def _mask_unquoted_auth(text: str, start: int) -> tuple[int, str] | None:
    """Where the credential of an unquoted header value ends, and its replacement."""
    scheme_match = _SCHEME_RE.rx.match(text, start)
    if scheme_match is None:
        token = _FIRST_TOKEN_RE.rx.match(text, start)
        if token is None or token.group(0).lower() in _TOKEN68_SCHEMES:
            return None
        return token.end(), MASK
    lowered = scheme_match.group(1).lower()
    rest = scheme_match.end()
    if lowered in _TOKEN68_SCHEMES or lowered in _PARAM_SCHEMES:
        if text.startswith(MASK, rest):
            return None
        credential = (_AUTH_PARAMS_RE if lowered in _PARAM_SCHEMES else _FIRST_TOKEN_RE).rx.match(text, rest)
        if credential is None:
            return None
        return credential.end(), text[start:rest] + MASK
    # Unknown scheme: its name may itself be the credential, and so is the token after it.
    token = _FIRST_TOKEN_RE.rx.match(text, rest)
    return (token.end() if token else scheme_match.end(1)), MASK


def _cookie_edit(m: re.Match[str]) -> _Edit | None:
    start = m.end()
    quoted = _quoted_value(m)
    if _is_key_not_value(m, quoted, header_only=True):
        return None
    if quoted is not None:
        return (start, start + len(quoted), MASK) if quoted else None
    pairs = _COOKIE_PAIRS_RE.rx.match(m.string, start)
    return None if pairs is None else (start, pairs.end(), MASK)


def _userinfo_sub(m: re.Match[str]) -> str:
    userinfo = f"{MASK}:{MASK}" if ":" in m.group("ui") else MASK
    return f"{m.group('scheme')}{userinfo}@"


def _kv_edit(m: re.Match[str]) -> _Edit | None:
    key = m.group("key")
    lowered = key.lower()
    if not _is_sensitive_text_key(key):
        return None
    # ``Cookie: a=b; c=d`` is masked whole by the cookie rule; only ``--cookie x`` is left here.
    if lowered.endswith("cookie") and m.group("sep").strip():
        return None
    start = m.end()
    # Decide on a bounded window: a rejected value is read again by every key inside it
    # (``code=code=code=…``), so reading it whole would make such a line quadratic.
    window = m.string[start : start + _KV_WINDOW]
    found = _KV_VALUE_RE.rx.match(window)
    if found is None:
        return None
    value = found.group(0)
    if m.group("dash") and not m.group("sep").strip() and value.startswith("-"):
        return None  # ``--token --verbose``: the next flag, not a value
    if lowered == "code" and not _looks_like_code(value):
        return None
    # In ``password: api_key: s3cr3t`` the first "value" is the next key; its own value is masked.
    if _is_next_sensitive_key(value, window, found.end()):
        return None
    if found.end() == len(window) == _KV_WINDOW:
        whole = _KV_VALUE_RE.rx.match(m.string, start)
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
    if not inner or inner == MASK or inner.lower() in _NON_SECRET_LITERALS:
        return value
    return f"{prefix}{opening}{MASK}{closing}"


def _is_key_not_value(m: re.Match[str], quoted: str | None, *, header_only: bool) -> bool:
    """``Cookie: Authorization: Bearer x``: the header's "value" is the next header, left to its rule."""
    text = m.string
    if quoted is not None:
        # The quoted text is a key when the closing quote is followed by a separator.
        end = m.end() + len(quoted) + len(m.group("q"))
        if _SEPARATOR_AHEAD_RE.rx.match(text, end) is None or _KEY_SHAPE_RE.rx.fullmatch(quoted) is None:
            return False
        word = quoted
    else:
        ahead = (_HEADER_KEY_AHEAD_RE if header_only else _KEY_AHEAD_RE).rx.match(text, m.end())
        if ahead is None:
            return False
        word = ahead.group(1)
    if word.lower().endswith(("authorization", "cookie")):
        return True
    return not header_only and _is_sensitive_text_key(word)


def _is_next_sensitive_key(value: str, text: str, end: int) -> bool:
    if value[-1:] in {":", "="}:
        word = value[:-1]
    elif _SEPARATOR_AHEAD_RE.rx.match(text, end):
        word = value
    else:
        return False
    if word[:2] in {"b'", 'b"'}:
        word = word[1:]
    word = word.strip("\"'\\")
    if _KEY_SHAPE_RE.rx.fullmatch(word) is None:
        return False
    return word.lower().endswith(("authorization", "cookie")) or _is_sensitive_text_key(word)


def _looks_like_code(value: str) -> bool:
    """``code`` is also an exit status or a JSON-RPC error number; only a long opaque value is a secret."""
    return _CODE_VALUE_RE.rx.fullmatch(value.strip("\"'\\")) is not None


def _is_sensitive_text_key(key: str) -> bool:
    # Keys come from server output; only short ones are cached, so the cache stays small.
    return _cached_key_check(key) if len(key) <= _CACHED_KEY_LEN else _key_check(key)


def _key_check(key: str) -> bool:
    lowered = key.lower()
    # The header rule owns these and keeps the scheme; masking again here would swallow it.
    if lowered.endswith("authorization"):
        return False
    if lowered == "code":
        return True
    components = _components(key)
    if len(components) > 1 and components[-1] in _NON_SECRET_LAST:
        return False
    normal = lowered.replace("-", "").replace("_", "").replace(".", "")
    if any(part in normal for part in _STRONG_KEY_PARTS):
        return True
    return any(c in _WEAK_KEY_COMPONENTS for c in components) or _has_key_pair(components)


_cached_key_check = lru_cache(maxsize=1024)(_key_check)


def _has_key_pair(components: list[str]) -> bool:
    return any(
        first in {"api", "private", "secret", "signing", "encryption", "master", "client"} and second == "key"
        for first, second in pairwise(components)
    )


def _components(key: str) -> list[str]:
    return [c.lower() for part in re.split(r"[-_.]+", key) for c in _CAMEL_RE.rx.findall(part)]


def _last_component(key: str) -> str:
    components = _components(key)
    return components[-1] if len(components) > 1 else ""
