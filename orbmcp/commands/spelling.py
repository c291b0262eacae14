"""How each front spells a command that a message or hint names (``orbmcp.errors.cmd``).

A hint says ``{cmd:auth github --reset}``; a person at a shell reads ``orbmcp auth github --reset``,
an agent's user reads ``/mcp:auth github --reset``, the REPL shows ``auth github --reset``. Commands
that only exist in a terminal (``trust``, ``completion``) keep the shell spelling everywhere.
"""

from __future__ import annotations

from orbmcp.commands.complete import NOT_SLASH, resolve, shell_commands
from orbmcp.commands.usage import primary_slash
from orbmcp.errors import OrbError, Speller, shell_spelling

SLASH_FRONTS = frozenset({"slash", "host", "serve"})


def slash_spelling(words: str) -> str:
    parts = words.split()
    spec, n = resolve(shell_commands(), parts)
    if spec is None or spec.path in NOT_SLASH:
        return shell_spelling(words)
    return " ".join([primary_slash(spec), *parts[n:]])


def agent_text(text: str) -> str:
    """``text`` with its command references spelled for an agent's user (slash commands)."""
    from orbmcp.errors import spell

    return spell(text, slash_spelling)


def agent_message(err: OrbError) -> str:
    """The error's message, then its hint, spelled for an agent's user."""
    hint = err.hint_in(slash_spelling)
    return err.message_in(slash_spelling) + (f" (hint: {hint})" if hint else "")


def repl_spelling(words: str) -> str:
    return words


def speller_for(front: str) -> Speller:
    """The speller of a front: ``cli`` (default), ``shell`` (the REPL), ``slash``/``host``/``serve``."""
    if front in SLASH_FRONTS:
        return slash_spelling
    if front == "shell":
        return repl_spelling
    return shell_spelling


def spell_for(text: str, front: str) -> str:
    from orbmcp.errors import spell

    return spell(text, speller_for(front))


__all__ = ["agent_message", "agent_text", "repl_spelling", "slash_spelling", "spell_for", "speller_for"]
