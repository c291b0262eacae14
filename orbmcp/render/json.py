"""JSON output: a result's ``to_json()`` on stdout, an error's envelope on stderr.

The shapes are documented per command (``orbmcp --help``, the man page) and pinned by tests;
this module only serialises them. Non-ASCII stays as is; JSON escapes control characters itself.
"""

from __future__ import annotations

import json

from orbmcp.commands.results.base import Result
from orbmcp.errors import OrbError, Speller, shell_spelling


def to_json_text(result: Result, *, pretty: bool) -> str:
    """A result as JSON: indented for a person at a terminal, one line for a pipe."""
    if not isinstance(result, Result):
        raise TypeError(f"not a result: {type(result).__name__}")
    return json.dumps(result.to_json(), indent=2 if pretty else None, ensure_ascii=False)


def error_json_text(err: OrbError, speller: Speller = shell_spelling) -> str:
    """The one-line error envelope: ``{"error": {"code", "message", "server", ...}}``."""
    return json.dumps(err.to_json(speller), ensure_ascii=False)


def internal_error_json_text(message: str) -> str:
    """The envelope of a bug (an exception that is no ``OrbError``)."""
    return json.dumps({"error": {"code": "internal", "message": message, "server": None}})
