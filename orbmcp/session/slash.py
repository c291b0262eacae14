"""The slash front: a ``/mcp`` line runs the handler the shell runs, rendered as plain text or JSON.

``dispatch(line, ctx)`` finds the command with the slash grammar of ``commands/complete.py``
(derived from the command table), hands its words to the one parser of every front
(``command_line.parse_command``: Click's, so help, usage errors, defaults and conversions are the
shell's), runs the handler and returns ``(result_model, exit_code)``. Errors are ``OrbError``s:
the caller decides how to show them (``run_slash`` renders them for an agent's UI; ``orbmcp
slash`` exits 2 on a usage error).

Agent hosts keep one persistent ``Sessions`` (session/holder.py) and call ``run_slash`` per line.
No rich: hosts embed this module (a line's parameters are Click's, through Typer).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from orbmcp import environment
from orbmcp.commands.complete import (
    bare_slash_command,
    complete_candidates,
    next_words,
    resolve,
    slash_commands,
    slash_spellings,
    split_slash_head,
)
from orbmcp.commands.completion_words import word_start
from orbmcp.commands.context import CommandContext
from orbmcp.commands.live_query import LiveQuery
from orbmcp.commands.outcome import exit_code_for
from orbmcp.commands.results.base import CommandIndex, Result
from orbmcp.commands.spec import CommandSpec
from orbmcp.commands.usage import SLASH_ROOT, primary_slash
from orbmcp.errors import OrbError, UsageError
from orbmcp.suggest import close_names
from orbmcp.text import one_line

# The rest is imported in the function that needs it: completion (`complete`, every Tab) runs
# through here and must not load the renderers or a handler (tests/commands/test_registries.py).

if TYPE_CHECKING:
    from orbmcp.session.command_line import Invocation

MAX_LISTED = 20


@dataclass(frozen=True)
class SlashReply:
    """What an agent's UI shows for one line: text (plain or JSON), exit status, and the model."""

    text: str
    exit_code: int
    result: Any = None
    error: OrbError | None = None


# -------------------------------------------------------------------------------------- parsing


def _listing(names: Sequence[str]) -> str:
    shown = sorted(names)[:MAX_LISTED]
    more = f" (+{len(names) - MAX_LISTED} more)" if len(names) > MAX_LISTED else ""
    return ", ".join(shown) + more if shown else "none"


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:  # "No closing quotation"
        raise UsageError(f"cannot parse the line: {exc}", hint="close the quote, or escape it") from exc


def parse_slash(line: str, *, servers: Callable[[], Sequence[str]] | None = None) -> Invocation:
    """Parse one slash line. ``servers`` lists configured servers, for ``/mcp <name>``."""
    words = _split(line)
    if not words:
        raise UsageError("empty slash command", hint=f"try {SLASH_ROOT}")
    head = split_slash_head(words[0])
    spellings = slash_spellings()
    if head is None:
        close = close_names(words[0], spellings)
        raise UsageError(
            f"unknown slash command '{words[0]}' (commands: {', '.join(spellings)})",
            hint=f"did you mean '{close[0]}'?" if close else f"every slash command starts with {SLASH_ROOT}",
        )
    verbs = slash_commands()
    seq = [*head, *words[1:]]
    spec, n = resolve(verbs, seq)
    if spec is not None:
        return _invocation(spec, seq[n:], slash=True)
    if seq[:1] in (["help"], ["?"]) and (servers is None or "help" not in servers()):
        bare = bare_slash_command()
        assert bare is not None
        from orbmcp.session.command_line import Invocation

        return Invocation(bare, {}, json="--json" in seq[1:], index=True)
    bare = bare_slash_command()
    following = next_words(verbs, seq) if seq else set()
    if following or head or bare is None:
        _unknown_verb(words, seq, following, verbs)
    assert bare is not None
    if seq and not seq[0].startswith("-"):
        known = list(servers()) if servers is not None else None
        if known is not None and seq[0] not in known:
            commands = sorted({p[0] for p in verbs})
            close = close_names(seq[0], [*commands, *known])
            raise UsageError(
                f"unknown command or server '{seq[0]}' (commands: {_listing(commands)}; "
                f"servers: {_listing(known)})",
                hint=f"did you mean '{close[0]}'?" if close else None,
            )
    return _invocation(bare, seq, slash=True)


def _unknown_verb(
    words: Sequence[str], seq: Sequence[str], following: set[str], verbs: dict[tuple[str, ...], CommandSpec]
) -> None:
    if following:
        said = " ".join(words)
        raise UsageError(f"'{said}' needs a command: {', '.join(sorted(following))}")
    spellings = slash_spellings()
    close = close_names(words[0], spellings) or close_names(seq[0], sorted({p[0] for p in verbs}))
    raise UsageError(
        f"unknown slash command '{words[0]}' (commands: {', '.join(spellings)}, "
        f"{SLASH_ROOT} <server>, {SLASH_ROOT} <command>)",
        hint=f"did you mean '{close[0]}'?" if close else None,
    )


def parse_shell(line: str | Sequence[str], *, front: str = "shell") -> Invocation:
    """Parse a shell-style line (``status``, ``call srv tool k=v``, ``orbmcp tools``) for the REPL."""
    from orbmcp.session.command_line import parse_words

    return parse_words(_split(line) if isinstance(line, str) else list(line), front=front)


def _invocation(spec: CommandSpec, args: Sequence[str], *, slash: bool) -> Invocation:
    from orbmcp.session.command_line import parse_command

    return parse_command(spec, args, front="slash" if slash else "shell")


# ------------------------------------------------------------------------------------- running


def slash_index() -> CommandIndex:
    """``/mcp help``: every slash command, then every command an agent may run after ``/mcp``."""
    seen: set[str] = set()
    entries: list[tuple[str, str]] = []
    for spec in slash_commands().values():
        if spec.name in seen:
            continue
        seen.add(spec.name)
        # Arguments only: each command's options are in its own --help.
        args = [
            (f"<{p.name}>" if p.required else f"[<{p.name}>]") + ("..." if p.multiple else "")
            for p in spec.params
            if p.kind == "argument" and not p.hidden
        ]
        entries.append((" ".join([primary_slash(spec), *args]), spec.summary))
    notes = (
        f"  {SLASH_ROOT} <server>  shows why a server is in its state; COMMAND --help shows one command.",
    )
    return CommandIndex("Commands (in an agent, after /mcp):", tuple(entries), notes)


async def run_invocation(inv: Invocation, ctx: CommandContext) -> tuple[Result | None, int]:
    if inv.index:
        return slash_index(), 0
    if inv.help is not None:
        return inv.help, 0
    from orbmcp.render import exit_code_of
    from orbmcp.session.runner import call_handler

    sub = replace(ctx, front=inv.front, json=ctx.json or inv.json)
    result: Result | None = await call_handler(inv.spec, sub, inv.kwargs)
    if sub._config is not None and sub._config is not ctx._config:
        # Keep what the handler loaded, or changed (an enable/disable), for the next line.
        ctx.set_config(sub._config)
    return result, exit_code_of(result)


async def dispatch(line: str, ctx: CommandContext) -> tuple[Result | None, int]:
    """Run one slash line through the command's handler: ``(result_model, exit_code)``."""
    inv = parse_slash(line, servers=lambda: list(ctx.config().servers))
    return await run_invocation(inv, ctx)


def render(result: Any, *, json_output: bool) -> str:
    """Plain text for an agent's UI (server strings escaped), or compact JSON."""
    if result is None:
        return ""
    if json_output:
        from orbmcp.render import to_json_text

        return to_json_text(result, pretty=False)
    from orbmcp.render.plain import render_plain

    return render_plain(result)


def format_error(err: OrbError, *, json_output: bool, front: str = "slash") -> str:
    """An error as a slash front shows it, its command references spelled for ``front``."""
    from orbmcp.commands.spelling import speller_for

    speller = speller_for(front)
    if json_output:
        from orbmcp.render.json import error_json_text

        return error_json_text(err, speller)

    text = f"error: {one_line(err.message_in(speller))}"
    hint = err.hint_in(speller)
    if hint:
        text += f"\nhint: {one_line(hint)}"
    return text


async def run_slash(line: str, ctx: CommandContext, *, json_output: bool | None = None) -> SlashReply:
    """For agent hosts: one line in, what to show out. Never raises an ``OrbError``."""
    as_json = ctx.json if json_output is None else json_output
    if json_output is None and "--json" in line.split():
        as_json = True  # also for a line that fails to parse
    try:
        inv = parse_slash(line, servers=lambda: list(ctx.config().servers))
        if json_output is None:
            as_json = as_json or inv.json
        result, code = await run_invocation(inv, ctx)
    except OrbError as err:
        front = "host" if ctx.front == "host" else "slash"
        return SlashReply(
            format_error(err, json_output=as_json, front=front), int(exit_code_for(err)), None, err
        )
    return SlashReply(render(result, json_output=as_json), code, result, None)


def complete_fast(args: Sequence[str]) -> int | None:
    """``orbmcp complete LINE [--json]`` without building the Typer app (shells call it per Tab).

    Returns the exit status, or ``None`` when ``args`` are anything else (``--help``, extra
    options): the Typer front handles those. Output is what the Typer front prints.
    """
    rest = list(args)
    as_json = "--json" in rest
    if as_json:
        rest.remove("--json")
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if len(rest) != 1 or rest[0].startswith("-") or "--json" in rest:
        return None
    import sys

    from orbmcp.commands.results.completion import Completions

    wanted: list[LiveQuery] = []

    def record(query: LiveQuery) -> list[str]:
        wanted.append(query)
        return []

    found = complete_candidates(rest[0], project=environment.project_dir(), live=record)
    if wanted:
        return None  # a server must answer: the complete command connects it
    result = Completions(tuple(found), word_start(rest[0]))
    if as_json:
        text = json.dumps(result.to_json(), ensure_ascii=False)
    else:
        text = "\n".join(one_line(c.value) for c in result.items)  # what render/plain prints
    with suppress(BrokenPipeError):
        if text:
            sys.stdout.write(text + "\n")
        sys.stdout.flush()
    return 0
