"""The commands that run orbmcp as a service: ``serve`` and the session daemon."""

from __future__ import annotations

from orbmcp.commands.json_keys import DAEMON_DOC
from orbmcp.commands.params import JSON, SERVE_ADHOC
from orbmcp.commands.spec import CommandSpec, JsonDoc, Param

SERVICE_COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        ("serve",),
        "Serve every configured server, and the /mcp commands, as one MCP server for any agent.",
        (
            Param("stdio", "Serve over this process's stdin and stdout (the default).", kind="flag"),
            Param(
                "http",
                "Serve Streamable HTTP at http://HOST:PORT/mcp (loopback unless HOST says otherwise; "
                "every request needs the bearer token).",
                kind="option",
                metavar="[HOST:]PORT",
            ),
            Param(
                "server",
                "Serve only this server (repeatable; default: every configured server); a URL serves "
                "that Streamable HTTP server without configuring it.",
                kind="option",
                multiple=True,
                completer="servers",
                metavar="NAME",
            ),
            Param(
                "prefix",
                "Prefix of the bridged tool names (default: the toolPrefix setting).",
                kind="option",
                metavar="PREFIX",
            ),
            Param(
                "names",
                "bridged (default): <prefix>__<server>__<tool>_<hash>; raw: the servers' own names "
                "(two servers offering one is an error).",
                kind="option",
                metavar="bridged|raw",
            ),
            Param(
                "allow_remote",
                "With --http: listen on a non-loopback address (the token is still required).",
                kind="flag",
            ),
            Param(
                "print_token", "Print the HTTP bearer token (generated on first use) and exit.", kind="flag"
            ),
            *SERVE_ADHOC,
            JSON,
        ),
        connects=True,
        daemon=False,  # through a daemon, serve is a request of its own (daemon/serve_client.py)
        examples=(
            "orbmcp serve",
            "orbmcp serve --http 8765",
            "orbmcp serve --server everything --names raw",
            "orbmcp serve --print-token",
        ),
        json_output=(
            JsonDoc(
                "array of strings", (), "with --print-token: the token; serving writes nothing else on stdout"
            ),
        ),
    ),
)

IDLE = Param(
    "idle_timeout",
    "Stop after this long without a client (30m by default; 0: never), e.g. 90s, 30m, 2h.",
    kind="option",
    metavar="DURATION",
)
SERVICE_COMMANDS += (
    CommandSpec(
        ("daemon", "start"),
        "Start the session daemon of this scope: servers stay connected between commands.",
        (
            IDLE,
            Param("foreground", "Serve in this process instead of in the background.", kind="flag"),
            Param(
                "owner_pid",
                "Stop when this process ends (an agent that starts the daemon for its own session).",
                kind="option",
                type="int",
                metavar="PID",
            ),
            JSON,
        ),
        examples=("orbmcp daemon start", "orbmcp daemon start --idle-timeout 2h"),
        json_output=(DAEMON_DOC,),
    ),
    CommandSpec(
        ("daemon", "stop"),
        "Stop the session daemon of this scope and every server it runs.",
        (JSON,),
        json_output=(DAEMON_DOC,),
    ),
    CommandSpec(
        ("daemon", "restart"),
        "Restart the session daemon (it then uses this shell's environment).",
        (IDLE, JSON),
        json_output=(DAEMON_DOC,),
    ),
    CommandSpec(
        ("daemon", "status"),
        "Is a session daemon running for this scope: pid, uptime, socket, servers, clients, memory.",
        (JSON,),
        examples=("orbmcp daemon status --json",),
        json_output=(DAEMON_DOC,),
    ),
)
