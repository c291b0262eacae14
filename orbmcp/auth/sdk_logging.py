"""The SDK's OAuth log lines, scrubbed: they carry states, ``iss`` values and token-endpoint bodies.

``install_sdk_log_scrubber()`` puts a filter on the SDK's ``mcp.client.auth.oauth2`` logger that
masks what orbmcp's redactor recognises plus every secret a live provider knows verbatim (tokens,
codes, verifiers, client secrets), folds a traceback into one escaped line, and makes the text
printable. Whoever builds providers calls it (``build_auth``, ``authorize``); importing this module
changes nothing. Providers register themselves with :func:`watch` (held weakly).
"""

from __future__ import annotations

import logging
import weakref
from typing import Protocol

from orbmcp.auth.messages import clean
from orbmcp.log import get_logger

SDK_OAUTH_LOGGER = "mcp.client.auth.oauth2"


class SecretSource(Protocol):
    def known_secrets(self) -> set[str]: ...


# The providers alive now; the set never keeps one alive.
_live: weakref.WeakSet[SecretSource] = weakref.WeakSet()


def watch(source: SecretSource) -> None:
    """Mask ``source.known_secrets()`` in the SDK's log lines for as long as it is alive."""
    _live.add(source)


class SdkLogScrubber(logging.Filter):
    """Masks and escapes the message of each SDK OAuth record before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets: set[str] = set()
        for source in list(_live):
            secrets |= source.known_secrets()
        try:
            text = record.getMessage()
        except Exception:
            text = str(record.msg)
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text = f"{text}: {type(exc).__name__}: {exc}"
            record.exc_info = None
            record.exc_text = None
        record.msg = clean(text, secrets)
        record.args = None
        return True


def install_sdk_log_scrubber() -> None:
    """Idempotent: one scrubber on the SDK's OAuth logger for the process."""
    sdk_logger = get_logger(SDK_OAUTH_LOGGER)
    if not any(isinstance(f, SdkLogScrubber) for f in sdk_logger.filters):
        sdk_logger.addFilter(SdkLogScrubber())
