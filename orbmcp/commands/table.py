"""Every orbmcp command, defined once. Adding a command means adding one entry here.

The one parser (session/command_line.py), the slash dispatcher (session/slash.py), completion
(commands/complete.py), the shell completion scripts and the man page (its ``--json`` shapes too)
are built from ``COMMANDS``. The options shared by many commands are in ``params``, the ``--json``
keys shared by several in ``json_keys``; the commands that read and edit configuration are in
``table_config``; those that wire orbmcp into agents and shells in ``table_agents``; serve and the
session daemon, the commands that run orbmcp as a service, in ``table_services``.
"""

from __future__ import annotations

from orbmcp.commands.json_keys import DETAIL_KEYS, MESSAGE_KEYS, ROW_KEYS, TOOL_KEYS
from orbmcp.commands.params import ADHOC, JSON, LOCK_FILE, LOG_LEVEL, SERVER, TIMEOUT
from orbmcp.commands.spec import CommandSpec, JsonDoc, Param
from orbmcp.commands.table_agents import AGENT_COMMANDS
from orbmcp.commands.table_config import CONFIG_COMMANDS
from orbmcp.commands.table_services import SERVICE_COMMANDS

COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        ("status",),
        "Show every configured server (state, tools, auth, source), or why one server is in its state.",
        (Param("server", "Show the detail view of this server.", completer="servers"), TIMEOUT, *ADHOC, JSON),
        slash=("/mcp",),
        connects=True,
        offline_first=True,
        examples=("orbmcp status", "orbmcp status everything --json"),
        json_output=(
            JsonDoc(
                "array",
                ROW_KEYS,
                "one row per configured entry; tools is {discovered, active}; state is ready, starting, "
                "retrying (with retry: {attempt, maxRetries, inSeconds}), stopped, failed or needs-auth, "
                "or for an entry that did not load invalid, skipped or untrusted (with file)",
                open=True,
            ),
            JsonDoc(
                "object",
                DETAIL_KEYS,
                "projectConfig is null or {loaded, path}; command, args, cwd, envNames (stdio) or url, "
                "headerNames (HTTP), secrets masked; capabilities is {advertised, server} (what orbmcp "
                "advertised, what the server offered; null until connected)",
                open=True,
                variant="SERVER",
            ),
        ),
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
        json_output=(
            JsonDoc(
                "array", DETAIL_KEYS, "the detail of the server, its last error when it failed", open=True
            ),
        ),
    ),
    CommandSpec(
        ("stop",),
        "Stop a server: tools deactivated, process tree gone.",
        (Param("server", "Server to stop.", required=True, completer="servers:running"), JSON),
        slash=("/mcp:stop",),
        connects=True,
        json_output=(JsonDoc("array", DETAIL_KEYS, "the detail of the server", open=True),),
    ),
    CommandSpec(
        ("reconnect",),
        "Recreate one connection, or every connection.",
        (Param("server", "Server to reconnect (default: all).", completer="servers"), JSON),
        slash=("/mcp reconnect",),
        connects=True,
        json_output=(JsonDoc("array", DETAIL_KEYS, "the detail of each server reconnected", open=True),),
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
        json_output=(
            JsonDoc(
                "object",
                (*MESSAGE_KEYS, "server"),
                "plus details of the outcome; with --status: auth",
                open=True,
            ),
        ),
    ),
    CommandSpec(
        ("logout",),
        "Revoke an OAuth server's tokens at its authorization server (RFC 7009, where offered), then "
        "forget them and the client registration.",
        (Param("server", "OAuth server.", required=True, completer="servers:oauth"), JSON),
        json_output=(
            JsonDoc(
                "object",
                (*MESSAGE_KEYS, "server", "removed", "revocation"),
                "revocation: revoked, unsupported, failed (with revocationError) or none",
                open=True,
            ),
        ),
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
        json_output=(
            JsonDoc(
                "array",
                TOOL_KEYS,
                "inputSchema exactly as the server sent it; tools --diff A B: {same, before, after, changes}",
            ),
            JsonDoc(
                "object",
                (*TOOL_KEYS, "title", "parameters", "taskSupport", "outputSchema"),
                "parameters: {name, type, required, default?, enum?, description}; taskSupport: forbidden, "
                "optional or required",
                variant="SERVER TOOL",
            ),
        ),
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
        json_output=(
            JsonDoc(
                "object",
                ("ok", "file", "servers", "written", "created", "changes"),
                "changes: the tools changed since the lock, as check's lockChanges; written is false "
                "(exit 1) when tools changed and --update was not given",
            ),
        ),
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
        json_output=(
            JsonDoc(
                "object",
                ("content", "isError"),
                "the MCP CallToolResult: content, isError, and structuredContent and _meta when present; "
                "interactions (the server's questions and how they were answered) when it asked any",
                open=True,
            ),
        ),
    ),
    CommandSpec(
        ("resources",),
        "List resources, and resource templates with their parameters.",
        (Param("server", "Only this server.", completer="servers"), *ADHOC, JSON),
        connects=True,
        offline_first=True,
        json_output=(
            JsonDoc(
                "array",
                (),
                "resources and resource templates as the server sent them, each with a server key; "
                "templates also with parameters (the uriTemplate's variable names)",
            ),
        ),
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
        json_output=(
            JsonDoc(
                "object",
                ("contents",),
                "the MCP ReadResourceResult contents; saved [{uri, path, bytes}] with --output; with "
                "--follow one object per line, each with uri and update (0 for the first read)",
                open=True,
            ),
        ),
    ),
    CommandSpec(
        ("prompts",),
        "List prompts.",
        (Param("server", "Only this server.", completer="servers"), *ADHOC, JSON),
        connects=True,
        offline_first=True,
        json_output=(JsonDoc("array", (), "prompts as the server sent them, each with a server key"),),
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
        json_output=(
            JsonDoc(
                "object",
                ("messages",),
                "the MCP GetPromptResult (description when present); interactions when the server asked any",
                open=True,
            ),
        ),
    ),
    *CONFIG_COMMANDS,
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
        json_output=(
            JsonDoc(
                "object",
                (
                    "ok",
                    "exitCode",
                    "servers",
                    "missingTools",
                    "requiredTools",
                    "calls",
                    "problems",
                    "junit",
                    "lock",
                    "lockChanges",
                ),
                "servers: status rows plus ok, verdict (ok, failed, invalid, skipped, untrusted, disabled), "
                "file, recentOutput; calls: {call, server, tool, ok, error, expect, output}; lockChanges "
                "(with --lock): {server, tool, change, fields, descriptionDiff, schemaChanges}",
            ),
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
