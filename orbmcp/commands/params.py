"""Options used by many commands, and the program's own options, defined once."""

from __future__ import annotations

from orbmcp import environment
from orbmcp.commands.spec import Param
from orbmcp.config.transports import KINDS

# Options of the program itself, defined once: the Typer root callback (session/command_line.py),
# the option hoisting of fastpath/entry.py, completion and the man page are built from these.
GLOBAL_OPTIONS: tuple[Param, ...] = (
    Param("version", "Show the version and exit.", kind="flag", flags=("--version", "-V")),
    Param(
        "project",
        "Project directory (default: the working directory).",
        kind="option",
        type="path",
        flags=("--project", "-p"),
        metavar="DIR",
        envvar=environment.PROJECT,
    ),
    Param(
        "config",
        "Use only this config file (trusted because you named it).",
        kind="option",
        type="path",
        flags=("--config", "-c"),
        metavar="FILE",
        envvar=environment.CONFIG,
    ),
    Param("no_color", "No colours or rich tables (also NO_COLOR).", kind="flag"),
    Param(
        "no_daemon",
        "Run this command one-shot even when a session daemon runs for this scope.",
        kind="flag",
        envvar=environment.NO_DAEMON,
    ),
    Param("json", "JSON output for every command.", kind="flag"),
    Param(
        "no_input",
        "Never ask anything: a server's questions are declined (the result says so).",
        kind="flag",
    ),
    Param("help", "Show help and exit (also after any command).", kind="flag", flags=("--help", "-h")),
)

JSON = Param("json", "Print machine-readable JSON (errors go to stderr as one JSON line).", kind="flag")
SERVER = Param("server", "Server name.", required=True, completer="servers")
SCOPE = Param(
    "scope",
    "Which of orbmcp's files: global (default) or project.",
    kind="option",
    metavar="SCOPE",
    completer="scopes",
)
LOG_LEVEL = Param(
    "log_level",
    "Ask the server for log messages of at least this level (debug, info, notice, warning, error, ...).",
    kind="option",
    metavar="LEVEL",
)
TIMEOUT = Param(
    "timeout",
    "Bound each connection attempt and each call to this long (10s, 1m).",
    kind="option",
    metavar="DURATION",
)

# A server given on the command line instead of in a config file (commands/adhoc.py): every
# command that takes a server takes these, and handlers never see them (the front turns them into
# the command's one server).
ADHOC: tuple[Param, ...] = (
    *(
        Param(kind.option, kind.option_help, kind="option", metavar=kind.option_metavar)
        for kind in KINDS.values()
    ),
    Param(
        "env",
        "With --stdio: an environment variable of the server, NAME=VALUE (repeatable).",
        kind="option",
        multiple=True,
        metavar="NAME=VALUE",
    ),
    Param(
        "header",
        "With --http/--sse: an HTTP header, NAME=VALUE or 'NAME: VALUE' (repeatable).",
        kind="option",
        multiple=True,
        metavar="NAME=VALUE",
    ),
    Param(
        "adhoc_name",
        "With --stdio/--http/--sse: the server's name (default: from the command or host).",
        kind="option",
        flags=("--name",),
        metavar="NAME",
    ),
)
LOCK_FILE = Param(
    "lock_file",
    "The tool lock file (default: orbmcp-lock.json beside the config the servers come from).",
    kind="option",
    flags=("--lock",),
    type="path",
    metavar="FILE",
)
# serve's own --stdio and --http say how it serves: the server it serves is spelled --server URL,
# --server-stdio and --server-sse there.
SERVE_ADHOC: tuple[Param, ...] = (
    Param(
        "server_stdio",
        "Serve this command line (quoted), run as a stdio server, without configuring it.",
        kind="option",
        flags=("--server-stdio",),
        metavar="'COMMAND ARGS'",
    ),
    Param(
        "server_sse",
        "Serve the SSE server at this URL, without configuring it.",
        kind="option",
        flags=("--server-sse",),
        metavar="URL",
    ),
    *ADHOC[3:],
)
