"""How an embedded agent's user types an orbmcp command: its slash form.

Errors and hints refer to commands with ``orbmcp.errors.cmd(...)``; the host spells them as the
agent's slash commands (``/mcp:auth github``), never as shell commands the agent cannot run.
Commands that only a person at a terminal may run (``trust``) keep their shell form. The
spelling itself lives in ``orbmcp.commands.spelling``, shared with the slash front and ``serve``.
"""

from __future__ import annotations

from orbmcp.commands.spelling import agent_message, agent_text, slash_spelling


def agent_spelling(command: str) -> str:
    """How the agent's user types ``command`` (``"auth gh"`` -> ``/mcp:auth gh``); commands with
    no slash form keep their shell form (``orbmcp trust``)."""
    return slash_spelling(command)


__all__ = ["agent_message", "agent_spelling", "agent_text"]
