"""How an embedded agent's user types an orbmcp command: its slash form.

Errors and hints refer to commands with ``orbmcp.errors.cmd(...)``; the host spells them as the
agent's slash commands (``/mcp:auth github``), never as shell commands the agent cannot run.
Commands that only a person at a terminal may run (``trust``) keep their shell form. The
spelling itself is ``orbmcp.commands.spelling.slash_spelling``, shared with the slash front.
"""

from __future__ import annotations

from orbmcp.commands.spelling import slash_spelling
from orbmcp.errors import OrbError, spell

agent_spelling = slash_spelling


def agent_text(text: str) -> str:
    """``text`` with its command references spelled for the agent."""
    return spell(text, agent_spelling)


def agent_message(err: OrbError) -> str:
    """The error's message, then its hint, spelled for the agent."""
    hint = err.hint_in(agent_spelling)
    return err.message_in(agent_spelling) + (f" (hint: {hint})" if hint else "")
