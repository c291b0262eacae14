"""Which configured values a display may show as written, and which it masks.

``config show`` and ``status NAME`` show a server's entry. A ``${VAR}`` reference names where a
value comes from and is shown as the file has it (the value it expanded to is not: values from the
environment stay masked), and so is a plain path written in the file (``/srv/data``,
``~/.config/x``): masking those told a person nothing. Everything else in an env or header value
is masked whole, as before. Stdlib only, like the rest of this package.
"""

from __future__ import annotations

import re

from orbmcp.redact import redact
from orbmcp.redact.keys import is_sensitive_mapping_key
from orbmcp.redact.patterns import PARAM_SCHEMES, TOKEN68_SCHEMES

# A reference whose default is empty or was itself a reference (collapsed to NUL already).
_REFERENCE = re.compile(r"\$\{(?:env:)?[A-Za-z_][A-Za-z0-9_]*(?::-\x00*)?\}")
# What may stand beside references in a value shown as written: path pieces and separators.
_PATH_PIECES = re.compile(r"[A-Za-z0-9._\-/~:@+ ]*")
_PLAIN_PATH = re.compile(r"(?:~|\.{1,2})?/[A-Za-z0-9._\-/ ]*")
_MAX_SHOWN = 4096


def references_only(written: str) -> bool:
    """``${TOKEN}``, ``Bearer ${TOKEN}``, ``${HOME}/data``, ``${A:-${B}}``: names variables and
    holds no literal that could be a secret (a literal default such as ``${T:-sk-1}`` could)."""
    if len(written) > _MAX_SHOWN or "${" not in written:
        return False
    text = written.replace("$$", "")
    while (collapsed := _REFERENCE.sub("\x00", text)) != text:
        text = collapsed
    rest = text.replace("\x00", " ").strip()
    if "${" in rest:
        return False  # a default that is not a reference
    if rest.lower() in TOKEN68_SCHEMES | PARAM_SCHEMES:
        return True

    pathish = rest == "" or "/" in rest or ":" in rest
    return pathish and _PATH_PIECES.fullmatch(rest) is not None and redact(rest) == rest


def is_plain_path(value: str, key: str = "") -> bool:
    """A value written in the file that is a path: absolute, ``~/``, ``./`` or ``../``, path
    characters only. Under a key that names a secret it must also look like a file (a directory
    part or an extension), so a slash-led token is not taken for one."""
    if len(value) > _MAX_SHOWN or _PLAIN_PATH.fullmatch(value) is None or redact(value) != value:
        return False
    if key and is_sensitive_mapping_key(key):
        parts = [p for p in value.split("/") if p not in ("", "~", ".", "..")]
        return len(parts) > 1 or (len(parts) == 1 and "." in parts[0].strip("."))
    return True
