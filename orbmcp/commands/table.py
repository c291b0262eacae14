"""Every orbmcp command, defined once. Adding a command means adding one entry here.

The one parser (session/command_line.py), the slash dispatcher (session/slash.py), completion
(commands/complete.py), the shell completion scripts and the man page are built from ``COMMANDS``.
The options shared by many commands are in ``params``; the commands that wire orbmcp into agents
and shells in ``table_agents``; serve and the session daemon, the commands that run orbmcp as a
service, in ``table_services``.
"""

from __future__ import annotations

from typing import get_args

from orbmcp.commands.params import ADHOC, JSON, LOCK_FILE, LOG_LEVEL, SCOPE, SERVER, TIMEOUT
from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.commands.table_agents import AGENT_COMMANDS
from orbmcp.commands.table_services import SERVICE_COMMANDS
from orbmcp.config.model import ClientName

COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        ("status",),
        "Show every configured server (state, tools, auth, source), or why one server is in its state.",
        (Param("server", "Show the detail view of this server.", completer="servers"), TIMEOUT, *ADHOC, JSON),
        slash=("/mcp",),
        connects=True,
        offline_first=True,
        examples=("orbmcp status", "orbmcp status everything --json"),
    ),
    CommandSpec(
        ("start",),
        "Connect a server (lazy ones too) and show its detail view.",
        (
            Param("server", "Server to start.", required=True, completer="servers:stopped"),
            LOG_LEVEL,
            TIMEOUT,
            JSON,
        ),
        slash=("/mcp:start",),
        connects=True,
    ),
    CommandSpec(
        ("stop",),
        "Stop a server: tools deactivated, process tree gone.",
        (Param("server", "Server to stop.", required=True, completer="servers:running"), JSON),
        slash=("/mcp:stop",),
        connects=True,
    ),
    CommandSpec(
        ("reconnect",),
        "Recreate one connection, or every connection.",
        (Param("server", "Server to reconnect (default: all).", completer="servers"), JSON),
        slash=("/mcp reconnect",),
        connects=True,
    ),
    CommandSpec(
        ("auth",),
        "Authorize an OAuth server (browser, or --no-browser to paste the redirect URL).",
        (
            Param("server", "OAuth server to authorize.", required=True, completer="servers:oauth"),
            Param("reset", "Discard the cached client registration and tokens first.", kind="flag"),
            Param("status", "Only show the stored authorization state.", kind="flag"),
            Param("no_browser", "Print the URL and read the pasted redirect URL.", kind="flag"),
            JSON,
        ),
        slash=("/mcp:auth",),
        connects=True,
    ),
    CommandSpec(
        ("logout",),
        "Revoke an OAuth server's tokens at its authorization server (RFC 7009, where offered), then "
        "forget them and the client registration.",
        (Param("server", "OAuth server.", required=True, completer="servers:oauth"), JSON),
    ),
    CommandSpec(
        ("tools",),
        "List tools with readable signatures, or show one tool: every parameter and how to call it.",
        (
            Param("server", "Only this server.", completer="servers"),
            Param(
                "tool",
                "Show this tool of the server: its parameters (type, default, choices) and task support.",
                completer="tools",
            ),
            Param("schema", "Show each tool's input schema.", kind="flag"),
            TIMEOUT,
            Param(
                "diff",
                "Compare the tools of two servers (or two versions of one): tools --diff A B.",
                kind="flag",
            ),
            *ADHOC,
            JSON,
        ),
        connects=True,
        offline_first=True,
        examples=("orbmcp tools everything", "orbmcp tools everything get-sum"),
    ),
    CommandSpec(
        ("lock",),
        "Pin servers' tools (name, version, each tool's description and schemas) in a lock file that "
        "check --lock, status and call compare against.",
        (
            Param(
                "servers",
                "Servers to lock (default: every enabled server).",
                multiple=True,
                completer="servers",
            ),
            LOCK_FILE,
            Param("update", "Write the lock even where tools changed (the diff is shown).", kind="flag"),
            *ADHOC,
            JSON,
        ),
        connects=True,
        examples=("orbmcp lock everything",),
    ),
    CommandSpec(
        ("call",),
        "Call a tool: k=v (typed by the schema), k=@file, --args JSON, or - for a JSON object on stdin.",
        (
            SERVER,
            Param("tool", "Tool name (without it: the server's tools).", completer="tools"),
            Param(
                "arguments",
                "Arguments as k=v, k=@file, k:=json, or -.",
                multiple=True,
                completer="tool_arguments",
            ),
            Param("args", "Arguments as one JSON object.", kind="option", metavar="JSON"),
            Param("timeout", "Per-call timeout in seconds.", kind="option", type="float", metavar="SECONDS"),
            Param(
                "save_images",
                "Save images and audio into this directory.",
                kind="option",
                type="path",
                metavar="DIR",
            ),
            Param(
                "max_output",
                "Truncate text output beyond this many bytes.",
                kind="option",
                type="int",
                metavar="BYTES",
            ),
            Param(
                "output",
                "Write the full text output to this file.",
                kind="option",
                type="path",
                metavar="FILE",
            ),
            Param(
                "no_check",
                "Send the arguments as given: no check of names, types or required ones against the "
                "tool's schema.",
                kind="flag",
            ),
            Param("task", "Run it as a task (tools that require tasks always are).", kind="flag"),
            Param("verbose", "Show the server's log messages on stderr while it runs.", kind="flag"),
            LOG_LEVEL,
            *ADHOC,
            JSON,
        ),
        connects=True,
        examples=(
            "orbmcp call everything echo message=hello",
            "orbmcp call everything get-sum a=2 b=3",
            'echo \'{"message": "hi"}\' | orbmcp call everything echo -',
        ),
    ),
    CommandSpec(
        ("resources",),
        "List resources, and resource templates with their parameters.",
        (Param("server", "Only this server.", completer="servers"), *ADHOC, JSON),
        connects=True,
        offline_first=True,
    ),
    CommandSpec(
        ("read",),
        "Read a resource: text is shown, --output saves it (binary too); --follow prints each update.",
        (
            SERVER,
            Param("uri", "Resource URI.", required=True, completer="resource_uris"),
            Param(
                "output",
                "Save the contents to this file (or into this directory, one file each).",
                kind="option",
                type="path",
                metavar="PATH",
            ),
            Param(
                "follow", "Subscribe and print the resource again on every update, until Ctrl-C.", kind="flag"
            ),
            *ADHOC,
            JSON,
        ),
        connects=True,
        examples=("orbmcp read everything demo://resource/static/document/architecture.md",),
    ),
    CommandSpec(
        ("prompts",),
        "List prompts.",
        (Param("server", "Only this server.", completer="servers"), *ADHOC, JSON),
        connects=True,
        offline_first=True,
    ),
    CommandSpec(
        ("prompt",),
        "Get a prompt with k=v arguments.",
        (
            SERVER,
            Param("name", "Prompt name.", required=True),
            Param("arguments", "Arguments as k=v.", multiple=True, completer="prompt_arguments"),
            *ADHOC,
            JSON,
        ),
        connects=True,
    ),
    CommandSpec(
        ("config", "show"),
        "Show the resolved configuration (secrets masked) with its warnings.",
        (JSON,),
    ),
    CommandSpec(("config", "paths"), "Show where orbmcp reads and writes.", (JSON,)),
    CommandSpec(
        ("config", "validate"),
        "Validate the configuration; exit 3 on any error or invalid entry.",
        (JSON,),
    ),
    CommandSpec(
        ("config", "import"),
        "Copy other clients' servers into orbmcp's own mcp.json; shows the diff, skips conflicts.",
        (
            Param(
                "clients",
                f"Clients to copy from: {', '.join(get_args(ClientName))}.",
                required=True,
                multiple=True,
                completer="clients",
                metavar="CLIENT",
            ),
            SCOPE,
            Param("dry_run", "Show the diff and what would be copied; write nothing.", kind="flag"),
            Param(
                "overwrite",
                "Replace this server where the file already defines it differently (repeatable).",
                kind="option",
                multiple=True,
                metavar="NAME",
            ),
            JSON,
        ),
        examples=(
            "orbmcp config import cursor claude-desktop --dry-run",
            "orbmcp config import vscode --scope project",
        ),
    ),
    CommandSpec(
        ("add",),
        "Add a server to orbmcp's own config: a command after --, a URL, or --json 'ENTRY' (a server "
        "README's snippet). The file keeps its comments.",
        (
            Param(
                "name", "Server name (with a --json snippet of several servers: the one to add; none: all)."
            ),
            Param(
                "target",
                "The command and its arguments (after --), or the server's URL.",
                multiple=True,
                metavar="COMMAND|URL",
            ),
            Param(
                "env",
                "Environment variable of a command, NAME=VALUE (repeatable; a ${VAR} value keeps a secret "
                "out of the file).",
                kind="option",
                multiple=True,
                metavar="NAME=VALUE",
            ),
            Param(
                "header",
                "HTTP header of a URL, NAME=VALUE or 'NAME: VALUE' (repeatable).",
                kind="option",
                multiple=True,
                metavar="NAME=VALUE",
            ),
            Param(
                "transport",
                "stdio, http (streamable-http) or sse; default: from the command or URL.",
                kind="option",
                metavar="T",
            ),
            Param("lazy", "Connect only when started, not when a session starts.", kind="flag"),
            SCOPE,
            Param("overwrite", "Replace an entry of the same name in that file.", kind="flag"),
            Param(
                "entry_json",
                "The entry as JSON, or a README's {\"mcpServers\": {...}} (also spelled --json 'JSON').",
                kind="option",
                flags=("--entry",),
                metavar="JSON",
            ),
            JSON,
        ),
        examples=(
            "orbmcp add files --lazy -- npx -y @modelcontextprotocol/server-filesystem /tmp",
            "orbmcp add docs https://mcp.example.com/mcp --header 'Authorization=Bearer ${DOCS_TOKEN}'"
            " --lazy",
        ),
    ),
    CommandSpec(
        ("remove",),
        "Remove a server's entry from orbmcp's own config (the entry in effect, or that of --scope).",
        (Param("name", "Server to remove.", required=True, completer="servers"), SCOPE, JSON),
        examples=("orbmcp remove docs",),
    ),
    CommandSpec(
        ("enable",),
        "Turn a server on in its config; in a running session also start it.",
        (Param("server", "Server to enable.", required=True, completer="servers:disabled"), JSON),
        slash=("/mcp:enable",),
        connects=True,
        examples=("orbmcp enable files",),
    ),
    CommandSpec(
        ("disable",),
        "Turn a server off in its config (the entry stays); in a running session also stop it.",
        (Param("server", "Server to disable.", required=True, completer="servers:enabled"), JSON),
        slash=("/mcp:disable",),
        connects=True,
        examples=("orbmcp disable files",),
    ),
    CommandSpec(
        ("trust",),
        "Review exactly what a project's config would run, and approve it.",
        (Param("yes", "Approve without asking.", kind="flag", flags=("--yes", "-y")), JSON),
    ),
    CommandSpec(("untrust",), "Revoke a project's approval.", (JSON,)),
    CommandSpec(
        ("check",),
        "Smoke-test servers for CI: exit 1 unless every configured server is ready and every check passes."
        "\n\nEvery entry a config file names counts: invalid, skipped (a ${VAR} is unset) and untrusted "
        "entries fail (exit 3 when one is invalid); disabled ones are reported as skipped. Required tools "
        "must exist and smoke calls must answer as expected. Reports: a summary, --json, --junit FILE, "
        "--format github.",
        (
            Param(
                "servers",
                "Servers to check (default: every configured entry; a named disabled one is checked).",
                multiple=True,
                completer="servers",
            ),
            Param(
                "require_tool",
                "Fail unless this tool exists (server/tool, or a tool of any checked server).",
                kind="option",
                multiple=True,
                flags=("--require-tool",),
                metavar="SERVER/TOOL",
            ),
            Param(
                "call",
                "Call a tool: 'SERVER/TOOL k=v ...', optionally with --expect TEXT or "
                "--expect-json PATH=VALUE inside the quotes; repeatable.",
                kind="option",
                multiple=True,
                metavar="'SERVER/TOOL K=V...'",
            ),
            Param(
                "expect",
                "With one --call: its text output must contain TEXT.",
                kind="option",
                multiple=True,
                metavar="TEXT",
            ),
            Param(
                "expect_json",
                "With one --call: the result's JSON at PATH (content[0].text, "
                "structuredContent.x) must equal VALUE.",
                kind="option",
                multiple=True,
                metavar="PATH=VALUE",
            ),
            Param(
                "wait",
                "Retry servers that are not ready for up to this long (30s, 2m), for CI services "
                "that boot slowly.",
                kind="option",
                metavar="DURATION",
            ),
            TIMEOUT,
            Param(
                "junit",
                "Also write a JUnit XML report to this file (for CI test reporters).",
                kind="option",
                type="path",
                metavar="FILE",
            ),
            Param(
                "format",
                "text (default) or github (annotations, and a step summary when GITHUB_STEP_SUMMARY "
                "is set); JSON is --json.",
                kind="option",
                metavar="FORMAT",
                completer="check-formats",
            ),
            LOCK_FILE,
            *ADHOC,
            JSON,
        ),
        connects=True,
        examples=(
            "orbmcp check",
            "orbmcp check everything --require-tool everything/echo",
            "orbmcp check --call 'everything/get-sum a=2 b=3' --expect 'is 5'",
            "orbmcp check --wait 30s --timeout 20s --junit orbmcp-junit.xml --format github",
        ),
    ),
)

COMMANDS += AGENT_COMMANDS + SERVICE_COMMANDS

GROUPS: dict[str, str] = {
    "daemon": "The session daemon: one live session shared by every orbmcp command of this scope.",
    "config": "Inspect, validate and import configuration.",
    "completion": "Shell completion scripts.",
}


def find(path: tuple[str, ...]) -> CommandSpec | None:
    for c in COMMANDS:
        if c.path == path:
            return c
    return None
