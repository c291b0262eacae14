"""The shell's UI (prompts on stderr) and its one-shot session: connect, run, stop everything."""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp.errors import Interrupted
from orbmcp.frontends.console import Console, local_console

if TYPE_CHECKING:
    from orbmcp.commands.context import CommandContext
    from orbmcp.core.manager import Manager

PROGRESS_REDRAW_S = 0.05


class TerminalUI:
    """Talks to a person on stderr; stdout stays for results (and JSON). The terminal is this
    process's own, or a daemon client's (``Console``)."""

    def __init__(
        self, *, interactive: bool, json_output: bool = False, console: Console | None = None
    ) -> None:
        self.interactive = interactive
        self.json_output = json_output
        self.console = console or local_console()
        self._progress_shown = False
        self._progress_drawn_at = -math.inf

    def _err(self, text: str) -> None:
        self.console.write_err(text)

    def _readline(self) -> str | None:
        """The person's answer, stripped; None when nobody can answer (stdin closed or at EOF)."""
        line = self.console.readline()
        return None if line is None else line.strip()

    def confirm(self, question: str, *, default: bool = False) -> bool:
        if not self.interactive:
            return False
        suffix = " [Y/n] " if default else " [y/N] "
        self._err(question + suffix)
        answer = self._readline()
        if answer is None:
            return False  # no answer at all is a no, whatever the default
        return default if not answer else answer.lower() in ("y", "yes")

    def choose(self, question: str, options: list[str]) -> str | None:
        if not self.interactive:
            return None
        self._err(question + "\n" + "".join(f"  {i}) {o}\n" for i, o in enumerate(options, 1)) + "> ")
        answer = self._readline() or ""
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1]
        return None

    def notify(self, message: str, *, level: str = "info") -> None:
        from orbmcp.text import one_line

        if self.json_output and level == "info":
            return
        prefix = "" if level == "info" else f"{level}: "
        self._err(f"orbmcp: {prefix}{one_line(message)}\n")

    def show(self, text: str) -> None:
        # Rendered by a plain renderer (every server or file string already escaped): kept as
        # the lines it is, not squeezed onto one line like a notice.
        self._err(text if text.endswith("\n") else text + "\n")

    def open_url(self, url: str) -> bool:
        return self.console.open_url(url)

    def show_url(self, url: str) -> None:
        self._err(f"Open this URL to authorize:\n  {url}\n")

    def prompt_paste(self, message: str) -> str | None:
        # `orbmcp auth NAME --no-browser` reads the pasted redirect URL from a terminal or, for
        # scripted headless setups, from a pipe; a closed or empty stdin means no paste.
        self._err(message + "\n> ")
        return self._readline() or None

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        if not self.console.stderr_isatty:
            return
        # A terminal cannot show more than a few redraws a second anyway; a server sending
        # thousands must not turn stderr into the bottleneck. The last step always shows.
        now = time.monotonic()
        if now - self._progress_drawn_at < PROGRESS_REDRAW_S and not (total and progress >= total):
            return
        self._progress_drawn_at = now
        from orbmcp.text import one_line

        width = 24
        if total and total > 0:
            frac = max(0.0, min(1.0, progress / total))
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            head = f"[{bar}] {frac * 100:5.1f}%"
        else:
            head = f"[{progress:g}]"
        note = f" {one_line(message, max_len=60)}" if message else ""
        self._err(f"\r\x1b[2K{head}{note}")
        self._progress_shown = True

    def end_progress(self) -> None:
        if self._progress_shown:
            self._err("\r\x1b[2K")
            self._progress_shown = False


class OneShotSessions:
    """A Manager that lives for one shell command; closing stops every server it started."""

    persistent = False
    daemon_pid: int | None = None

    def __init__(self) -> None:
        self._manager: Manager | None = None

    async def manager(self, ctx: CommandContext) -> Manager:
        if self._manager is None:
            from orbmcp.core.manager import Manager

            m = Manager(ctx.config(), retries=False, interactive=ctx.ui.interactive, auth_ui=ctx.ui)
            await m.__aenter__()
            self._manager = m
        return self._manager

    async def __aenter__(self) -> OneShotSessions:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        m, self._manager = self._manager, None
        if m is not None:
            # Manager.__aexit__ shields the stopping itself; its task group must be left in the
            # same cancel scope it was entered in, so no extra shield here.
            await m.__aexit__(None, None, None)


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


async def run_with_signals(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """Run a connecting handler; SIGINT/SIGTERM/SIGHUP cancel it and every child is stopped."""
    ctx: CommandContext = next(a for a in args if hasattr(a, "sessions"))
    sessions = ctx.sessions
    received: list[int] = []
    result: Any = None
    error: Exception | None = None
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(*_SIGNALS) as signals:
                async for signum in signals:
                    received.append(signum)
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(watch)
        try:
            result = await fn(*args)
        except Exception as exc:  # raised again below, outside the task group: no ExceptionGroup
            error = exc
        finally:
            if isinstance(sessions, OneShotSessions):
                await sessions.__aexit__(None, None, None)
            if isinstance(ctx.ui, TerminalUI):
                ctx.ui.end_progress()
        tg.cancel_scope.cancel()
    if received:
        raise Interrupted(f"interrupted by {signal.Signals(received[0]).name}; every server was stopped")
    if error is not None:
        raise error
    return result
