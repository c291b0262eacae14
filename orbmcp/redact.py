"""One redactor for everything that leaves the process as text: debug log, stderr buffer, errors.

Rules run in a fixed order; each leaves ``<redacted>`` in a form the later rules (and a second
pass) skip, which is what makes ``redact`` idempotent. Over-masking a harmless value is accepted;
leaking a credential is not. Stdlib only: this module sits on the CLI start-up path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import pairwise

MASK = "<redacted>"

_MIN_SECRET_LEN = 4
_MAX_DEPTH = 64

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

# The value sits in a lookahead: only key and separator are consumed, so the scan goes on inside
# the value and a second header on the same line is still found.
_QUOTED_VALUE = (
    r"""(?=(?:"(?P<v1>(?:[^"\\\r\n]|\\.)*)|'(?P<v2>(?:[^'\\\r\n]|\\.)*)"""
    r"""|\\"(?P<v3>[^"\\\r\n]*)|(?P<v4>[^\r\n]*)))"""
)
# A quoted key also allows the ``('authorization', 'Bearer x')`` form of a header list repr.
_HEADER_HEAD = (
    r"""(?<!\w)(?P<key>(?:\w+-)*{name})(?P<kq>\\?["'])?"""
    r"""[ \t]*(?(kq)(?:[:=]|,[ \t]*b?)|[:=])[ \t]*"""
)
_AUTH_RE = re.compile(_HEADER_HEAD.format(name="authorization") + _QUOTED_VALUE, re.IGNORECASE)
_COOKIE_RE = re.compile(_HEADER_HEAD.format(name="cookie") + _QUOTED_VALUE, re.IGNORECASE)
_SCHEME_RE = re.compile(r"([A-Za-z][\w.+-]*)[ \t]+")
_FIRST_TOKEN_RE = re.compile(r"""[^\s,;"']+""")
_AUTH_PARAM = r"""[\w-]+[ \t]*=[ \t]*(?:"(?:[^"\\\r\n]|\\.)*"|[^\s,"']*)"""
_AUTH_PARAMS_RE = re.compile(_AUTH_PARAM + r"(?:[ \t]*,[ \t]*" + _AUTH_PARAM + ")*")
_COOKIE_PAIRS_RE = re.compile(r"""[^\s;,"']+(?:;[ \t]*[^\s;,"'=]+=[^\s;,"']*)*""")

_USERINFO_RE = re.compile(r"""(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<ui>[^\s/?#"'<>\\]+)@""")
_QUERY_RE = re.compile(
    r"""(?P<head>[?&#;](?:""" + _QUERY_KEYS + r""")=)(?!<redacted>)(?P<val>[^&#\s"'<>\\]+)""",
    re.IGNORECASE,
)
# Key and separator are consumed; the value is only looked at, so a rejected key never hides a
# sensitive key inside its value from the scan.
_KV_RE = re.compile(
    r"""(?<![\w.\-])(?P<dash>--)?(?P<q>\\?["'])?(?P<key>[A-Za-z_][\w.\-]*)(?(q)(?P=q))"""
    r"""(?P<sep>[ \t]*[:=][ \t]*|(?(dash)[ \t]+(?![:=])|(?!)))"""
    r"""(?=(?P<val>b?"(?:[^"\\\r\n]|\\.)*(?:"|(?=[\r\n])|\Z)|b?'(?:[^'\\\r\n]|\\.)*(?:'|(?=[\r\n])|\Z)|\\"[^"\r\n]*?\\"|"""
    r"""(?(dash)(?!-))(?!<redacted>)[^\s,;&"'(){}\[\]]+))"""
)
_KV_TRIGGER_RE = re.compile("|".join(_STRONG_KEY_PARTS) + r"|pwd|session|assertion|jwt|code|key|pass.phrase")
_SEPARATOR_AHEAD_RE = re.compile(r"[ \t]*[:=]")
_KEY_SHAPE_RE = re.compile(r"[A-Za-z_][\w.\-]*")
_KEY_AHEAD_RE = re.compile(r"""\\?["']?([A-Za-z_][\w.\-]*)\\?["']?[ \t]*[:=]""")
_HEADER_KEY_AHEAD_RE = re.compile(r"""\\?["']?([A-Za-z_][\w.\-]*)\\?["']?[ \t]*:""")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Long, opaque, and either has a digit or mixes case: an authorization code, not ``invalid_grant``.
_CODE_VALUE_RE = re.compile(r"(?=.*\d|(?=.*[a-z])(?=.*[A-Z]))[A-Za-z0-9._~+/=\-]{16,}")

_VALUE_RE = re.compile(
    r"""(?<![A-Za-z0-9_\-])(?:"""
    r"""eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]*)?"""
    r"""|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"""
    r"""|xox[abposre]-[A-Za-z0-9\-]{10,}"""
    r"""|sk-[A-Za-z0-9_\-]{16,}"""
    r"""|(?:AKIA|ASIA)[0-9A-Z]{16}"""
    r"""|AIza[0-9A-Za-z_\-]{35}|glpat-[0-9A-Za-z_\-]{20,}|npm_[A-Za-z0-9]{36}"""
    r""")|-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY-----|\Z)"""
)
_VALUE_TRIGGER_RE = re.compile(r"eyJ|gh[pousr]_|github_pat_|xox|sk-|AKIA|ASIA|AIza|glpat-|npm_|PRIVATE KEY")


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


def redact_url(url: str) -> str:
    """Userinfo and credential query parameters masked; the rest of the URL kept for debugging."""
    return redact(url)


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
        # The same value as it appears inside JSON text or a URL.
        variants.add(json.dumps(secret)[1:-1])
        variants.add(_percent_encode(secret))
    # Longest first, so a secret that contains another is masked whole.
    for variant in sorted(variants, key=len, reverse=True):
        if len(variant) >= _MIN_SECRET_LEN and variant in text:
            text = text.replace(variant, MASK)
    return text


def _percent_encode(secret: str) -> str:
    from urllib.parse import quote

    return quote(secret, safe="")


def _redact_patterns(text: str) -> str:
    # Known token shapes go first so every later rule sees them as masked. The header rules run
    # after the key/value rule: a header value they read as one opaque token
    # has had any ``key: secret`` inside it masked already.
    low = text.lower()
    if _VALUE_TRIGGER_RE.search(text):
        text = _VALUE_RE.sub(MASK, text)
    if "@" in text and "://" in text:
        text = _USERINFO_RE.sub(_userinfo_sub, text)
    if "=" in text:
        text = _QUERY_RE.sub(r"\g<head>" + MASK, text)
    if ("=" in text or ":" in text or "--" in text) and _KV_TRIGGER_RE.search(low):
        text = _splice(text, _KV_RE, _kv_edit)
    if "cookie" in low:
        text = _splice(text, _COOKIE_RE, _cookie_edit)
    if "authorization" in low:
        text = _splice(text, _AUTH_RE, _auth_edit)
    return text


_Edit = tuple[int, int, str]


def _splice(text: str, pattern: re.Pattern[str], edit: Callable[[re.Match[str]], _Edit | None]) -> str:
    """Apply ``edit`` (start, end, replacement) to every match whose edit starts after the last one.

    A match whose key sits inside an earlier value still counts (``password: api_key: s3cr3t``).
    """
    pieces: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        change = edit(m)
        if change is None or change[0] < last:
            continue
        start, end, new = change
        pieces.append(text[last:start])
        pieces.append(new)
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _header_value(m: re.Match[str]) -> tuple[str, int, bool]:
    for name in ("v1", "v2", "v3"):
        if m.group(name) is not None:
            return m.group(name), m.start(name), True
    return m.group("v4") or "", m.start("v4"), False


def _auth_edit(m: re.Match[str]) -> _Edit | None:
    value, start, quoted = _header_value(m)
    body = value.lstrip()
    if not body or body.startswith(MASK) or _starts_with_key(body, header_only=False):
        return None
    start += len(value) - len(body)
    masked = _mask_auth_body(body, quoted=quoted)
    if masked is None:
        return None
    consumed, replacement = masked
    return start, start + consumed, replacement


def _mask_auth_body(body: str, *, quoted: bool) -> tuple[int, str] | None:
    """How much of a header value to replace, and with what; quoted values are masked whole."""
    scheme_match = _SCHEME_RE.match(body)
    if scheme_match is None:
        if quoted:
            return None if body.lower() in _TOKEN68_SCHEMES else (len(body), MASK)
        token = _FIRST_TOKEN_RE.match(body)
        if token is None or token.group(0).lower() in _TOKEN68_SCHEMES:
            return None
        return token.end(), MASK
    scheme = scheme_match.group(1)
    kept = body[: scheme_match.end()]
    rest = body[scheme_match.end() :]
    lowered = scheme.lower()
    if lowered in _TOKEN68_SCHEMES or lowered in _PARAM_SCHEMES:
        if not rest or rest.startswith(MASK):
            return None
        if quoted:
            return len(body), kept + MASK
        credential = (_AUTH_PARAMS_RE if lowered in _PARAM_SCHEMES else _FIRST_TOKEN_RE).match(rest)
        if credential is None:
            return None
        return scheme_match.end() + credential.end(), kept + MASK
    if quoted:
        return len(body), MASK
    # Unknown scheme: its name may itself be the credential, and so is the token after it.
    token = _FIRST_TOKEN_RE.match(rest)
    return scheme_match.end() + (token.end() if token else 0), MASK


def _cookie_edit(m: re.Match[str]) -> _Edit | None:
    value, start, quoted = _header_value(m)
    body = value.lstrip()
    if not body or _starts_with_key(body, header_only=True):
        return None
    start += len(value) - len(body)
    if quoted:
        return start, start + len(body), MASK
    pairs = _COOKIE_PAIRS_RE.match(body)
    return None if pairs is None else (start, start + pairs.end(), MASK)


def _userinfo_sub(m: re.Match[str]) -> str:
    userinfo = f"{MASK}:{MASK}" if ":" in m.group("ui") else MASK
    return f"{m.group('scheme')}{userinfo}@"


def _kv_edit(m: re.Match[str]) -> _Edit | None:
    value = m.group("val")
    key = m.group("key")
    lowered = key.lower()
    if not _is_sensitive_text_key(key) or (lowered == "code" and not _looks_like_code(value)):
        return None
    # ``Cookie: a=b; c=d`` is masked whole by the cookie rule; only ``--cookie x`` is left here.
    if lowered.endswith("cookie") and m.group("sep").strip():
        return None
    # In ``password: api_key: s3cr3t`` the first "value" is the next key; its own value is masked.
    if _is_next_sensitive_key(value, m.string, m.end("val")):
        return None
    masked = _mask_kv_value(value)
    if masked == value:
        return None
    start = m.start("val")
    return start, start + len(value), masked


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


def _starts_with_key(body: str, *, header_only: bool) -> bool:
    """``Cookie: Authorization: Bearer x``: the header's "value" is the next header, left to its rule."""
    ahead = (_HEADER_KEY_AHEAD_RE if header_only else _KEY_AHEAD_RE).match(body)
    if ahead is None:
        return False
    word = ahead.group(1)
    if word.lower().endswith(("authorization", "cookie")):
        return True
    return not header_only and _is_sensitive_text_key(word)


def _is_next_sensitive_key(value: str, text: str, end: int) -> bool:
    if value[-1:] in {":", "="}:
        word = value[:-1]
    elif _SEPARATOR_AHEAD_RE.match(text, end):
        word = value
    else:
        return False
    if word[:2] in {"b'", 'b"'}:
        word = word[1:]
    word = word.strip("\"'\\")
    if _KEY_SHAPE_RE.fullmatch(word) is None:
        return False
    return word.lower().endswith(("authorization", "cookie")) or _is_sensitive_text_key(word)


def _looks_like_code(value: str) -> bool:
    """``code`` is also an exit status or a JSON-RPC error number; only a long opaque value is a secret."""
    return _CODE_VALUE_RE.fullmatch(value.strip("\"'\\")) is not None


@lru_cache(maxsize=1024)
def _is_sensitive_text_key(key: str) -> bool:
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


def _has_key_pair(components: list[str]) -> bool:
    return any(
        first in {"api", "private", "secret", "signing", "encryption", "master", "client"} and second == "key"
        for first, second in pairwise(components)
    )


def _components(key: str) -> list[str]:
    return [c.lower() for part in re.split(r"[-_.]+", key) for c in _CAMEL_RE.findall(part)]


def _last_component(key: str) -> str:
    components = _components(key)
    return components[-1] if len(components) > 1 else ""
