"""The one command-line parser: Typer's Click commands, built from the command table.

Every front parses a command's words here: the shell's argv, a slash line (``/mcp:start x`` is
``start`` and ``x``), a REPL line and a line forwarded into the session daemon. Which command the
words name is the table's grammar (``commands/complete.py``); its parameters are Click's
(``Command.make_context``), so help, usage errors, defaults and conversions are the same on every
front. The commands are Typer's Click classes (``TyperCommand``, ``TyperOption``, ...) built
directly from ``CommandSpec``s: nothing is reflected from a function signature.

No command logic lives here, and nothing is printed: the shell front runs what it parsed
(``frontends/shell_command.py``), the other fronts hand the invocation to their session.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import takewhile
from pathlib import Path
from typing import Any

from typer._click import Command, Context, Parameter
from typer._click.exceptions import UsageError as ClickUsageError
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from orbmcp import environment
from orbmcp._version import __version__
from orbmcp.commands.complete import is_program_word, next_words, resolve, shell_commands
from orbmcp.commands.params import GLOBAL_OPTIONS
from orbmcp.commands.results.base import CommandHelp
from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.commands.table import COMMANDS, GROUPS
from orbmcp.errors import UsageError, cmd
from orbmcp.suggest import close_names

# Click keeps lines after "\b" as they are (no rewrapping).
GETTING_STARTED = (
    "\b\nGet started:\n"
    "  orbmcp add NAME -- COMMAND [ARGS...]  add a server (or: add NAME URL)\n"
    "  orbmcp config import CLIENT...        copy your other clients' servers\n"
    "  orbmcp config paths                   where servers go: mcp.json\n"
    "  orbmcp status                         every server; status NAME says why\n"
    "  orbmcp tools SERVER [TOOL]            what a server offers, one tool\n"
    "  orbmcp call SERVER TOOL k=v           call a tool"
)
EXIT_CODES = (
    "Exit codes: 0 ok, 1 tool error or failed check, 2 usage, 3 config, 4 connection/protocol, "
    "5 auth, 6 timeout, 130 interrupted, 70 internal error."
)
# Paths stay strings here and become Paths in the handlers (Typer's Path type would convert
# through pydantic: ~50 ms of imports).
_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "path": str}
_UNBRACED = re.compile(r"^\{(.*)\}$")
_HELP_TEXT = "Show this message and exit."


@dataclass
class GlobalOptions:
    """The program's own options of one run (``GLOBAL_OPTIONS`` in the command table)."""

    project: Path | None = None
    config_file: Path | None = None
    no_color: bool = False
    json: bool = False
    no_input: bool = False


@dataclass(frozen=True)
class Invocation:
    """A parsed line: which command, the handler's keyword arguments, and how to show the result."""

    spec: CommandSpec
    kwargs: dict[str, Any]
    json: bool = False  # the line itself asked for --json
    help: CommandHelp | None = None  # --help / -h: show this instead of running the command
    help_text: str = ""  # the same help as Click formats it (what the shell prints)
    front: str = "slash"  # "slash", "shell" (REPL) or "cli": hints name commands this front's way
    index: bool = False  # `/mcp help`: list the commands instead of running one


class _Answered(Exception):
    """``--help`` or ``--version``: the parse ends with this text instead of a command."""

    def __init__(self, ctx: Context, text: str) -> None:
        super().__init__(text)
        self.ctx = ctx
        self.text = text


def _ask_help(ctx: Context, _param: Parameter, value: object) -> None:
    if value and not ctx.resilient_parsing:
        raise _Answered(ctx, ctx.get_help())


def _ask_version(ctx: Context, _param: Parameter, value: object) -> None:
    if value and not ctx.resilient_parsing:
        raise _Answered(ctx, f"orbmcp {__version__}")


def _help_option(text: str = _HELP_TEXT) -> TyperOption:
    # Eager, as Click's own help option, but the help comes back to the front instead of being
    # printed: a slash line's help is the agent's to show.
    return TyperOption(
        param_decls=["help", "--help", "-h"],
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_ask_help,
        help=text,
    )


def _global_option(p: Param) -> TyperOption:
    text = p.help + (f" (env {p.envvar})" if p.envvar else "")
    if p.name == "help":
        return _help_option(p.help)
    if p.name == "version":
        return TyperOption(
            param_decls=[p.name, *p.option_names],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_ask_version,
            help=p.help,
        )
    if p.kind == "flag":
        return TyperOption(param_decls=[p.name, *p.option_names], is_flag=True, default=False, help=text)
    # The environment variable is read by orbmcp.environment (the one reader), not by Click.
    return TyperOption(param_decls=[p.name, *p.option_names], type=str, help=text, metavar=p.metavar)


def _parameter(p: Param) -> Parameter:
    if p.kind == "flag":
        return TyperOption(
            param_decls=[p.name, *p.option_names], is_flag=True, default=False, help=p.help, hidden=p.hidden
        )
    if p.kind == "option":
        return TyperOption(
            param_decls=[p.name, *p.option_names],
            type=_TYPES[p.type],
            default=p.default,
            multiple=p.multiple,
            metavar=p.metavar,
            help=p.help,
            hidden=p.hidden,
        )
    return TyperArgument(
        param_decls=[p.name],
        type=_TYPES[p.type],
        required=p.required,
        default=p.default,
        nargs=-1 if p.multiple else 1,
        metavar=_argument_metavar(p),
        help=p.help,
        hidden=p.hidden,
        show_default=False,
    )


def _argument_metavar(p: Param) -> str:
    """``SERVER``, ``[SERVER]``, ``[K=V]...``: one spelling on every usage line."""
    name = p.metavar or p.name.upper()
    if p.multiple:
        return f"{name}..." if p.required else f"[{name}]..."
    return name if p.required else f"[{name}]"


class _Command(TyperCommand):
    """One table command as a Click command; ``spec`` is its table entry."""

    def __init__(self, spec: CommandSpec) -> None:
        # "\b": Click keeps the lines as they are; a rewrapped example could not be copied.
        epilog = "\b\nExamples:\n" + "\n".join(f"  {e}" for e in spec.examples) if spec.examples else None
        super().__init__(
            spec.path[-1],
            params=[*(_parameter(p) for p in spec.params), _help_option()],
            help=spec.help,
            # The listing shows the whole first line: Click's default cuts it at the first period.
            short_help=spec.summary,
            hidden=spec.hidden,
            epilog=epilog,
            add_help_option=False,
            rich_markup_mode=None,
        )
        self.spec = spec

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        """Typer writes a required argument as ``{NAME}``; orbmcp's usage lines say ``NAME``."""
        return [_UNBRACED.sub(r"\1", piece) for piece in super().collect_usage_pieces(ctx)]


def _group(name: str | None, help_text: str | None, params: list[Parameter], **attrs: Any) -> TyperGroup:
    return TyperGroup(
        name=name,
        params=params,
        help=help_text,
        rich_markup_mode=None,  # plain Click help: rich's doubles --help's time
        add_help_option=False,
        **attrs,
    )


@cache
def build_app() -> TyperGroup:
    """The program as one Click group: its options from ``GLOBAL_OPTIONS``, a command per entry."""
    root = _group(
        "orbmcp",
        "orbmcp: check, start, stop, authorize and call your MCP servers.",
        [_global_option(p) for p in GLOBAL_OPTIONS],
        invoke_without_command=True,
        epilog=GETTING_STARTED + "\n\n" + EXIT_CODES,
    )
    groups: dict[str, TyperGroup] = {}
    for spec in COMMANDS:
        target = root
        if len(spec.path) > 1:
            group = spec.path[0]
            if group not in groups:
                text = GROUPS.get(group)
                groups[group] = _group(group, text, [_help_option()], short_help=text)
                root.add_command(groups[group])
            target = groups[group]
        target.add_command(_Command(spec))
    return root


@cache
def _commands() -> dict[tuple[str, ...], Command]:
    """Each command path (and group) of the program, with its Click command."""
    found: dict[tuple[str, ...], Command] = {}

    def walk(path: tuple[str, ...], command: Command) -> None:
        found[path] = command
        if isinstance(command, TyperGroup):
            for name, sub in command.commands.items():
                walk((*path, name), sub)

    walk((), build_app())
    return found


def command_for(spec: CommandSpec) -> Command:
    return _commands()[spec.path]


# ------------------------------------------------------------------------------------- parsing


def spelled_name(spec: CommandSpec, front: str) -> str:
    """The command as this front writes it: ``orbmcp start``, ``/mcp:start``, ``start``."""
    from orbmcp.commands.spelling import speller_for

    return speller_for(front)(spec.name)


def usage_error(exc: ClickUsageError, spec: CommandSpec | None) -> UsageError:
    """Click's usage error as an ``OrbError``: Click's message, and the usage line as the hint
    (its command a reference each front spells its own way)."""
    command = command_for(spec) if spec is not None else build_app()
    pieces = " ".join(command.collect_usage_pieces(Context(command)))
    words = cmd(spec.name) if spec is not None else "orbmcp"
    return UsageError(exc.format_message(), hint=f"usage: {words} {pieces}")


def _values(spec: CommandSpec, params: dict[str, Any]) -> dict[str, Any]:
    """Click's values as handlers take them: a repeatable value a list, or None when absent."""
    kwargs: dict[str, Any] = {}
    for p in spec.params:
        value = params.get(p.name)
        if p.multiple:
            value = list(value) if value else None
        elif p.kind == "flag":
            value = bool(value)
        kwargs[p.name] = value
    return kwargs


def _help_of(spec: CommandSpec, text: str) -> CommandHelp:
    usage, _, body = text.partition("\n\n")  # a long usage line wraps onto more lines
    return CommandHelp(spec.name, " ".join(usage.split()).removeprefix("Usage: "), body.strip("\n"))


def parse_command(spec: CommandSpec, args: Sequence[str], *, front: str) -> Invocation:
    """Bind a command's words (after its path) to its parameters: the one binder of every front."""
    command = command_for(spec)
    try:
        ctx = command.make_context(spelled_name(spec, front), list(args))
    except _Answered as answered:
        shown = _help_of(spec, answered.text)
        return Invocation(spec, {}, json="--json" in args, help=shown, help_text=answered.text, front=front)
    except ClickUsageError as exc:
        raise usage_error(exc, spec) from None
    kwargs = _values(spec, ctx.params)
    return Invocation(spec, kwargs, json=bool(kwargs.get("json")), front=front)


def parse_words(words: Sequence[str], *, front: str = "shell") -> Invocation:
    """A shell-style line (``status``, ``call srv tool k=v``, ``orbmcp tools``): for the REPL
    (``front="shell"``), the daemon and the shell itself (``front="cli"``)."""
    words = list(words)
    if words and is_program_word(words[0]):
        words = words[1:]
    if not words:
        raise UsageError("empty command", hint="try `help`")
    if words[0].startswith("-"):
        raise UsageError(
            f"'{words[0]}' is an option of the orbmcp program; here, give it after a command",
            hint="e.g. `status --json`",
        )
    paths = shell_commands()
    spec, n = resolve(paths, words)
    if spec is None:
        following = next_words(paths, words[:1])
        if following and len(words) == 1:
            raise UsageError(
                f"'{words[0]}' needs a command: {', '.join(sorted(following))}",
                hint=f"{cmd(words[0], '--help')} says what each does",
            )
        names = sorted({p[0] for p in paths})
        close = close_names(words[0], names)
        raise UsageError(
            f"unknown command '{words[0]}'",
            hint=f"did you mean '{close[0]}'?" if close else f"commands: {', '.join(names)}",
        )
    return parse_command(spec, words[n:], front=front)


@dataclass(frozen=True)
class ProgramParse:
    """A shell command line parsed: the program's options and the command, or text to print."""

    options: GlobalOptions
    invocation: Invocation | None = None
    text: str | None = None  # --help, --version, or a bare `orbmcp`: print this, exit 0


def parse_program(args: Sequence[str]) -> ProgramParse:
    """The whole line of the ``orbmcp`` program (its options before the command's words)."""
    root = build_app()
    try:
        ctx = root.make_context("orbmcp", list(args))
    except _Answered as answered:
        return ProgramParse(GlobalOptions(), text=answered.text)
    except ClickUsageError as exc:
        raise usage_error(exc, None) from None
    params = ctx.params
    project, config = params.get("project"), params.get("config")
    options = GlobalOptions(
        project=Path(project) if project else environment.project_dir(),
        config_file=Path(config) if config else environment.config_file(),
        no_color=bool(params.get("no_color")),
        json=bool(params.get("json")),
        no_input=bool(params.get("no_input")),
    )
    words = [*ctx._protected_args, *ctx.args]
    if not words:
        # Bare `orbmcp`: a newcomer's first command gets the help and where to begin, exit 0.
        return ProgramParse(options, text=ctx.get_help())
    head = tuple(takewhile(lambda word: not word.startswith("-"), words))
    group = _commands().get(head)
    if isinstance(group, TyperGroup) and {"--help", "-h"} & set(words):
        # `orbmcp config --help`: a group's help lists its commands.
        return ProgramParse(options, text=group.get_help(group.make_context(f"orbmcp {' '.join(head)}", [])))
    return ProgramParse(options, invocation=parse_words(words, front="cli"))
