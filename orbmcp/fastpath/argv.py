"""A shell command line split into the program's own options and the command's words.

The program's options (``GLOBAL_OPTIONS`` of the command table: ``--project``, ``--config``,
``--no-color``, ``--no-daemon``, ...) may stand anywhere on the line, as people type them; Typer
wants them before the command, so ``hoist_global_options`` moves them there. ``ProgramLine``
gives them by name, for the session daemon's client and the daemon itself. Standard library
only: the daemon's client runs this on every invocation. Nothing after ``--`` is an option.

The client decides here, from the words alone, whether the daemon runs a line
(``forwarded_command``): the command table (``commands/table.py``) imports the config's models and
``dataclasses`` (~15 ms), so the few facts the client needs of it are spelled here: which commands
the daemon runs, a block ``scripts/gen_docs.py`` writes from the table; the program's options,
which ``tests/fastpath/test_routes.py`` checks against ``GLOBAL_OPTIONS``. The ad-hoc options come
from the transports' kinds (``config/transports.py``, standard library only).
"""

from __future__ import annotations

from collections.abc import Sequence

from orbmcp.config.transports import KINDS

HELP_FLAGS = ("--help", "-h")
# The program's options (``GLOBAL_OPTIONS`` in ``commands/params.py``) that take a value, and its
# flags (``--version`` and ``--help`` aside, eager; and ``--json``, also every command's option).
VALUED_OPTIONS = ("--project", "-p", "--config", "-c")
PROGRAM_FLAGS = ("--no-color", "--no-daemon", "--no-input")
# The commands the session daemon runs (each connects, or reads the live session: ``slash``,
# ``complete``); ``daemon ...`` and ``shell`` always run here; ``serve`` has a request of its own.
# BEGIN DAEMON_COMMANDS, written by scripts/gen_docs.py from the table's runs_in_daemon
DAEMON_COMMANDS = frozenset(
    {
        "status",
        "start",
        "stop",
        "reconnect",
        "auth",
        "tools",
        "lock",
        "call",
        "resources",
        "read",
        "prompts",
        "prompt",
        "enable",
        "disable",
        "check",
        "slash",
        "complete",
    }
)
# END DAEMON_COMMANDS
SERVE = ("serve",)
# The options that name an ad-hoc server (``--stdio CMD``, ``--http URL``, ``--sse URL``: one per
# transport, read off the kinds), and those of ``serve`` (``--server-stdio``, ...).
ADHOC_OPTIONS = tuple(f"--{kind.option}" for kind in KINDS.values())
SERVE_ADHOC_OPTIONS = ("--server-stdio", "--server-sse")


def _option_words() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(options that take a value, flags) among the program's own options."""
    return VALUED_OPTIONS, PROGRAM_FLAGS


def hoist_global_options(args: Sequence[str]) -> list[str]:
    """The line with the program's own options first (``orbmcp status --project DIR`` works)."""
    valued, flags = _option_words()
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg in valued and i + 1 < len(args):
            front += [arg, args[i + 1]]
            i += 2
            continue
        if arg in flags or any(arg.startswith(f"{o}=") for o in valued if o.startswith("--")):
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return front + rest


class ProgramLine:
    """A command line's program options by name, and the words of the command itself.

    ``--json`` before the command is the program's; after it, the command's (both mean JSON).
    """

    def __init__(self, argv: Sequence[str]) -> None:
        self.project: str | None = None  # strings: the daemon's client must not import pathlib
        self.config: str | None = None
        self.no_color = False
        self.no_daemon = False
        self.json = False
        self.help = False
        valued, _flags = _option_words()
        hoisted = hoist_global_options(argv)
        i = 0
        while i < len(hoisted):
            word = hoisted[i]
            name, eq, value = word.partition("=")
            if word in valued and i + 1 < len(hoisted):
                self._set(word, hoisted[i + 1])
                i += 2
                continue
            if eq and name in valued:
                self._set(name, value)
            elif word == "--no-color":
                self.no_color = True
            elif word == "--no-daemon":
                self.no_daemon = True
            elif word == "--json":
                self.json = True
            else:
                break
            i += 1
        self.words = hoisted[i:]
        before_dashes = self.words[: self.words.index("--")] if "--" in self.words else self.words
        self.help = any(w in HELP_FLAGS for w in before_dashes)

    def _set(self, flag: str, value: str) -> None:
        if flag in ("--project", "-p"):
            self.project = value
        elif flag in ("--config", "-c"):
            self.config = value

    def command(self) -> tuple[str, ...] | None:
        """The path of the command these words name (the longest match in the table)."""
        from orbmcp.commands.table import COMMANDS

        best: tuple[str, ...] | None = None
        for spec in COMMANDS:
            n = len(spec.path)
            if tuple(self.words[:n]) == spec.path and (best is None or n > len(best)):
                best = spec.path
        return best


def forwarded_command(line: ProgramLine) -> tuple[str, ...] | None:
    """The path of the command when the session daemon runs (or serves) it, else None: a command
    that needs no live session, and any line with a server typed on it (it runs one-shot)."""
    head = tuple(line.words[:1])
    if head == SERVE:
        return None if _names_server(line.words, SERVE_ADHOC_OPTIONS, values=True) else SERVE
    if not runs_in_daemon(head) or _names_server(line.words, ADHOC_OPTIONS):
        return None
    return head


def runs_in_daemon(path: tuple[str, ...]) -> bool:
    """Whether the session daemon runs the command at ``path`` (``DAEMON_COMMANDS``)."""
    return len(path) == 1 and path[0] in DAEMON_COMMANDS


def is_url(word: str) -> bool:
    return word[:8].lower() == "https://" or word[:7].lower() == "http://"


def _names_server(words: Sequence[str], options: tuple[str, ...], *, values: bool = False) -> bool:
    """Whether a line names a server of its own (an ad-hoc target), which the daemon's client
    runs one-shot. Generous on purpose: a false yes only runs the line here, not in the daemon."""
    before = words[: words.index("--")] if "--" in words else words
    for word in before:
        name, _eq, value = word.partition("=")
        if name in options or is_url(word) or (values and is_url(value)):
            return True
    return False


def entry_json_option(args: list[str]) -> list[str]:
    """``add NAME --json '{...}'``: there ``--json`` takes the entry (a README's snippet), spelled
    ``--entry`` in the command table since ``--json`` is also every command's output flag."""
    if "add" not in args:
        return args
    at = args.index("add")
    out = list(args)
    for i in range(at + 1, len(out)):
        word = out[i]
        if word == "--":
            break
        if word == "--json" and i + 1 < len(out) and out[i + 1].lstrip()[:1] in ("{", "[", '"'):
            out[i] = "--entry"
        elif word.startswith("--json="):
            out[i] = "--entry=" + word[len("--json=") :]
    return out
