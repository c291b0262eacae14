"""One command line of the ``orbmcp`` program, run one-shot: parsed by the one parser of every
front (``session.command_line``), run through the error boundary (``session.runner``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from orbmcp import environment
from orbmcp.commands.spec import CommandSpec
from orbmcp.errors import OrbError
from orbmcp.frontends.process_tuning import owns_process
from orbmcp.session.command_line import GlobalOptions, parse_program
from orbmcp.session.console import local_console, silence_local_stdout
from orbmcp.session.runner import report_failure, run_in_shell


def run_program(args: Sequence[str]) -> int:
    """Parse the program's line and run its command, or print its help or version."""
    try:
        line = parse_program(args)
    except OrbError as err:
        before_dashes = list(args)[: list(args).index("--")] if "--" in args else list(args)
        return report_failure(err, console=local_console(), json_output="--json" in before_dashes)
    inv = line.invocation
    if inv is None or inv.help is not None:
        _print(line.text if inv is None else inv.help_text)
        return 0
    return run_command(inv.spec, inv.kwargs, line.options)


def _print(text: str | None) -> None:
    try:
        sys.stdout.write(f"{text or ''}\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `orbmcp --help | head`: the reader left
        silence_local_stdout()


def run_command(spec: CommandSpec, kwargs: dict[str, Any], opts: GlobalOptions | None = None) -> int:
    """Run one command from the shell; the single place where errors become exit codes."""
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
        hand_off_at_exit=owns_process(),
    )
