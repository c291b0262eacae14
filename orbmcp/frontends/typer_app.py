"""The Typer app, generated from the command table (imported only when a command needs it).

No command logic lives here: each generated Typer command collects its parameters, builds a
``CommandContext`` and hands over to ``run_command``, the one error boundary of the shell front
(errors → exit codes, JSON errors on stderr, crash logs for bugs).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
import typer.core

from orbmcp import environment
from orbmcp._version import __version__
from orbmcp.commands.params import GLOBAL_OPTIONS
from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.commands.table import COMMANDS, GROUPS

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
# Typer 0.29 converts Path parameters through pydantic (~50 ms of imports): paths stay strings here
# and become Paths in the handlers.
_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "path": str}
_UNBRACED = re.compile(r"^\{(.*)\}$")


@dataclass
class GlobalOptions:
    """The program's own options of one run (``GLOBAL_OPTIONS`` in the command table)."""

    project: Path | None = None
    config_file: Path | None = None
    no_color: bool = False
    json: bool = False
    no_input: bool = False


def _version(value: bool) -> None:
    if value:
        print(f"orbmcp {__version__}")
        raise typer.Exit(0)


def _global_param(p: Param) -> inspect.Parameter:
    if p.name == "version":
        default: Any = typer.Option(False, *p.option_names, help=p.help, callback=_version, is_eager=True)
        annotation: Any = bool
    elif p.kind == "flag":
        text = p.help + (f" (env {p.envvar})" if p.envvar else "")
        default, annotation = typer.Option(False, *p.option_names, help=text), bool
    else:
        # The environment variable is read by orbmcp.environment (the one reader), not by Typer.
        text = p.help + (f" (env {p.envvar})" if p.envvar else "")
        default = typer.Option(None, *p.option_names, help=text, metavar=p.metavar)
        annotation = str | None
    return inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _root_callback() -> Any:
    """The Typer root callback, its options generated from ``GLOBAL_OPTIONS`` (help is Typer's)."""

    def root(ctx: typer.Context, **options: Any) -> None:
        project, config = options.get("project"), options.get("config")
        ctx.obj = GlobalOptions(
            project=Path(project) if project else environment.project_dir(),
            config_file=Path(config) if config else environment.config_file(),
            no_color=bool(options.get("no_color")),
            json=bool(options.get("json")),
            no_input=bool(options.get("no_input")),
        )
        if ctx.invoked_subcommand is None and not ctx.resilient_parsing:
            # Bare `orbmcp`: a newcomer's first command gets the help and where to begin, exit 0.
            typer.echo(ctx.get_help())
            raise typer.Exit(0)

    params = [_context_param(), *(_global_param(p) for p in GLOBAL_OPTIONS if p.name != "help")]
    root.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    root.__doc__ = "orbmcp: check, start, stop, authorize and call your MCP servers."
    return root


def global_options(ctx: typer.Context) -> GlobalOptions:
    """This run's global options, which the root callback put on the root context."""
    obj = ctx.find_root().obj
    return obj if isinstance(obj, GlobalOptions) else GlobalOptions()


def _typer_param(p: Param) -> inspect.Parameter:
    py_type: Any = _TYPES[p.type]
    if p.kind == "flag":
        default: Any = typer.Option(False, *p.option_names, help=p.help, hidden=p.hidden)
        annotation: Any = bool
    elif p.kind == "option":
        annotation = list[py_type] | None if p.multiple else py_type | None
        default = typer.Option(None, *p.option_names, help=p.help, metavar=p.metavar, hidden=p.hidden)
    else:
        annotation = list[py_type] | None if p.multiple else (py_type if p.required else py_type | None)
        default = typer.Argument(
            ... if p.required else None, help=p.help, metavar=_argument_metavar(p), show_default=False
        )
    return inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _argument_metavar(p: Param) -> str:
    """``SERVER``, ``[SERVER]``, ``[K=V]...``: one spelling on every usage line (Click alone
    writes required arguments as ``{server}``)."""
    name = p.metavar or p.name.upper()
    if p.multiple:
        return f"{name}..." if p.required else f"[{name}]..."
    return name if p.required else f"[{name}]"


class _Command(typer.core.TyperCommand):
    def collect_usage_pieces(self, ctx: Any) -> list[str]:  # Typer's vendored Click context
        """Typer writes a required argument as ``{NAME}``; orbmcp's usage lines say ``NAME``."""
        return [_UNBRACED.sub(r"\1", piece) for piece in super().collect_usage_pieces(ctx)]


def _context_param() -> inspect.Parameter:
    return inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)


def _make_command(spec: CommandSpec) -> Any:
    def command(ctx: typer.Context, **kwargs: Any) -> None:
        raise typer.Exit(run_command(spec, kwargs, global_options(ctx)))

    params = [_context_param(), *(_typer_param(p) for p in spec.params)]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__name__ = spec.path[-1].replace("-", "_")
    command.__doc__ = spec.help
    return command


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="orbmcp",
        add_completion=False,  # orbmcp ships its own completion (commands/complete.py)
        no_args_is_help=False,
        invoke_without_command=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        # Plain click help: rich-formatted help imports most of rich and doubles --help's time.
        rich_markup_mode=None,
        epilog=GETTING_STARTED
        + "\n\nExit codes: 0 ok, 1 tool error or failed check, 2 usage, 3 config, 4 connection/protocol, "
        "5 auth, 6 timeout, 130 interrupted, 70 internal error.",
    )
    app.callback()(_root_callback())
    groups: dict[str, typer.Typer] = {}
    for spec in COMMANDS:
        # "\b": Click keeps the lines as they are; a rewrapped example could not be copied.
        epilog = "\b\nExamples:\n" + "\n".join(f"  {e}" for e in spec.examples) if spec.examples else None
        if len(spec.path) == 1:
            target = app
        else:
            group = spec.path[0]
            if group not in groups:
                groups[group] = typer.Typer(
                    help=GROUPS.get(group), no_args_is_help=True, rich_markup_mode=None
                )
                app.add_typer(groups[group], name=group, short_help=GROUPS.get(group))
            target = groups[group]
        # The listing shows the whole first line: Click's default cuts it at the first period
        # ("Run one slash command line, e.g.").
        target.command(
            name=spec.path[-1],
            cls=_Command,
            help=spec.help,
            short_help=spec.summary,
            hidden=spec.hidden,
            epilog=epilog,
        )(_make_command(spec))
    return app


def run_command(spec: CommandSpec, kwargs: dict[str, Any], opts: GlobalOptions | None = None) -> int:
    """Run one command from the shell; the single place where errors become exit codes."""
    from orbmcp.frontends.runner import run_in_shell

    opts = opts or GlobalOptions()
    json_output = bool(kwargs.get("json")) or opts.json
    if "json" in kwargs:
        kwargs["json"] = json_output
    return run_in_shell(
        spec,
        kwargs,
        project=opts.project,
        config_file=opts.config_file,
        json_output=json_output,
        no_color=opts.no_color or environment.no_color(),
        no_input=opts.no_input,
    )
