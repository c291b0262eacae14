"""The shell's UI: prompts, questions and progress on stderr; stdout stays for results.

anyio is imported where a method needs it: building a TerminalUI is on the fast paths (an empty
``status``), which run without an event loop."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from orbmcp.session.console import Console, local_console

if TYPE_CHECKING:
    import anyio

    from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
    from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
    from orbmcp.core.capabilities.server_log import LogMessage

PROGRESS_REDRAW_S = 0.05
NOT_INTERACTIVE = "not interactive (no terminal to ask on, --json, --no-input or CI)"


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
        self._progress_full_drawn = False
        # The latest step, when the redraw limit held it back (formatted only if drawn).
        self._progress_pending: tuple[float, float | None, str | None] | None = None
        self._asking: anyio.Lock | None = None  # one question on the terminal at a time

    def _err(self, text: str) -> None:
        self.console.write_err(text)

    def _readline(self) -> str | None:
        """The person's answer, stripped; None when nobody can answer (stdin closed or at EOF)."""
        line = self.console.readline()
        return None if line is None else line.strip()

    def confirm(self, question: str, *, default: bool = False) -> bool:
        if not self.interactive:
            return False
        from orbmcp.session.asking import yes_no

        suffix = " [Y/n] " if default else " [y/N] "
        # No answer at all (end of input) is a no, whatever the default; only a yes is a yes.
        return yes_no(self._err, self.console.readline, question + suffix, default=default)

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
        # thousands must not turn stderr into the bottleneck. The last step always shows, once:
        # a flood of steps past the total must not redraw each time.
        now = time.monotonic()
        full = bool(total and progress >= total)
        if now - self._progress_drawn_at < PROGRESS_REDRAW_S and not (full and not self._progress_full_drawn):
            self._progress_pending = (progress, total, message)  # drawn before a question, if latest
            return
        self._progress_drawn_at = now
        self._progress_full_drawn = self._progress_full_drawn or full
        self._draw_progress(progress, total, message)

    def _draw_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self._err(f"\r\x1b[2K{_progress_line(progress, total, message)}")
        self._progress_shown = True
        self._progress_pending = None

    def _progress_above_question(self) -> None:
        """Before a question: the latest step stays on screen above it (a task's "input required:
        ..." says why it asks), even when the redraw limit held that step back. Every question
        starts on a new line of its own."""
        if self._progress_pending is not None:
            self._draw_progress(*self._progress_pending)
        self._progress_shown = self._progress_full_drawn = False

    # -- a server's questions (core.capabilities.askers.Asker) ----------------------------------------

    def _threaded(self) -> tuple[Callable[[str], None], Callable[[str], bool]]:
        """``write`` and ``open_url`` for a worker thread: a daemon client's terminal is written on
        the event loop (its frames are queued there); this process's own, directly."""
        if not self.console.remote:
            return self._err, self.console.open_url
        import anyio.from_thread

        def write(text: str) -> None:
            anyio.from_thread.run_sync(self._err, text)

        def open_url(url: str) -> bool:
            return bool(anyio.from_thread.run_sync(self.console.open_url, url))

        return write, open_url

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        import anyio
        import anyio.to_thread

        if self._asking is None:
            self._asking = anyio.Lock()
        async with self._asking:
            self._progress_above_question()
            # Abandoned on cancel: Ctrl-C while a person is typing must not wait for the line.
            return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        from orbmcp.core.capabilities.elicitation import ElicitationAnswer
        from orbmcp.session import asking

        if not self.interactive:
            return ElicitationAnswer("decline", reason=NOT_INTERACTIVE)
        write, open_url = self._threaded()
        if request.mode == "url":
            from orbmcp.auth.urlpolicy import browser_problem

            problem = browser_problem(request.url or "")
            answer: ElicitationAnswer = await self._in_thread(
                asking.ask_url, request, write, self.console.readline, open_url, problem
            )
        else:
            answer = await self._in_thread(asking.ask_form, request, write, self.console.readline)
        return answer

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        from orbmcp.core.capabilities.client_side import default_sampling
        from orbmcp.core.capabilities.sampling import SamplingAnswer
        from orbmcp.session import asking

        write, _open = self._threaded()
        if not self.interactive or not request.command:
            # Shown, then the configured command answers, or orbmcp refuses: nobody is asked.
            self.end_progress()
            asking.show_sampling(request, self._err)
            answer = await default_sampling(request)
            outcome = "answered by the sampling command" if answer.action == "result" else "refused"
            self._err(f"orbmcp: sampling {outcome}{f': {answer.reason}' if answer.reason else ''}\n")
            return answer

        def review() -> bool:
            asking.show_sampling(request, write)
            return asking.approve_sampling(request, write, self.console.readline)

        if not await self._in_thread(review):
            return SamplingAnswer("reject", reason="declined by the person")
        return await default_sampling(request)

    def server_log(self, server: str, message: LogMessage) -> None:
        """A server's log message during ``call --verbose``: one escaped line on stderr."""
        from orbmcp.text import one_line

        self.end_progress()
        who = f" {one_line(message.logger, max_len=100)}:" if message.logger else ""
        self._err(f"[{one_line(server)}] {message.level}:{who} {one_line(message.text)}\n")

    def end_progress(self) -> None:
        self._progress_full_drawn = False
        self._progress_pending = None
        if self._progress_shown:
            self._err("\r\x1b[2K")
            self._progress_shown = False


def _progress_line(progress: float, total: float | None, message: str | None) -> str:
    """One step as a terminal line: a bar when the total is known, else the step count."""
    from orbmcp.text import one_line

    width = 24
    if total and total > 0:
        frac = max(0.0, min(1.0, progress / total))
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        head = f"[{bar}] {frac * 100:5.1f}%"
    else:
        head = f"[{progress:g}]"
    note = f" {one_line(message, max_len=60)}" if message else ""
    return head + note
