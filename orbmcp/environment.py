"""orbmcp's environment variables, read in one place.

Every variable orbmcp reads for itself is named and parsed here and nowhere else, so each has one
spelling and one rule: ``ORB_AGENT_DIR``, ``ORBMCP_CONFIG``, ``ORBMCP_PROJECT``, ``ORBMCP_DEBUG``
(alias ``PI_MCP_DEBUG``), ``NO_COLOR``, ``CI``, ``ORBMCP_NO_DAEMON``, ``ORBMCP_MAX_INPUT_MIB``,
``GITHUB_STEP_SUMMARY`` and the settings' variables (``SETTINGS``); and, to find other MCP
clients' config files, the variables those clients themselves honour (``HOME``,
``XDG_CONFIG_HOME``, ``APPDATA``, ``PI_CODING_AGENT_DIR``, ``CODEX_HOME``). A new one is added
here. An empty value counts as unset. Values come from the real process environment (or a mapping
a caller passes), never from a ``.env`` file or a config file: a cloned project must not be able
to move the config or the state, nor state a setting the way the user's own environment does.

The variables that state a setting (``SETTINGS``: ``ORBMCP_TOOL_PREFIX``, ``ORBMCP_DAEMON``, ...)
are a source of the pydantic-settings model (``config/settings.py``), above every config file;
that source takes their names from here. Everything in this module is read on the fast paths
too (completion on every keystroke, the daemon's client before every command, ``--version``),
which never import pydantic (~100-140 ms with pydantic-settings): stdlib only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

TYPE_CHECKING = False  # not typing's: the daemon's client imports no ``typing`` (fastpath/)
if TYPE_CHECKING:
    from pathlib import Path

GLOBAL_DIR = "ORB_AGENT_DIR"
CONFIG = "ORBMCP_CONFIG"
PROJECT = "ORBMCP_PROJECT"
DEBUG = "ORBMCP_DEBUG"
NO_COLOR = "NO_COLOR"
CI = "CI"
NO_DAEMON = "ORBMCP_NO_DAEMON"
# pi-mcp-extension's name for the debug switch: its users keep their habit.
PI_DEBUG = "PI_MCP_DEBUG"
# Set by GitHub Actions: the Markdown file a step appends its summary to.
GITHUB_STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
MAX_INPUT = "ORBMCP_MAX_INPUT_MIB"
# The settings a variable may state, above every config file's value (variable -> the settings
# key it stands for). The one list: ``config/settings.py``'s environment source reads it (and
# validates the values as it validates a file's), the fast paths read a value with ``setting``.
SETTINGS: Mapping[str, str] = {
    "ORBMCP_TOOL_PREFIX": "toolPrefix",
    "ORBMCP_TOOL_NAMING": "toolNaming",
    "ORBMCP_REQUEST_TIMEOUT_MS": "requestTimeoutMs",
    "ORBMCP_MAX_RETRIES": "maxRetries",
    "ORBMCP_DAEMON": "daemon",
    "ORBMCP_TOKEN_STORE": "tokenStore",
    "ORBMCP_LOCK": "lock",
}
VARIABLES = (
    GLOBAL_DIR,
    CONFIG,
    PROJECT,
    DEBUG,
    PI_DEBUG,
    NO_COLOR,
    CI,
    NO_DAEMON,
    MAX_INPUT,
    GITHUB_STEP_SUMMARY,
    *SETTINGS,
)

# Not read from orbmcp's own environment: set in each stdio server's, so that its descendants
# can be told apart from every other process (``core.processes.proctree``).
SERVER_TAG = "ORBMCP_SERVER_TAG"

DEFAULT_MAX_INPUT_MIB = 16
_MAX_INPUT_MIB_LIMIT = 4096
# Where other MCP clients keep their config files (read by ``orbmcp.config.clients``).
HOME = "HOME"
XDG_CONFIG_HOME = "XDG_CONFIG_HOME"
APPDATA = "APPDATA"
PI_AGENT_DIR = "PI_CODING_AGENT_DIR"
CODEX_HOME = "CODEX_HOME"

_TRUE_VALUES = frozenset({"1", "true", "yes", "on"})

Environ = Mapping[str, str] | None


def _value(name: str, environ: Environ) -> str:
    return (os.environ if environ is None else environ).get(name, "")


def text(name: str, environ: Environ = None) -> str:
    """A variable's raw value ("" when unset), for callers that must not import pathlib (the
    session daemon's client runs on every invocation)."""
    return _value(name, environ)


def setting(key: str, environ: Environ = None) -> tuple[str, str] | None:
    """The variable that states the settings key ``key`` (``"daemon"``) and its raw value, or
    None when it is unset (or empty)."""
    for name, stated in SETTINGS.items():
        value = _value(name, environ) if stated == key else ""
        if value:
            return name, value
    return None


def stated_settings(environ: Environ = None) -> dict[str, str]:
    """Every settings variable that is set, with its value: a session daemon runs a client's
    command only when the client states the same ones as the daemon's own environment."""
    return {name: _value(name, environ) for name in SETTINGS if _value(name, environ)}


def _path(name: str, environ: Environ) -> Path | None:
    value = _value(name, environ)
    if not value:
        return None
    from pathlib import Path  # not at top: the daemon's client (every invocation) reads only text

    return Path(value)


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
    """``ORBMCP_DEBUG`` (or its alias ``PI_MCP_DEBUG``) is 1, true, yes or on (any case): write
    the debug log. A stated ``ORBMCP_DEBUG`` wins over the alias."""
    if _value(DEBUG, environ):
        return _switch(DEBUG, environ)
    return _switch(PI_DEBUG, environ)


def no_color(environ: Environ = None) -> bool:
    """``NO_COLOR`` has any non-empty value (the no-color.org convention)."""
    return bool(_value(NO_COLOR, environ))


def ci(environ: Environ = None) -> bool:
    """``CI`` is 1, true, yes or on: nobody is there to answer a prompt."""
    return _switch(CI, environ)


def github_step_summary(environ: Environ = None) -> Path | None:
    """``GITHUB_STEP_SUMMARY``: the file a GitHub Actions step appends Markdown to, or None."""
    return _path(GITHUB_STEP_SUMMARY, environ)


def no_daemon(environ: Environ = None) -> bool:
    """``ORBMCP_NO_DAEMON`` is 1, true, yes or on: run every command one-shot, never in a daemon."""
    return _switch(NO_DAEMON, environ)


def max_input_bytes(environ: Environ = None) -> int:
    """``ORBMCP_MAX_INPUT_MIB``: the most ``call`` reads from stdin or one ``@file``, in MiB
    (1 to 4096; anything else means the default, 16)."""
    value = _value(MAX_INPUT, environ).strip()
    mib = int(value) if value.isdigit() and 1 <= int(value) <= _MAX_INPUT_MIB_LIMIT else DEFAULT_MAX_INPUT_MIB
    return mib * 1024 * 1024


def home(environ: Environ = None) -> Path:
    """The user's home directory: ``HOME``, else what the platform says."""
    from pathlib import Path  # not at top: see ``_path``

    return _path(HOME, environ) or Path.home()


def xdg_config_home(environ: Environ = None) -> Path:
    """``XDG_CONFIG_HOME``, else ``~/.config`` (where Linux apps keep their settings)."""
    return _path(XDG_CONFIG_HOME, environ) or home(environ) / ".config"


def appdata(environ: Environ = None) -> Path | None:
    """``APPDATA`` (Windows: the roaming application-data dir), or None when unset."""
    return _path(APPDATA, environ)


def pi_agent_dir(environ: Environ = None) -> Path:
    """The pi coding agent's dir: ``PI_CODING_AGENT_DIR`` as pi reads it, else ``~/.pi/agent``."""
    return _user_dir(PI_AGENT_DIR, environ) or home(environ) / ".pi" / "agent"


def codex_home(environ: Environ = None) -> Path:
    """Codex's dir: ``CODEX_HOME`` as Codex reads it, else ``~/.codex``."""
    return _user_dir(CODEX_HOME, environ) or home(environ) / ".codex"


def _user_dir(name: str, environ: Environ) -> Path | None:
    """A directory variable with a leading ``~`` meaning the home directory (as a shell would)."""
    value = _value(name, environ)
    if value == "~" or value.startswith("~/"):
        return home(environ) / value[2:]
    return _path(name, environ)
