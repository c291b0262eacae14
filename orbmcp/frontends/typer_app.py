"""The Typer app, generated from the command table (imported only when a command needs it).

No command logic lives here: each generated Typer command collects its parameters, builds a
``CommandContext`` and hands over to ``run_command``, the one error boundary of the shell front
(errors → exit codes, JSON errors on stderr, crash logs for bugs).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from orbmcp import environment
from orbmcp._version import __version__
from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.commands.table import COMMANDS, GROUPS

# Typer 0.29 converts Path parameters through pydantic (~50 ms of imports): paths stay strings here
# and become Paths in the handlers.
_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "path": str}


class GlobalOptions:
    project: Path | None = None
    config_file: Path | None = None
    no_color: bool = False
    json: bool = False


OPTS = GlobalOptions()


def _version(value: bool) -> None:
    if value:
        print(f"orbmcp {__version__}")
        raise typer.Exit(0)


def _root(
    version: bool = typer.Option(
        False, "--version", "-V", help="Show the version and exit.", callback=_version, is_eager=True
    ),
    project: str | None = typer.Option(
        None,
        "--project",
        "-p",
        help="Project directory (default: cwd).",
        metavar="DIR",
    ),
    config: str | None = typer.Option(
        None,
        "--config",
        "-c",
        help="Use only this config file (trusted).",
        metavar="FILE",
    ),
    no_color: bool = typer.Option(False, "--no-color", help="No colours or rich tables (also NO_COLOR)."),
    json_output: bool = typer.Option(False, "--json", help="JSON output for every command."),
) -> None:
    """orbmcp: check, start, stop, authorize and call your MCP servers."""
    OPTS.project = Path(project) if project else environment.project_dir()
    OPTS.config_file = Path(config) if config else environment.config_file()
    OPTS.no_color, OPTS.json = no_color, json_output


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
            ... if p.required else None, help=p.help, metavar=p.metavar, show_default=False
        )
    return inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _make_command(spec: CommandSpec) -> Any:
    def command(**kwargs: Any) -> None:
        raise typer.Exit(run_command(spec, kwargs))

    command.__signature__ = inspect.Signature([_typer_param(p) for p in spec.params])  # type: ignore[attr-defined]
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
        epilog="Exit codes: 0 ok, 1 tool error or failed check, 2 usage, 3 config, 4 connection/protocol, "
        "5 auth, 6 timeout, 130 interrupted, 70 internal error.",
    )
    app.callback()(_root)
    groups: dict[str, typer.Typer] = {}
    for spec in COMMANDS:
        epilog = "\n\n".join(["Examples:", *spec.examples]) if spec.examples else None
        if len(spec.path) == 1:
            target = app
        else:
            group = spec.path[0]
            if group not in groups:
                groups[group] = typer.Typer(
                    help=GROUPS.get(group), no_args_is_help=True, rich_markup_mode=None
                )
                app.add_typer(groups[group], name=group)
            target = groups[group]
        target.command(name=spec.path[-1], help=spec.help, hidden=spec.hidden, epilog=epilog)(
            _make_command(spec)
        )
    return app


def run_command(spec: CommandSpec, kwargs: dict[str, Any]) -> int:
    """Run one command from the shell; the single place where errors become exit codes."""
    from orbmcp.frontends.runner import run_in_shell

    json_output = bool(kwargs.get("json")) or OPTS.json
    if "json" in kwargs:
        kwargs["json"] = json_output
    return run_in_shell(
        spec,
        kwargs,
        project=OPTS.project,
        config_file=OPTS.config_file,
        json_output=json_output,
        no_color=OPTS.no_color or environment.no_color(),
    )
