"""Running a handler from the shell: context, event loop, rendering, and the error boundary."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orbmcp.commands.context import CommandContext, default_interactive
from orbmcp.commands.outcome import ExitCode, exit_code_for
from orbmcp.commands.spec import CommandSpec
from orbmcp.errors import OrbError


def load_handler(spec: CommandSpec) -> Callable[..., Any]:
    module, _, func = spec.handler.partition(":")
    handler: Callable[..., Any] = getattr(importlib.import_module(module), func)
    return handler


async def call_handler(spec: CommandSpec, ctx: CommandContext, kwargs: dict[str, Any]) -> Any:
    handler = load_handler(spec)
    args = {k: v for k, v in kwargs.items() if k != "json"}
    result = handler(ctx, **args)
    if inspect.isawaitable(result):
        result = await result
    return result


def _crash_log(exc: BaseException) -> Path | None:
    """Write the traceback somewhere private; the user sees one line and this path."""
    from orbmcp.config.paths import global_dir
    from orbmcp.redact import redact

    text = redact("".join(traceback.format_exception(exc)))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    import tempfile

    for base in (global_dir() / "logs", Path(tempfile.gettempdir())):
        try:
            base.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = base / f"orbmcp-crash-{stamp}-{os.getpid()}.log"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            return path
        except OSError:
            continue
    return None


def report_error(err: OrbError, *, json_output: bool) -> None:
    from orbmcp.text import one_line

    if json_output:
        from orbmcp.render.json import error_json_text

        sys.stderr.write(error_json_text(err) + "\n")
        return
    msg = one_line(err.message)
    sys.stderr.write(f"orbmcp: error: {msg}\n")
    if err.hint:
        sys.stderr.write(f"hint: {one_line(err.hint)}\n")


def run_in_shell(
    spec: CommandSpec,
    kwargs: dict[str, Any],
    *,
    project: Path | None,
    config_file: Path | None,
    json_output: bool,
    no_color: bool,
) -> int:
    from orbmcp.frontends.terminal import OneShotSessions, TerminalUI
    from orbmcp.render import present, render_to_terminal

    ui = TerminalUI(interactive=default_interactive(json_output), json_output=json_output)
    ctx = CommandContext(
        ui=ui,
        sessions=OneShotSessions(),
        project=project,
        config_file=config_file,
        json=json_output,
        front="cli",
        no_color=no_color,
        present=present,
    )
    try:
        if spec.connects:
            import anyio

            from orbmcp.frontends.terminal import run_with_signals

            result = anyio.run(run_with_signals, call_handler, spec, ctx, kwargs)
        else:
            result = _run_sync(spec, ctx, kwargs)
        return render_to_terminal(result, json_output=json_output, no_color=no_color)
    except OrbError as err:
        report_error(err, json_output=json_output)
        return int(exit_code_for(err))
    except KeyboardInterrupt:
        from orbmcp.errors import Interrupted

        report_error(Interrupted("interrupted"), json_output=json_output)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # `orbmcp tools | head`: the reader left; nothing more to say.
        _silence_stdout()
        return 0
    except Exception as exc:  # the boundary: a bug never shows a traceback
        err_line = _internal_error_line(exc)
        if json_output:
            from orbmcp.render.json import internal_error_json_text

            sys.stderr.write(internal_error_json_text(err_line) + "\n")
        else:
            sys.stderr.write(f"orbmcp: internal error: {err_line}\n")
        return int(exit_code_for(exc))


def _internal_error_line(exc: BaseException) -> str:
    from orbmcp.redact import redact
    from orbmcp.text import one_line

    path = _crash_log(exc)
    where = f" (details: {path})" if path else ""
    return one_line(redact(f"{type(exc).__name__}: {exc}"), max_len=300) + where


def _run_sync(spec: CommandSpec, ctx: CommandContext, kwargs: dict[str, Any]) -> Any:
    handler = load_handler(spec)
    result = handler(ctx, **{k: v for k, v in kwargs.items() if k != "json"})
    if inspect.isawaitable(result):  # a non-connecting handler may still be async
        import anyio

        async def _await() -> Any:
            return await result

        return anyio.run(_await)
    return result


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
