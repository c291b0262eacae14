"""What a handler gets: options, the config, a way to talk to the user, and the session.

Handlers never print. They ask the ``UI`` (a Protocol each front end implements) when they need
a decision, and they get connections from a ``SessionProvider``: one-shot for the shell, shared and
long-lived for the REPL, the daemon and agent hosts.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from orbmcp import environment
from orbmcp.errors import InternalError
from orbmcp.suggest import unknown_server

if TYPE_CHECKING:
    from orbmcp.commands.results.base import Result
    from orbmcp.config.model import ResolvedConfig, ServerConfig
    from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
    from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
    from orbmcp.core.capabilities.server_log import LogMessage
    from orbmcp.core.session.manager import Manager


class UI(Protocol):
    """How a handler (and a server, through the handler's session) reaches the person.

    The async methods answer a server's questions (``orbmcp.core.capabilities.askers.Asker``):
    plain data in and out, so a front may ask on another process's terminal. A front that cannot
    ask declines (``elicit``) or refuses (``sample``) and says why in the answer's ``reason``.
    """

    interactive: bool

    def confirm(self, question: str, *, default: bool = False) -> bool: ...

    def choose(self, question: str, options: list[str]) -> str | None: ...

    def notify(self, message: str, *, level: str = "info") -> None: ...

    def show(self, text: str) -> None:
        """Show a block of lines a front rendered (safe to print): a review before a question."""
        ...

    def open_url(self, url: str) -> bool: ...

    def show_url(self, url: str) -> None: ...

    def prompt_paste(self, message: str) -> str | None: ...

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None: ...

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer: ...

    async def sample(self, request: SamplingRequest) -> SamplingAnswer: ...

    def server_log(self, server: str, message: LogMessage) -> None: ...


class SessionProvider(Protocol):
    """Gives handlers the Manager that owns the connections of this session."""

    async def manager(self, ctx: CommandContext) -> Manager: ...

    @property
    def persistent(self) -> bool:
        """True when servers stay connected after the command (REPL, daemon, agent host)."""
        ...

    @property
    def daemon_pid(self) -> int | None:
        """The pid of the session daemon whose session this is; None elsewhere."""
        ...


def default_interactive(
    json_output: bool,
    environ: Mapping[str, str] | None = None,
    *,
    stdin_tty: bool | None = None,
    stderr_tty: bool | None = None,
    no_input: bool = False,
) -> bool:
    """Interactive means a person can answer: terminal on both ends, no --json, no --no-input,
    not CI. The terminal is this process's unless the caller says (a daemon client's)."""
    if json_output or no_input or environment.ci(environ):
        return False
    try:
        stdin = sys.stdin.isatty() if stdin_tty is None else stdin_tty
        stderr = sys.stderr.isatty() if stderr_tty is None else stderr_tty
    except (AttributeError, ValueError):
        return False
    return stdin and stderr


def json_presentation(result: Result) -> str:
    """What a front that renders no text shows a person: the result's JSON."""
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False)


def server_entry(config: ResolvedConfig, name: str) -> ServerConfig:
    """A configured server's entry; else why not: the entry that exists but did not load (invalid,
    skipped, untrusted), or a usage error with a close name suggested."""
    cfg = config.servers.get(name)
    if cfg is not None:
        return cfg
    entry = config.unavailable.get(name)
    if entry is not None:
        raise entry.error()

    raise unknown_server(name, [*config.servers, *config.unavailable])


@dataclass
class CommandContext:
    ui: UI
    sessions: SessionProvider | None = None
    project: Path | None = None
    config_file: Path | None = None
    json: bool = False
    front: str = "cli"  # cli | slash | shell | host | daemon
    no_color: bool = False  # --no-color or NO_COLOR: fronts that render later (the REPL) need it
    # A result as text for the person, for a handler that must show something before it asks
    # (trust's review before the approval). Fronts that talk to people pass their plain renderer.
    present: Callable[[Result], str] = field(default=json_presentation, repr=False)
    # Stdin for a command that reads it (``call -``): the front's terminal, or a daemon client's.
    # None: this front has no stdin to give.
    read_stdin: Callable[[], Awaitable[str | None]] | None = field(default=None, repr=False)
    # The most a command reads from one input (stdin, an @file): ORBMCP_MAX_INPUT_MIB of the
    # environment the command line was typed in (a daemon's client's, not the daemon's own).
    # None: this process's environment says.
    input_limit: int | None = None
    # Show a result now, while the command goes on (``read --follow``), in the command's output
    # mode (JSON: one line each). None: this front shows one result per command.
    emit: Callable[[Result], None] | None = field(default=None, repr=False)
    # A server the person named on the command line (commands/adhoc.py): the command's only one.
    adhoc: ServerConfig | None = None
    # A shell front writing to a pipe (a CI log): a long call notes this often that it still
    # waits (commands/pipe_notes.py). None: a terminal's live progress, or an agent's, shows it.
    pipe_notes_s: float | None = None
    _config: ResolvedConfig | None = field(default=None, repr=False)

    def config(self, *, reload: bool = False) -> ResolvedConfig:
        if self._config is None or reload:
            # Budget: --help and completion build a context and never load the config's models.
            from orbmcp.config.loader import load_config

            self._config = load_config(project=self.project, config_file=self.config_file)
            if self.adhoc is not None:
                self._config = self._config.only(self.adhoc)
        return self._config

    def server(self, name: str) -> ServerConfig:
        """A configured server's entry, or a usage error that lists what exists."""
        return server_entry(self.config(), name)

    @property
    def persistent(self) -> bool:
        """Servers stay connected after this command (REPL, agent host), not one-shot."""
        return self.sessions is not None and self.sessions.persistent

    def set_config(self, config: ResolvedConfig) -> None:
        self._config = config

    def use_adhoc(self, server: ServerConfig) -> None:
        """Make ``server`` (named on the command line) this command's one server."""
        self.adhoc = server
        if self._config is not None:
            self._config = self._config.only(server)

    async def manager(self) -> Manager:
        if self.sessions is None:
            raise InternalError("this command needs a session provider")
        return await self.sessions.manager(self)
