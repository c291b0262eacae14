"""What the auth package says to a person or the debug log: redacted, printable text.

Everything an authorization server or a stored record supplies can carry secrets (tokens,
codes, states) and terminal control. :func:`clean` masks the secrets (``orbmcp.redact``, plus the
ones the caller knows verbatim) and then makes the text safe to print (``orbmcp.text``). Stdlib
only at import: the status views use it.
"""

from __future__ import annotations

from collections.abc import Iterable

from orbmcp.log import log_event
from orbmcp.redact import redact
from orbmcp.text import safe_text


def clean(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` for an error message or a log field: secrets masked, on one printable line."""
    return safe_text(redact(text, extra_secrets=tuple(s for s in secrets if s)))


def log_auth_event(event: str, *, server: str, message: str, level: str = "info", **fields: object) -> None:
    """One ``oauth.*`` record of the debug log (a no-op while it is off; never raises)."""
    log_event(event, level=level, server=server, message=message, **fields)
