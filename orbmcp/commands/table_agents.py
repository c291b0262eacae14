"""The commands that wire orbmcp into agents and shells: ``integrate``, ``slash`` (the agent
protocol), ``complete``, ``completion`` and the REPL. ``table.COMMANDS`` lists them after the
others, before the service commands (``table_services``)."""

from __future__ import annotations

from orbmcp.commands.params import JSON
from orbmcp.commands.spec import CommandSpec, JsonDoc, Param

AGENT_COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        ("integrate",),
        "Wire orbmcp into an agent: its /mcp commands (pi: an extension; Claude Code, Gemini CLI, "
        "opencode: command files) or orbmcp serve in its MCP config (Codex; --serve for any).",
        (
            Param("agent", "pi, claude-code, gemini, opencode or codex.", completer="agents"),
            Param(
                "scope",
                "user (default: the agent's own dir) or project (this project's agent dir).",
                kind="option",
                metavar="SCOPE",
            ),
            Param("dry_run", "Show the diff of every file; write nothing.", kind="flag"),
            Param("remove", "Remove exactly what orbmcp integrate wrote.", kind="flag"),
            Param("serve", "Also register orbmcp serve as an MCP server in the agent's config.", kind="flag"),
            Param("list", "List the agents, what each gets and whether it is installed.", kind="flag"),
            JSON,
        ),
        examples=("orbmcp integrate pi", "orbmcp integrate claude-code --dry-run", "orbmcp integrate --list"),
        json_output=(
            JsonDoc(
                "object",
                ("agent", "scope", "action", "dryRun", "changed", "written", "files", "commands", "notes"),
                "files are {path, kind, outcome, entry, reason, diff}; kind: file or entry; outcome: "
                "created, updated, unchanged, removed, absent, kept (not orbmcp's: left alone)",
            ),
            JsonDoc(
                "object", ("agents",), "agents are {name, label, gets, installed, foundAt}", variant="LIST"
            ),
        ),
    ),
    CommandSpec(
        ("slash",),
        'Run one slash command line, for example orbmcp slash "/mcp:start everything".\n\n'
        "With --json: the agent protocol's result envelope (exit, text, json, error, content).",
        (
            Param("line", "The slash command line."),
            Param(
                "stdio",
                "Serve the agent protocol: JSON lines on stdin/stdout (run, cancel, complete, commands).",
                kind="flag",
            ),
            Param(
                "list_commands",
                "List every slash command an agent may register.",
                kind="flag",
                flags=("--list",),
            ),
            JSON,
        ),
        connects=True,
        examples=(
            'orbmcp slash "/mcp:start everything"',
            'orbmcp slash "/mcp help"',
            'orbmcp slash --json "/mcp call everything get-sum a=2 b=3"',
            "orbmcp slash --list --json",
            "orbmcp slash --stdio",
        ),
        json_output=(
            JsonDoc(
                "object",
                ("exit", "text", "json", "error", "content"),
                "the agent protocol's result envelope (README); json: the JSON of the command the line runs; "
                'with --list: {"commands": [{name, usage, description, args}]}',
            ),
        ),
    ),
    CommandSpec(
        ("complete",),
        "Print completion candidates for a partial slash or shell line, one per line.\n\n"
        'With --json: {"items": [{value, description, kind, replace_from}]}.',
        (Param("line", "The partial line.", required=True), JSON),
        daemon=True,  # it reads the live session's servers and tool names
        json_output=(JsonDoc("object", ("items",), "each item: value, description, kind, replace_from"),),
    ),
    CommandSpec(
        ("completion", "show"),
        "Print the completion script of a shell.",
        (Param("shell", "bash, zsh or fish.", required=True, completer="shells"), JSON),
        json_output=(JsonDoc("object", ("shell", "script")),),
    ),
    CommandSpec(
        ("completion", "install"),
        "Install the completion script of a shell for the current user.",
        (Param("shell", "bash, zsh or fish.", required=True, completer="shells"), JSON),
        json_output=(JsonDoc("object", ("ok", "message", "shell", "path")),),
    ),
    CommandSpec(
        ("shell",),
        "Interactive session: slash and shell-style commands, servers stay connected.",
        (),
        # False: the REPL runs its own event loop in a thread, since line editing (readline)
        # only works in the main thread; its servers do connect.
        connects=False,
        json_output=(JsonDoc("none", (), "interactive; each line takes --json itself"),),
    ),
)
