"""The shell entry point: fast paths first, then the Typer app built from the command table.

``--version`` and ``complete`` (run on every Tab) answer without importing Typer; everything else
goes to ``session.command_line``, the one parser of every front. No command logic lives in either module:
handlers do the work; ``frontends/shell_command.py`` runs them through ``session.runner``, the
error boundary.
"""

from __future__ import annotations

import os
import sys

from orbmcp._version import __version__

TYPE_CHECKING = False  # not typing's: the daemon's client imports none (daemon_client.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from orbmcp.frontends.shell_command import run_command
    from orbmcp.session.command_line import build_app

__all__ = ["build_app", "main", "run", "run_command"]


def __getattr__(name: str) -> Any:
    if name in ("build_app", "GlobalOptions"):
        from orbmcp.session import command_line

        return getattr(command_line, name)
    if name == "run_command":
        from orbmcp.frontends import shell_command

        return shell_command.run_command
    raise AttributeError(name)


def run(argv: list[str], *, own_process: bool = False, wire: Callable[[], None] | None = None) -> int:
    """Run one command line and return its exit status (what ``main`` exits with).

    Nothing here exits the process, so tests and embedders can run the CLI in-process.
    ``own_process``: the caller is the ``orbmcp`` program itself, which owns its process and may
    tune it for the SDK import (never an embedder's process). ``wire``: the program's wiring of
    its fronts (``orbmcp.__main__``), run once the line goes past the fast paths.
    """
    if argv in (["--version"], ["-V"]):
        # Fast path: no Typer app to build for the most common scripted probe.
        print(f"orbmcp {__version__}")
        return 0
    # A session daemon of this scope runs the command in its live session (stdlib-only client).
    from orbmcp.fastpath.daemon_client import maybe_forward

    forwarded = maybe_forward(argv)
    if forwarded is not None:
        if own_process:
            _leave(forwarded)  # nothing was imported that needs tearing down
        return forwarded
    if argv[:1] == ["complete"]:
        # Fast path: shells run this on every Tab; it needs neither Typer nor the handler machinery.
        from orbmcp.session.slash import complete_fast

        code = complete_fast(argv[1:])
        if code is not None:
            return code
    if own_process:
        from orbmcp.fastpath.argv import ProgramLine
        from orbmcp.frontends.process_tuning import tune_for_cli

        path = ProgramLine(argv).command() or ()
        tune_for_cli(client_only=path[:1] not in (("serve",), ("daemon",)))
    code = _bare_status(argv)
    if code is not None:
        return code
    from orbmcp import front_handlers
    from orbmcp.commands.adhoc import place_server
    from orbmcp.fastpath.argv import entry_json_option, hoist_global_options
    from orbmcp.frontends.shell_command import run_program

    front_handlers.bind()
    if wire is not None:
        wire()
    return run_program(place_server(entry_json_option(hoist_global_options(argv))))


def _bare_status(argv: list[str]) -> int | None:
    """``orbmcp status [--json]`` with only the program's options: the overview scripts and
    newcomers run most, run without building the Typer app (an empty one imports no event loop
    either). Anything else on the line goes through Typer. None: not such a line."""
    from orbmcp.fastpath.argv import ProgramLine

    line = ProgramLine(argv)
    if line.help or line.words not in (["status"], ["status", "--json"]):
        return None
    from pathlib import Path

    from orbmcp import environment
    from orbmcp.commands.table import find
    from orbmcp.frontends.process_tuning import owns_process
    from orbmcp.session.runner import run_in_shell

    spec = find(("status",))
    assert spec is not None
    json_output = line.json or line.words[-1] == "--json"
    return run_in_shell(
        spec,
        {"server": None, "json": json_output},
        project=Path(line.project) if line.project else environment.project_dir(),
        config_file=Path(line.config) if line.config else environment.config_file(),
        json_output=json_output,
        no_color=line.no_color or environment.no_color(),
        hand_off_at_exit=owns_process(),
    )


def main(argv: list[str] | None = None, *, wire: Callable[[], None] | None = None) -> None:
    _path_hint()
    _exit(run(sys.argv[1:] if argv is None else argv, own_process=True, wire=wire))


def _path_hint() -> None:
    """Once, the line that puts this program's directory on ``PATH`` (``frontends.path_hint``)."""
    from orbmcp.frontends.path_hint import cache_dir, hint

    line = hint(sys.argv[0], os.environ, cache_dir(os.environ))
    if line is not None:
        print(line, file=sys.stderr)


def _leave(status: int) -> None:
    """Exit now, skipping the interpreter's teardown: a forwarded command imported only the
    standard library and has flushed everything it printed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    import atexit

    atexit._run_exitfuncs()  # coverage and the like still run
    os._exit(status)


def _exit(status: int) -> None:
    if "mcp" in sys.modules:
        # Tearing down the SDK's thousands of pydantic classes costs ~0.5 s at interpreter exit.
        # Everything is stopped and flushed by now; run atexit hooks (coverage, logging) and leave.
        import atexit
        import logging

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        atexit._run_exitfuncs()
        logging.shutdown()
        os._exit(status)
    raise SystemExit(status)
