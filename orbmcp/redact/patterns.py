"""What the redactor looks for: the mask, the key vocabulary, and every regex, compiled lazily.

Plain data, no logic beyond ``LazyPattern``. The rules that use these live in ``keys`` (is this key
sensitive?) and ``edits`` (what to replace in a match); ``orbmcp.redact`` runs them in order.
"""

from __future__ import annotations

import re

MASK = "<redacted>"


class LazyPattern:
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
TOKEN68_SCHEMES = frozenset({"bearer", "basic", "dpop", "negotiate", "ntlm", "pop"})
PARAM_SCHEMES = frozenset({"digest", "hoba", "mutual", "aws4-hmac-sha256", "signature", "gnap"})

# Substrings of a normalised key (lower case, no ``-_.``) that mark it sensitive in free text.
STRONG_KEY_PARTS = (
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
WEAK_KEY_COMPONENTS = frozenset({"pwd", "session", "assertion", "jwt"})
# A key whose last component names metadata about a secret holds no secret: token_type,
# token_endpoint, password_file, client_secret_expires_at, token_endpoint_auth_methods_supported.
NON_SECRET_LAST = frozenset(
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
# Sensitive JSON keys, by case-insensitive substring (keys normalised to ``_``).
MAPPING_KEY_PARTS = (
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
NON_SECRET_LITERALS = frozenset({"null", "true", "false", "none", "nil", "undefined"})

# Only key, separator and an opening quote are consumed; the value is read from the match end,
# so the scan goes on inside it and a second header on the same line is still found.
# A quoted key also allows the ``('authorization', 'Bearer x')`` form of a header list repr.
_HEADER_HEAD = (
    r"""(?<!\w)(?P<key>(?:\w+-)*{name})(?P<kq>\\?["'])?"""
    r"""[ \t]*(?(kq)(?:[:=]|,[ \t]*b?)|[:=])[ \t]*(?P<q>\\"|["'])?"""
)
AUTH_RE = LazyPattern(_HEADER_HEAD.format(name="authorization"), re.IGNORECASE)
COOKIE_RE = LazyPattern(_HEADER_HEAD.format(name="cookie"), re.IGNORECASE)
QUOTED_CONTENT_RE = {
    '"': LazyPattern(r"""(?:[^"\\\r\n]|\\.)*"""),
    "'": LazyPattern(r"""(?:[^'\\\r\n]|\\.)*"""),
    '\\"': LazyPattern(r"""[^"\\\r\n]*"""),
}
SCHEME_RE = LazyPattern(r"([A-Za-z][\w.+-]*)[ \t]+")
FIRST_TOKEN_RE = LazyPattern(r"""[^\s,;"']+""")
_AUTH_PARAM = r"""[\w-]+[ \t]*=[ \t]*(?:"(?:[^"\\\r\n]|\\.)*"|[^\s,"']*)"""
AUTH_PARAMS_RE = LazyPattern(_AUTH_PARAM + r"(?:[ \t]*,[ \t]*" + _AUTH_PARAM + ")*")
COOKIE_PAIRS_RE = LazyPattern(r"""[^\s;,"']+(?:;[ \t]*[^\s;,"'=]+=[^\s;,"']*)*""")

USERINFO_RE = LazyPattern(r"""(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<ui>[^\s/?#"'<>\\]+)@""")
QUERY_RE = LazyPattern(
    r"""(?P<head>[?&#;](?:""" + _QUERY_KEYS + r""")=)(?!<redacted>)(?P<val>[^&#\s"'<>\\]+)""",
    re.IGNORECASE,
)
# Key and separator only: the value is read by the edit, so a rejected key never hides a sensitive
# key inside its value from the scan.
KV_RE = LazyPattern(
    r"""(?<![\w.\-])(?P<dash>--)?(?P<q>\\?["'])?(?P<key>[A-Za-z_][\w.\-]*)(?(q)(?P=q))"""
    r"""(?P<sep>[ \t]*[:=][ \t]*|(?(dash)[ \t]+(?![:=])|(?!)))"""
)
# Read at the end of a key match, only for a sensitive key: a regex lookahead here would rescan
# the rest of ``token=token=token=…`` at every key.
KV_VALUE_RE = LazyPattern(
    r"""b?"(?:[^"\\\r\n]|\\.)*(?:"|(?=[\r\n])|\Z)|b?'(?:[^'\\\r\n]|\\.)*(?:'|(?=[\r\n])|\Z)"""
    r"""|\\"[^"\r\n]*?\\"|(?!<redacted>)[^\s,;&"'(){}\[\]]+"""
)
KV_WINDOW = 512
KV_TRIGGER_RE = LazyPattern("|".join(STRONG_KEY_PARTS) + r"|pwd|session|assertion|jwt|code|key|pass.phrase")
SEPARATOR_AHEAD_RE = LazyPattern(r"[ \t]*[:=]")
KEY_SHAPE_RE = LazyPattern(r"[A-Za-z_][\w.\-]*")
KEY_AHEAD_RE = LazyPattern(r"""\\?["']?([A-Za-z_][\w.\-]*)\\?["']?[ \t]*[:=]""")
HEADER_KEY_AHEAD_RE = LazyPattern(r"""\\?["']?([A-Za-z_][\w.\-]*)\\?["']?[ \t]*:""")
CAMEL_RE = LazyPattern(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Long, opaque, and either has a digit or mixes case: an authorization code, not ``invalid_grant``.
CODE_VALUE_RE = LazyPattern(r"(?=.*\d|(?=.*[a-z])(?=.*[A-Z]))[A-Za-z0-9._~+/=\-]{16,}")

VALUE_RE = LazyPattern(
    r"""(?<![A-Za-z0-9_\-])(?:"""
    r"""eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]*)?"""
    r"""|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"""
    r"""|xox[abposre]-[A-Za-z0-9\-]{10,}"""
    r"""|sk-[A-Za-z0-9_\-]{16,}"""
    r"""|(?:AKIA|ASIA)[0-9A-Z]{16}"""
    r"""|AIza[0-9A-Za-z_\-]{35}|glpat-[0-9A-Za-z_\-]{20,}|npm_[A-Za-z0-9]{36}"""
    r""")|-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY-----|\Z)"""
)
VALUE_TRIGGER_RE = LazyPattern(r"eyJ|gh[pousr]_|github_pat_|xox|sk-|AKIA|ASIA|AIza|glpat-|npm_|PRIVATE KEY")
