"""A shell command line split into the program's own options and the command's words.

The program's options (``GLOBAL_OPTIONS`` of the command table: ``--project``, ``--config``,
``--no-color``, ``--no-daemon``, ...) may stand anywhere on the line, as people type them; Typer
wants them before the command, so ``hoist_global_options`` moves them there. ``ProgramLine``
gives them by name, for the session daemon's client and the daemon itself. Standard library
only: the daemon's client runs this on every invocation. Nothing after ``--`` is an option.
"""

from __future__ import annotations

from collections.abc import Sequence

from orbmcp.commands.params import GLOBAL_OPTIONS

HELP_FLAGS = ("--help", "-h")


def _option_words() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(options that take a value, flags) among the program's own options."""
    valued = tuple(f for p in GLOBAL_OPTIONS if p.kind == "option" for f in p.option_names)
    skip = ("version", "help", "json")  # eager, or also a per-command option
    flags = tuple(
        f for p in GLOBAL_OPTIONS if p.kind == "flag" and p.name not in skip for f in p.option_names
    )
    return valued, flags


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
