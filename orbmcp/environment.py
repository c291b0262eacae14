"""orbmcp's environment variables, read in one place.

Every variable orbmcp reads for itself is named and parsed here and nowhere else, so each has one
spelling and one rule: ``ORB_AGENT_DIR``, ``ORBMCP_CONFIG``, ``ORBMCP_PROJECT``, ``ORBMCP_DEBUG``,
``NO_COLOR``, ``CI``, ``ORBMCP_NO_DAEMON`` and ``ORBMCP_MAX_INPUT_MIB``. A new one is added
here. An empty value counts as unset. Values come from the real process environment (or a mapping
a caller passes), never from a ``.env`` file or a config file: a cloned project must not be able
to move the config or the state.

Hand-written rather than pydantic-settings: these are read on the fast paths (completion on every
keystroke, the config commands, an empty ``status``), where importing pydantic-settings costs
~140 ms, more than a whole ``config show``; on the connecting paths, where the SDK has loaded
pydantic anyway, it still adds ~11-17 ms of its own imports to parse six strings. Stdlib only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

GLOBAL_DIR = "ORB_AGENT_DIR"
CONFIG = "ORBMCP_CONFIG"
PROJECT = "ORBMCP_PROJECT"
DEBUG = "ORBMCP_DEBUG"
NO_COLOR = "NO_COLOR"
CI = "CI"
NO_DAEMON = "ORBMCP_NO_DAEMON"
MAX_INPUT = "ORBMCP_MAX_INPUT_MIB"
VARIABLES = (GLOBAL_DIR, CONFIG, PROJECT, DEBUG, NO_COLOR, CI, NO_DAEMON, MAX_INPUT)

# Not read from orbmcp's own environment: set in each stdio server's, so that its descendants
# can be told apart from every other process (``core.proctree``).
SERVER_TAG = "ORBMCP_SERVER_TAG"

DEFAULT_MAX_INPUT_MIB = 16
_MAX_INPUT_MIB_LIMIT = 4096

_TRUE_VALUES = frozenset({"1", "true", "yes", "on"})

Environ = Mapping[str, str] | None


def _value(name: str, environ: Environ) -> str:
    return (os.environ if environ is None else environ).get(name, "")


def _path(name: str, environ: Environ) -> Path | None:
    value = _value(name, environ)
    return Path(value) if value else None


def _switch(name: str, environ: Environ) -> bool:
    return _value(name, environ).strip().lower() in _TRUE_VALUES


def global_dir(environ: Environ = None) -> Path | None:
    """``ORB_AGENT_DIR`` as given (``~`` not expanded), or None when unset."""
    return _path(GLOBAL_DIR, environ)


def config_file(environ: Environ = None) -> Path | None:
    """``ORBMCP_CONFIG``: the one config file to use instead of every layer, or None."""
    return _path(CONFIG, environ)


def project_dir(environ: Environ = None) -> Path | None:
    """``ORBMCP_PROJECT``: the project directory when ``--project`` is not given, or None."""
    return _path(PROJECT, environ)


def debug(environ: Environ = None) -> bool:
    """``ORBMCP_DEBUG`` is 1, true, yes or on (any case): write the debug log."""
    return _switch(DEBUG, environ)


def no_color(environ: Environ = None) -> bool:
    """``NO_COLOR`` has any non-empty value (the no-color.org convention)."""
    return bool(_value(NO_COLOR, environ))


def ci(environ: Environ = None) -> bool:
    """``CI`` is 1, true, yes or on: nobody is there to answer a prompt."""
    return _switch(CI, environ)


def no_daemon(environ: Environ = None) -> bool:
    """``ORBMCP_NO_DAEMON`` is 1, true, yes or on: run every command one-shot, never in a daemon."""
    return _switch(NO_DAEMON, environ)


def max_input_bytes(environ: Environ = None) -> int:
    """``ORBMCP_MAX_INPUT_MIB``: the most ``call`` reads from stdin or one ``@file``, in MiB
    (1 to 4096; anything else means the default, 16)."""
    value = _value(MAX_INPUT, environ).strip()
    mib = int(value) if value.isdigit() and 1 <= int(value) <= _MAX_INPUT_MIB_LIMIT else DEFAULT_MAX_INPUT_MIB
    return mib * 1024 * 1024
