"""The shape of a command definition.

A command is defined once (``table.py``): its name, help, parameters, completers, slash forms and
the shape of its ``--json`` output.
The Typer CLI, the slash dispatcher, shell completion scripts and the man page are all generated
from these definitions. NamedTuples rather than dataclasses: the table is loaded on every
``--help`` and Tab, and ``dataclasses`` costs ~8 ms of imports.

The table names no handler: handlers use the table (spelling, completion scripts), so a table that
imported them, even lazily, would close an import cycle. Each command's handler is bound to its
path a layer up, as a typed lazy reference (``session/handler_refs.py``).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

ParamKind = Literal["argument", "option", "flag"]
ValueType = Literal["str", "int", "float", "path"]

# Completer names understood by orbmcp.commands.complete.
Completer = Literal[
    "servers",  # every configured server
    "servers:stopped",  # servers not running (falls back to all when no session knows)
    "servers:running",  # running servers (falls back to all)
    "servers:oauth",  # servers with OAuth configured
    "servers:enabled",  # servers that are on (disable offers these)
    "servers:disabled",  # servers that are off (enable offers these)
    "tools",  # tools of the server named earlier on the line (from the discovery cache)
    "shells",  # bash, zsh, fish
    "check-formats",  # text, github
    "clients",  # other MCP clients orbmcp imports from
    "agents",  # agents orbmcp integrate wires orbmcp into
    "scopes",  # global, project
    "prompt_arguments",  # name=value of a prompt's arguments; values from the server (completion/complete)
    "tool_arguments",  # name=value of a tool's arguments: names, enum values and booleans from its schema
    "resource_uris",  # a resource template's URI with values from the server (completion/complete)
]


class Param(NamedTuple):
    name: str  # python identifier passed to the handler
    help: str
    kind: ParamKind = "argument"
    flags: tuple[str, ...] = ()  # option spellings, e.g. ("--timeout",); derived from name when empty
    type: ValueType = "str"
    required: bool = False
    default: object = None
    multiple: bool = False  # variadic argument or repeatable option
    completer: Completer | None = None
    metavar: str | None = None
    hidden: bool = False
    envvar: str | None = None  # global options: the environment variable that sets it

    @property
    def option_names(self) -> tuple[str, ...]:
        if self.kind == "argument":
            return ()
        return self.flags or ("--" + self.name.replace("_", "-"),)


class JsonDoc(NamedTuple):
    """The documented shape of one command's ``--json`` output on stdout (the man page's)."""

    shape: str  # "array", "object", "array of strings", "none", "inner"
    keys: tuple[str, ...] = ()  # keys of the object, or of each array element
    note: str = ""
    open: bool = False  # True: at least these keys (more depend on the options)
    variant: str = ""  # the arguments of a second shape ("SERVER": ``status SERVER``'s)


class CommandSpec(NamedTuple):
    path: tuple[str, ...]  # ("status",) or ("config", "show")
    help: str
    params: tuple[Param, ...] = ()
    slash: tuple[str, ...] = ()  # slash spellings: "/mcp", "/mcp:start" (space forms are derived)
    connects: bool = False  # needs MCP connections (imports mcp); False keeps it fast
    # Whether the session daemon runs it when one is up; None: when it connects. The daemon's
    # client reads this off ``fastpath/argv.py`` ``DAEMON_COMMANDS``, which ``scripts/gen_docs.py``
    # writes from the table.
    daemon: bool | None = None
    # One-shot, try it without the event loop first (session/one_shot.py): the handler may find
    # nothing to connect, and does nothing before asking for the session that it could not do twice.
    offline_first: bool = False
    hidden: bool = False
    epilog: str | None = None
    examples: tuple[str, ...] = ()
    json_output: tuple[JsonDoc, ...] = ()  # what --json prints: one shape, or one per variant

    @property
    def name(self) -> str:
        return " ".join(self.path)

    @property
    def runs_in_daemon(self) -> bool:
        return self.connects if self.daemon is None else self.daemon

    @property
    def summary(self) -> str:
        return self.help.split("\n", 1)[0]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)
