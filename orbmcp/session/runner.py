"""Running a handler from the shell: context, event loop, rendering, and the error boundary."""

from __future__ import annotations

import inspect
import os
import time
import traceback
from pathlib import Path
from typing import Any

from orbmcp import environment, fs
from orbmcp.commands import adhoc
from orbmcp.commands.context import CommandContext, SessionProvider, default_interactive
from orbmcp.commands.outcome import ExitCode, exit_code_for
from orbmcp.commands.spec import CommandSpec
from orbmcp.config.paths import global_dir
from orbmcp.errors import Interrupted, OrbError, UsageError
from orbmcp.session.console import Console, local_console, silence_local_stdout
from orbmcp.session.handler_refs import handler_of
from orbmcp.text import one_line

# The rest is imported in the function that needs it: every shell command runs through here, and
# --help, an empty status and config commands must not load the renderers, anyio or the SDK
# (tests/test_cli_foundation.py pins those import sets).


async def call_handler(spec: CommandSpec, ctx: CommandContext, kwargs: dict[str, Any]) -> Any:
    handler = handler_of(spec)
    args = {k: v for k, v in kwargs.items() if k != "json"}
    if adhoc.taken_by(spec):
        take_adhoc(ctx, args)
    result = handler(ctx, **args)
    if inspect.isawaitable(result):
        result = await result
    return result


def take_adhoc(ctx: CommandContext, args: dict[str, Any]) -> None:
    """A server named on the command line (``--stdio``, ``--http``, ``--sse``) becomes the
    command's one server; a shared session refuses it (its servers are the config's)."""

    if adhoc.requested(args) and ctx.persistent:
        raise UsageError(
            "--stdio, --http and --sse run a server for one command, not in a shared session",
            hint="add it to the config first: orbmcp add NAME -- COMMAND, or orbmcp add NAME URL",
        )
    server = adhoc.take(args, cwd=ctx.project or Path.cwd())
    if server is not None:
        ctx.use_adhoc(server)


def _crash_log(exc: BaseException) -> Path | None:
    """Write the traceback somewhere private; the user sees one line and this path."""
    from orbmcp.redact import redact

    text = redact("".join(traceback.format_exception(exc)))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    import tempfile

    temp = Path(tempfile.gettempdir())
    for base in (global_dir() / "logs", temp):
        path = base / f"orbmcp-crash-{stamp}-{os.getpid()}.log"
        try:
            # The shared temp directory is used as it is, never made private.
            fs.atomic_write(path, text, private_dir=base != temp, durable=False)
            return path
        except OSError:
            continue
    return None


def report_error(err: OrbError, *, json_output: bool, console: Console | None = None) -> None:
    console = console or local_console()
    if json_output:
        from orbmcp.render.json import error_json_text

        console.write_err(error_json_text(err) + "\n")
        return
    text = f"orbmcp: error: {one_line(err.message)}\n"
    if err.hint:
        text += f"hint: {one_line(err.hint)}\n"
    console.write_err(text)


def shell_context(
    *,
    console: Console,
    sessions: SessionProvider,
    project: Path | None,
    config_file: Path | None,
    json_output: bool,
    no_color: bool,
    no_input: bool = False,
) -> CommandContext:
    """The context of a shell command, one-shot or in the daemon: the person is at ``console``."""
    from orbmcp.commands.pipe_notes import PIPE_NOTE_EVERY_S
    from orbmcp.render import present
    from orbmcp.session.terminal import TerminalUI

    interactive = default_interactive(
        json_output,
        console.env,
        stdin_tty=console.stdin_isatty,
        stderr_tty=console.stderr_isatty,
        no_input=no_input,
    )
    return CommandContext(
        ui=TerminalUI(interactive=interactive, json_output=json_output, console=console),
        sessions=sessions,
        project=project,
        config_file=config_file,
        json=json_output,
        front="cli",
        no_color=no_color,
        present=present,
        read_stdin=console.read_stdin,
        input_limit=environment.max_input_bytes(console.env),
        emit=lambda result: emit_result(result, console, json_output=json_output, no_color=no_color),
        pipe_notes_s=None if console.stderr_isatty or json_output else PIPE_NOTE_EVERY_S,
    )


def emit_result(result: Any, console: Console, *, json_output: bool, no_color: bool) -> None:
    """One of several results of a command (``read --follow``): JSON Lines, or its text."""
    if json_output:
        from orbmcp.render.json import to_json_text

        console.write_out(to_json_text(result, pretty=False) + "\n")
        return
    from orbmcp.render import render_to_terminal

    render_to_terminal(result, json_output=False, no_color=no_color, console=console)


def run_in_shell(
    spec: CommandSpec,
    kwargs: dict[str, Any],
    *,
    project: Path | None,
    config_file: Path | None,
    json_output: bool,
    no_color: bool,
    no_input: bool = False,
    hand_off_at_exit: bool = False,
) -> int:
    """One shell command, one-shot: connect what it needs, print, stop everything it started.

    ``hand_off_at_exit``: the process is the orbmcp program's own, and may leave its servers'
    stop to a detached child (``session.one_shot``)."""
    from orbmcp.render import render_to_terminal
    from orbmcp.session.holder import ONE_SHOT, ONE_SHOT_PROGRAM, Sessions
    from orbmcp.session.one_shot import run_connecting

    console = local_console()
    sessions = Sessions(ONE_SHOT_PROGRAM if hand_off_at_exit else ONE_SHOT)
    ctx = shell_context(
        console=console,
        sessions=sessions,
        project=project,
        config_file=config_file,
        json_output=json_output,
        no_color=no_color,
        no_input=no_input,
    )

    def work() -> int:
        if spec.connects:
            result = run_connecting(call_handler, ctx, spec, ctx, kwargs, offline_first=spec.offline_first)
        else:
            result = _run_sync(spec, ctx, kwargs)
        return render_to_terminal(result, json_output=json_output, no_color=no_color, console=console)

    try:
        return work()
    except BaseException as exc:
        return report_failure(exc, console=console, json_output=json_output)
    finally:
        sessions.launch_detached_stop()


def report_failure(exc: BaseException, *, console: Console, json_output: bool) -> int:
    """The error boundary of the shell front: any failure becomes its message and exit status.

    A bug never shows a traceback: one line names a crash log. ``SystemExit`` passes through.
    """
    if isinstance(exc, OrbError):
        report_error(exc, json_output=json_output, console=console)
        return int(exit_code_for(exc))
    if isinstance(exc, KeyboardInterrupt):
        report_error(Interrupted("interrupted"), json_output=json_output, console=console)
        return int(ExitCode.INTERRUPTED)
    if isinstance(exc, BrokenPipeError) and not console.remote:
        silence_local_stdout()  # `orbmcp tools | head`: the reader left; nothing more to say
        return 0
    if not isinstance(exc, Exception):
        raise exc
    err_line = _internal_error_line(exc)
    if json_output:
        from orbmcp.render.json import internal_error_json_text

        console.write_err(internal_error_json_text(err_line) + "\n")
    else:
        console.write_err(f"orbmcp: internal error: {err_line}\n")
    return int(exit_code_for(exc))


def _internal_error_line(exc: BaseException) -> str:
    from orbmcp.redact import redact

    path = _crash_log(exc)
    where = f" (details: {path})" if path else ""
    return one_line(redact(f"{type(exc).__name__}: {exc}"), max_len=300) + where


def _run_sync(spec: CommandSpec, ctx: CommandContext, kwargs: dict[str, Any]) -> Any:
    handler = handler_of(spec)
    result = handler(ctx, **{k: v for k, v in kwargs.items() if k != "json"})
    if inspect.isawaitable(result):  # a non-connecting handler may still be async
        import anyio

        async def _await() -> Any:
            return await result

        return anyio.run(_await)
    return result
