"""One redactor for everything that leaves the process as text: debug log, stderr buffer, errors.

Rules run in a fixed order (``_redact_patterns``); each leaves ``<redacted>`` in a form the later
rules (and a second pass) skip, which is what makes ``redact`` idempotent. Over-masking a harmless
value is accepted; leaking a credential is not. Stdlib only: this package sits on the CLI start-up
path. ``patterns`` holds the vocabulary and regexes, ``keys`` decides which keys are sensitive,
``edits`` computes the replacements of the header and key/value rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from contextlib import suppress
from urllib.parse import quote

from orbmcp.redact.edits import auth_edit, cookie_edit, kv_edit, splice, userinfo_sub
from orbmcp.redact.keys import is_sensitive_mapping_key, is_sensitive_text_key
from orbmcp.redact.patterns import (
    AUTH_RE,
    COOKIE_RE,
    KV_RE,
    KV_TRIGGER_RE,
    MASK,
    PARAM_SCHEMES,
    QUERY_RE,
    TOKEN68_SCHEMES,
    USERINFO_RE,
    VALUE_RE,
    VALUE_TRIGGER_RE,
)

__all__ = [
    "MASK",
    "is_sensitive_mapping_key",
    "mask_value",
    "redact",
    "redact_argv",
    "redact_field",
    "redact_mapping",
]

_MIN_SECRET_LEN = 4
_MAX_DEPTH = 64


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


def redact_argv(argv: Iterable[str], *, extra_secrets: Iterable[str] = ()) -> list[str]:
    """A command line, each word redacted; the word after a sensitive flag (``--token X``,
    ``-password X``) is masked whole, as ``--token=X`` in one word is: the split form reaches
    ``redact`` as two unrelated words, and the second alone looks like nothing."""
    secrets = tuple(extra_secrets)
    out: list[str] = []
    flag: str | None = None
    for word in argv:
        if flag is not None and word and not word.startswith("-") and is_sensitive_text_key(flag):
            out.append(MASK)
        else:
            out.append(redact(word, extra_secrets=secrets))
        found = re.fullmatch(r"--?([A-Za-z_][\w.\-]*)", word)
        flag = found.group(1) if found is not None else None
    return out


def mask_value(v: str) -> str:
    """How a configured header or env value is displayed: ``Bearer <redacted>`` or ``<redacted>``."""
    if not v:
        return ""
    scheme, _, rest = v.strip().partition(" ")
    if rest.strip() and scheme.lower() in TOKEN68_SCHEMES | PARAM_SCHEMES:
        return f"{scheme} {MASK}"
    return MASK


def redact_mapping(obj: object) -> object:
    """A copy of JSON-like ``obj`` with values under sensitive keys masked and every string redacted."""
    try:
        return _redact_obj(obj, masked=False, depth=0)
    except Exception:
        return MASK


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


def _encoded_forms(secret: str) -> tuple[str, ...]:
    """The same value as it appears inside JSON text or a URL; imported here to keep start-up lean.

    A value with a lone surrogate (an environment variable that was not UTF-8) has a URL form only
    as its original bytes (``surrogateescape``) or not at all: it must not fail, since a failure
    here would mask every line of every server instead of this one value."""
    forms = [json.dumps(secret)[1:-1]]
    with suppress(UnicodeEncodeError):
        forms.append(quote(secret, safe="", errors="surrogateescape"))
    return tuple(forms)


def _redact_patterns(text: str) -> str:
    # Known token shapes go first so every later rule sees them as masked. The header rules run
    # after the key/value rule, so a header value they read as one opaque token has had any
    # ``key: secret`` inside it masked already.
    low = text.lower()
    if VALUE_TRIGGER_RE.rx.search(text):
        text = VALUE_RE.rx.sub(MASK, text)
    if "@" in text and "://" in text:
        text = USERINFO_RE.rx.sub(userinfo_sub, text)
    if "=" in text:
        text = QUERY_RE.rx.sub(r"\g<head>" + MASK, text)
    if ("=" in text or ":" in text or "--" in text) and KV_TRIGGER_RE.rx.search(low):
        text = splice(text, KV_RE.rx, kv_edit)
    if "cookie" in low:
        text = splice(text, COOKIE_RE.rx, cookie_edit)
    if "authorization" in low:
        text = splice(text, AUTH_RE.rx, auth_edit)
    return text
