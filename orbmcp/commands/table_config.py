"""The commands that read and edit configuration: ``config show/paths/validate/import``, ``add``,
``remove``, ``enable``, ``disable``, ``trust`` and ``untrust`` (part of ``table.COMMANDS``, in the
order ``--help`` lists them)."""

from __future__ import annotations

from typing import get_args

from orbmcp.commands.json_keys import EDIT_DOC
from orbmcp.commands.params import JSON, SCOPE
from orbmcp.commands.spec import CommandSpec, JsonDoc, Param
from orbmcp.config.model import ClientName

CONFIG_COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        ("config", "show"),
        "Show the resolved configuration (secrets masked) with its warnings.",
        (JSON,),
        json_output=(JsonDoc("object", ("servers", "warnings", "project", "settings"), "secrets masked"),),
    ),
    CommandSpec(
        ("config", "paths"),
        "Show where orbmcp reads and writes.",
        (JSON,),
        json_output=(
            JsonDoc(
                "object",
                (
                    "globalDir",
                    "globalFiles",
                    "projectFiles",
                    "configOverride",
                    "trustStore",
                    "authDir",
                    "debugLog",
                    "cacheDir",
                    "imports",
                ),
                "imports: other clients' files orbmcp reads, each {client, path, scope, exists}",
            ),
        ),
    ),
    CommandSpec(
        ("config", "validate"),
        "Validate the configuration; exit 3 on any error or invalid entry.",
        (JSON,),
        json_output=(JsonDoc("object", ("ok", "servers", "warnings", "project")),),
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
        json_output=(
            JsonDoc(
                "object",
                ("file", "scope", "dryRun", "written", "servers", "diff", "read", "notes"),
                "servers are {name, source, file, outcome, reason}; outcome: added, replaced, unchanged, "
                "conflict, skipped; the diff masks secrets",
            ),
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
        json_output=(EDIT_DOC,),
    ),
    CommandSpec(
        ("remove",),
        "Remove a server's entry from orbmcp's own config (the entry in effect, or that of --scope).",
        (Param("name", "Server to remove.", required=True, completer="servers"), SCOPE, JSON),
        examples=("orbmcp remove docs",),
        json_output=(EDIT_DOC,),
    ),
    CommandSpec(
        ("enable",),
        "Turn a server on in its config; in a running session also start it.",
        (Param("server", "Server to enable.", required=True, completer="servers:disabled"), JSON),
        slash=("/mcp:enable",),
        connects=True,
        examples=("orbmcp enable files",),
        json_output=(EDIT_DOC,),
    ),
    CommandSpec(
        ("disable",),
        "Turn a server off in its config (the entry stays); in a running session also stop it.",
        (Param("server", "Server to disable.", required=True, completer="servers:enabled"), JSON),
        slash=("/mcp:disable",),
        connects=True,
        examples=("orbmcp disable files",),
        json_output=(EDIT_DOC,),
    ),
    CommandSpec(
        ("trust",),
        "Review exactly what a project's config would run, and approve it.",
        (Param("yes", "Approve without asking.", kind="flag", flags=("--yes", "-y")), JSON),
        json_output=(JsonDoc("object", ("ok", "message", "trusted", "review")),),
    ),
    CommandSpec(
        ("untrust",),
        "Revoke a project's approval.",
        (JSON,),
        json_output=(JsonDoc("object", ("ok", "message", "trusted", "revoked")),),
    ),
)
