"""How an embedded agent's user types an orbmcp command: its slash form.

Errors and hints refer to commands with ``orbmcp.errors.cmd(...)``; the host spells them as the
agent's slash commands (``/mcp:auth github``), never as shell commands the agent cannot run.
"""

from __future__ import annotations

from orbmcp.errors import OrbError, spell


def agent_spelling(words: str) -> str:
    """``"auth github --reset"`` → ``"/mcp:auth github --reset"``: the longest command path in the
    command table takes its slash form; the rest of the words follow it."""
    from orbmcp.commands.complete import primary_slash, shell_commands

    parts = words.split()
    commands = shell_commands()
    for size in range(len(parts), 0, -1):
        spec = commands.get(tuple(parts[:size]))
        if spec is not None:
            return " ".join([primary_slash(spec), *parts[size:]])
    return " ".join(["/mcp", *parts])


def agent_text(text: str) -> str:
    """``text`` with its command references spelled for the agent."""
    return spell(text, agent_spelling)


def agent_message(err: OrbError) -> str:
    """The error's message, then its hint, spelled for the agent."""
    hint = err.hint_in(agent_spelling)
    return err.message_in(agent_spelling) + (f" (hint: {hint})" if hint else "")
