"""Is this key sensitive? The vocabulary is in ``patterns``; the decisions are here.

Free-text keys (``token=...``, ``--password x``) and JSON mapping keys follow different rules:
free text sees many harmless words, so it needs a strong part or a whole weak component; a JSON
key is judged by substring, unless its last component names metadata about a secret.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from orbmcp.redact.patterns import (
    CAMEL_RE,
    CODE_VALUE_RE,
    MAPPING_KEY_PARTS,
    NON_SECRET_LAST,
    STRONG_KEY_PARTS,
    WEAK_KEY_COMPONENTS,
)

_CACHED_KEY_LEN = 128


def is_sensitive_mapping_key(key: str) -> bool:
    """A JSON key whose value is a secret (``client_secret``, ``X-Api-Key``), not metadata about one
    (``token_type``, ``client_secret_expires_at``)."""
    normal = key.lower().replace("-", "_")
    if not any(part in normal for part in MAPPING_KEY_PARTS):
        return False
    return last_component(key) not in NON_SECRET_LAST


def is_sensitive_text_key(key: str) -> bool:
    """A key in free text (``token=``, ``--password``, ``"apiKey":``) whose value is masked."""
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
    if len(components) > 1 and components[-1] in NON_SECRET_LAST:
        return False
    normal = lowered.replace("-", "").replace("_", "").replace(".", "")
    if any(part in normal for part in STRONG_KEY_PARTS):
        return True
    return any(c in WEAK_KEY_COMPONENTS for c in components) or _has_key_pair(components)


_cached_key_check = lru_cache(maxsize=1024)(_key_check)


def _has_key_pair(components: list[str]) -> bool:
    return any(
        first in {"api", "private", "secret", "signing", "encryption", "master", "client"} and second == "key"
        for first, second in pairwise(components)
    )


def _components(key: str) -> list[str]:
    return [c.lower() for part in re.split(r"[-_.]+", key) for c in CAMEL_RE.rx.findall(part)]


def last_component(key: str) -> str:
    components = _components(key)
    return components[-1] if len(components) > 1 else ""


def looks_like_code(value: str) -> bool:
    """``code`` is also an exit status or a JSON-RPC error number; only a long opaque value is a secret."""
    return CODE_VALUE_RE.rx.fullmatch(value.strip("\"'\\")) is not None
