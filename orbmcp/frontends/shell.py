"""``orbmcp shell``: an interactive session where servers stay connected between commands.

Line editing (readline: Tab completion, history) only works in the main thread, so the main
thread reads lines and the connections live in an event loop on a second thread (an anyio
blocking portal) that owns one persistent ``Sessions``. Each line runs as a task there; Ctrl-C
cancels that task only. Ctrl-D, ``/exit`` or SIGTERM/SIGHUP leave the loop, and leaving the portal
stops every server, process trees included.

``run_shell(ctx, lines=[...], write=...)`` runs the same loop on scripted input for tests.
"""

from __future__ import annotations

import contextlib
import os
import readline
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal
from rich.console import Console

from orbmcp import environment, fs
from orbmcp.commands.complete import complete_line, shell_commands, slash_commands
from orbmcp.commands.context import CommandContext
from orbmcp.commands.live_completion import answer
from orbmcp.commands.outcome import exit_code_for
from orbmcp.commands.usage import usage_line
from orbmcp.config.loader import load_config
from orbmcp.core.session.auth_prompt import AuthPrompter
from orbmcp.errors import OrbError, UsageError
from orbmcp.redact import redact
from orbmcp.render.rich_view import render_rich
from orbmcp.session.command_line import Invocation
from orbmcp.session.console import isatty
from orbmcp.session.holder import PERSISTENT, Sessions
from orbmcp.session.slash import format_error, parse_shell, parse_slash, render, run_invocation
from orbmcp.text import one_line

if TYPE_CHECKING:
    from orbmcp.commands.completion_words import Candidate
    from orbmcp.commands.live_query import LiveQuery
    from orbmcp.config.model import ResolvedConfig

PROMPT = "orbmcp> "
EXIT_WORDS = frozenset({"exit", "quit", "/exit", "/quit"})
HELP_WORDS = frozenset({"help", "/help", "?"})
HISTORY_FILE = "shell_history"
HISTORY_LENGTH = 1000
INTERRUPTED = 130
NOT_IN_SHELL = frozenset({("shell",)})

Writer = Callable[[str], None]


class _Terminate(BaseException):
    """SIGTERM/SIGHUP: leave the loop; the portal's exit stops every server."""


@dataclass(frozen=True)
class _Outcome:
    code: int
    result: Any = None
    error: OrbError | None = None
    internal: str | None = None
    interrupted: bool = False
    json: bool = False


USAGE_WIDTH = 40


def help_text() -> str:
    """Every command of both forms, from the command table."""
    lines = ["Slash commands (as in an agent):"]
    for words, spec in sorted(slash_commands().items()):
        if spec.slash and words == spec.path:
            lines.append(f"  {usage_line(spec, slash=True)}")
    lines.append("  /mcp <server>          why a server is in its state")
    lines.append("  /mcp <command> ...     any command below that an agent may run")
    lines.append("")
    lines.append("Shell-style commands:")
    for path, spec in sorted(shell_commands().items()):
        if path in NOT_IN_SHELL:
            continue
        usage = usage_line(spec, program="").strip()
        if len(usage) <= USAGE_WIDTH:
            lines.append(f"  {usage:<{USAGE_WIDTH}} {spec.summary}")
        else:  # a long usage on its own line keeps the summaries in one column
            lines += [f"  {usage}", f"  {'':<{USAGE_WIDTH}} {spec.summary}"]
    lines.append("")
    lines.append(
        "Tab completes; Ctrl-C interrupts the running command; Ctrl-D or /exit leaves "
        "(every server is stopped)."
    )
    return "\n".join(lines)


class Shell:
    """The read-run-print loop; the portal's event loop runs the commands."""

    def __init__(
        self,
        ctx: CommandContext,
        sessions: Sessions,
        portal: BlockingPortal,
        write: Writer,
        *,
        write_err: Writer | None = None,
        console: Any = None,
    ) -> None:
        self.ctx = ctx
        self.sessions = sessions
        self.portal = portal
        self.write = write
        self.write_err = write_err or write
        self.console = console  # a rich Console when output is a colour terminal
        self.status = 0
        self._scope: anyio.CancelScope | None = None
        self._token = 0  # the line running now (loop thread)
        self._cancel_token = 0  # a Ctrl-C that arrived before its line's task started
        self._matches: list[str] = []

    # -- main thread -------------------------------------------------------------------------------

    def run(self, read: Callable[[], str | None]) -> int:
        """Read lines until EOF or an exit word; returns the status of the last command."""
        while True:
            try:
                line = read()
            except KeyboardInterrupt:
                self.write("\n")  # Ctrl-C at the prompt: drop the line, keep the session
                continue
            if line is None:
                return self.status
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line in EXIT_WORDS:
                return self.status
            if line in HELP_WORDS:
                self.write(help_text() + "\n")
                continue
            try:
                self.status = self.execute(line)
            except KeyboardInterrupt:  # between lines of execute(): make sure the task goes too
                with contextlib.suppress(KeyboardInterrupt):
                    self.portal.call(self._interrupt, self._token)
                self.write_err("interrupted\n")
                self.status = INTERRUPTED

    def execute(self, line: str) -> int:
        self._token += 1
        token = self._token
        future = self.portal.start_task_soon(self._run_line, line, token)
        while True:
            try:
                outcome = future.result()
                break
            except KeyboardInterrupt:
                # Cancel this line's task only; wait for it to unwind (its cleanup is shielded).
                self.portal.call(self._interrupt, token)
        self._show(outcome)
        return outcome.code

    def _show(self, o: _Outcome) -> None:
        if o.interrupted:
            self.write_err("interrupted\n")
        elif o.error is not None:
            self.write_err(format_error(o.error, json_output=o.json, front="shell") + "\n")
        elif o.internal is not None:
            self.write_err(f"internal error: {o.internal}\n")
        elif o.result is not None:
            if self.console is not None and not o.json:
                render_rich(o.result, self.console)
            else:
                text = render(o.result, json_output=o.json)
                if text:
                    self.write(text if text.endswith("\n") else text + "\n")

    def complete(self, line: str) -> list[str]:
        """Candidates for the word at the end of ``line``, knowing what this session runs."""
        running, tools = self.portal.call(self.sessions.snapshot)
        return complete_line(
            line,
            config_loader=self._load_config,
            running=running,
            tool_names=tools,
            project=self.ctx.project,
            config_file=self.ctx.config_file,
            live=self._live,
        )

    def _live(self, query: LiveQuery) -> list[Candidate]:
        """What only a server knows (prompt argument values, resource URIs), from this session's
        connection: asked on the session's loop, bounded in time."""

        async def ask() -> list[Candidate]:
            return await answer(await self.sessions.manager(), query)

        return self.portal.call(ask)

    def _load_config(self, *, project: Path | None, config_file: Path | None) -> ResolvedConfig:
        if (project, config_file) == (self.ctx.project, self.ctx.config_file):
            return self.sessions.config

        return load_config(project=project, config_file=config_file)

    def readline_completer(self, text: str, state: int) -> str | None:
        if state == 0:
            try:
                # Python's readline appends nothing after a unique match; the space is ours.
                line = readline.get_line_buffer()[: readline.get_endidx()]
                self._matches = [m + " " for m in self.complete(line)]
            except Exception:
                self._matches = []  # never break the prompt over a completion
        return self._matches[state] if state < len(self._matches) else None

    # -- loop thread -------------------------------------------------------------------------------

    def cancel_running(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    def _interrupt(self, token: int) -> None:
        if token == self._token and self._scope is not None:
            self._scope.cancel()
        else:
            self._cancel_token = token

    async def _run_line(self, line: str, token: int) -> _Outcome:
        as_json = self.ctx.json or "--json" in line.split()
        with anyio.CancelScope() as scope:
            self._scope = scope
            if self._cancel_token == token:
                scope.cancel()
            try:
                inv = self._parse(line)
                as_json = as_json or inv.json
                result, code = await run_invocation(inv, self.ctx)
                await self._follow_config()
                return _Outcome(code, result=result, json=as_json)
            except OrbError as err:
                return _Outcome(int(exit_code_for(err)), error=err, json=as_json)
            except Exception as exc:  # a bug in one command must not end the session
                return _Outcome(70, internal=_describe(exc))
            finally:
                self._scope = None
        return _Outcome(INTERRUPTED, interrupted=True)

    async def _follow_config(self) -> None:
        """A command that changed the configuration (``add``, ``remove``) left the new one in the
        context: the session's servers move to it."""
        config = self.ctx._config
        if config is None or config is self.sessions.config:
            return
        if self.sessions.started:
            manager = await self.sessions.manager()
            await manager.apply_config(config)
        else:
            self.sessions.config = config

    def _parse(self, line: str) -> Invocation:
        if line.startswith("/"):
            inv = parse_slash(line, servers=lambda: list(self.sessions.config.servers))
        else:
            inv = parse_shell(line)
        if inv.spec.path in NOT_IN_SHELL:
            raise UsageError("you are in the shell already")
        return inv


def _describe(exc: BaseException) -> str:
    return one_line(redact(f"{type(exc).__name__}: {exc}"), max_len=300)


# ------------------------------------------------------------------------------------- terminal


def history_path(config: ResolvedConfig) -> Path:
    return config.global_dir / HISTORY_FILE


def _setup_readline(shell: Shell, history: Path) -> Callable[[], None] | None:
    """Tab completion and history; returns the function that saves the history (0600)."""
    try:
        import readline
    except ImportError:  # pragma: no cover - Python built without readline
        return None
    readline.set_completer_delims(" \t\n")
    if "libedit" in (readline.__doc__ or ""):  # pragma: no cover - macOS system Python
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    readline.set_completer(shell.readline_completer)
    readline.set_history_length(HISTORY_LENGTH)
    with contextlib.suppress(OSError):
        readline.read_history_file(history)

    def save() -> None:
        with contextlib.suppress(OSError):
            fs.ensure_private_dir(history.parent)
            os.close(fs.open_private(history, append=True))  # 0600 before readline writes it
            readline.write_history_file(history)

    return save


def _terminal_reader() -> Callable[[], str | None]:
    def read() -> str | None:
        try:
            return input(PROMPT)
        except EOFError:
            sys.stdout.write("\n")
            return None

    return read


def _iter_reader(lines: Iterable[str]) -> Callable[[], str | None]:
    it: Iterator[str] = iter(lines)

    def read() -> str | None:
        return next(it, None)

    return read


def _stdout_writer(stream: Any) -> Writer:
    def write(text: str) -> None:
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):
            pass  # the terminal went away (SIGHUP); keep shutting down cleanly

    return write


@contextlib.contextmanager
def _signals() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt here; SIGTERM/SIGHUP end the session cleanly."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise _Terminate(signum)

    wanted: Mapping[int, Any] = {
        signal.SIGINT: signal.default_int_handler,
        signal.SIGTERM: terminate,
        signal.SIGHUP: terminate,
    }
    previous = {sig: signal.signal(sig, handler) for sig, handler in wanted.items()}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _offer_authorization(portal: BlockingPortal, sessions: Sessions, ctx: CommandContext) -> None:
    """Seed 003's startup prompt for eager OAuth servers, one at a time, asked on this (the
    terminal's) thread; the flow itself runs on the session's event loop."""
    portal.call(sessions.wait_eager)
    manager = portal.call(sessions.manager)
    prompter = AuthPrompter()
    for name in portal.call(_pending, prompter, manager):
        if prompter.ask(name, ctx.ui):
            state = portal.call(prompter.authorize, manager, name, ctx.ui)
            ctx.ui.notify(f"{name}: {state}")


async def _pending(prompter: Any, manager: Any) -> list[str]:
    names: list[str] = prompter.pending(manager)
    return names


def run_shell(
    ctx: CommandContext,
    *,
    lines: Iterable[str] | None = None,
    write: Writer | None = None,
    write_err: Writer | None = None,
    wait_eager: bool = False,
    color: bool | None = None,
) -> int:
    """Run the REPL; ``lines``/``write`` replace the terminal (scripted input, tests).

    Without ``lines``, a terminal on stdin gets a prompt, Tab completion and history; a pipe is
    read line by line without a prompt. Returns 0 for a terminal session, the last command's
    status for scripted input, 130 when SIGTERM/SIGHUP ended the session.
    """
    config = ctx.config()
    interactive_input = lines is None and isatty(sys.stdin)
    out = write or _stdout_writer(sys.stdout)
    err = write_err or (write if write is not None else _stdout_writer(sys.stderr))
    console = None
    use_color = (
        color
        if color is not None
        else (write is None and isatty(sys.stdout) and not ctx.no_color and not environment.no_color())
    )
    if use_color:
        console = Console(highlight=False)
    sessions = Sessions(PERSISTENT, config, ui=ctx.ui)
    shell_ctx = replace(ctx, sessions=sessions, front="shell")
    shell_ctx.set_config(config)
    status = 0
    save_history: Callable[[], None] | None = None
    with _signals(), start_blocking_portal() as portal, portal.wrap_async_context_manager(sessions):
        shell = Shell(shell_ctx, sessions, portal, out, write_err=err, console=console)
        if lines is not None:
            read = _iter_reader(lines)
        elif interactive_input:
            save_history = _setup_readline(shell, history_path(config))
            read = _terminal_reader()
            out(_banner(config) + "\n")
            if any(s.has_oauth and s.eager for s in config.servers.values()):
                _offer_authorization(portal, sessions, ctx)
        else:
            read = _pipe_reader(sys.stdin)
        try:
            if wait_eager:
                portal.call(sessions.wait_eager)
            status = shell.run(read)
            if interactive_input:
                status = 0  # a person left on purpose; errors were shown as they happened
        except (_Terminate, KeyboardInterrupt):  # SIGTERM/SIGHUP, or Ctrl-C while eager servers start
            status = INTERRUPTED
            portal.call(shell.cancel_running)
        finally:
            if save_history is not None:
                save_history()
            # Leaving the with-block stops every server; a second Ctrl-C must not skip that.
            # _signals() puts the previous handlers back afterwards.
            _ignore_signals()
    return status


def _ignore_signals() -> None:
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)


def _pipe_reader(stream: Any) -> Callable[[], str | None]:
    # readline(), not iteration: a generator delegating to sys.stdin would close it when dropped.
    def read() -> str | None:
        if stream is None:  # stdin closed (`orbmcp shell <&-`): Python sets sys.stdin to None
            return None
        line: str = stream.readline()
        return line if line else None

    return read


def _banner(config: ResolvedConfig) -> str:
    n = len(config.servers)
    eager = len(config.eager_servers())
    connecting = f", {eager} eager connecting" if eager else ""
    return (
        f"orbmcp shell: {n} server{'s' if n != 1 else ''} configured{connecting}. "
        "Type help, Tab to complete, Ctrl-D or /exit to leave."
    )
