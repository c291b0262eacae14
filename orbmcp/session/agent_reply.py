"""One slash line's answer for an agent program: the result envelope of the agent protocol.

``{"exit", "text", "json", "error", "content"}``: the exit status (``commands/outcome.py``), the
plain rendering (every server string escaped), the command's JSON, the structured error (from the
``OrbError`` the command raised, never read back from a rendering) and the MCP content blocks of
a tool call, a prompt or a resource read, base64 data included, for an agent that shows images.
``orbmcp slash --json LINE`` prints it; ``orbmcp slash --stdio`` answers each ``run`` with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orbmcp.commands.context import CommandContext
from orbmcp.commands.outcome import exit_code_for
from orbmcp.errors import InternalError, OrbError, ToolError

PROTOCOL_VERSION = 1


def error_body(err: OrbError) -> dict[str, Any]:
    """The protocol's ``error``: what the error tree says, command references spelled for /mcp."""
    from orbmcp.commands.spelling import speller_for
    from orbmcp.text import one_line

    speller = speller_for("slash")
    hint = err.hint_in(speller)
    return {
        "code": err.code,
        "reason": err.reason,
        "message": one_line(err.message_in(speller)),
        "hint": one_line(hint) if hint else None,
        "server": err.server,
    }


def content_blocks(result: object) -> list[Any]:
    """The MCP content a result carries: a call's blocks, a prompt's messages' blocks, or a read's
    contents as embedded resources. Empty for every other result."""
    from orbmcp.commands.results.call import CallOutcome
    from orbmcp.commands.results.tools import PromptMessages, ResourceContents

    if isinstance(result, CallOutcome):
        blocks = result.result.to_json().get("content")
        return list(blocks) if isinstance(blocks, list) else []
    if isinstance(result, PromptMessages):
        messages = result.result.get("messages")
        return [
            m["content"]
            for m in (messages if isinstance(messages, list) else [])
            if isinstance(m, Mapping) and isinstance(m.get("content"), Mapping)
        ]
    if isinstance(result, ResourceContents):
        return [{"type": "resource", "resource": dict(c)} for c in result.contents]
    return []


def error_envelope(err: OrbError) -> dict[str, Any]:
    from orbmcp.session.slash import format_error

    return {
        "exit": int(exit_code_for(err)),
        "text": format_error(err, json_output=False),
        "json": None,
        "error": error_body(err),
        "content": [],
    }


def internal_error(exc: BaseException) -> InternalError:
    """A bug (an exception that is no ``OrbError``) as the error an agent reads; redacted."""
    from orbmcp.redact import redact

    return InternalError(f"internal error ({type(exc).__name__}): {redact(str(exc))[:300]}")


async def run_line(line: str, ctx: CommandContext) -> dict[str, Any]:
    """Run one slash line and answer with the envelope. Never raises an ``OrbError`` (a
    cancellation still propagates: the caller decides what a cancelled run answers)."""
    from orbmcp.session.slash import parse_slash, render, run_invocation

    try:
        inv = parse_slash(line, servers=lambda: list(ctx.config().servers))
        result, code = await run_invocation(inv, ctx)
    except OrbError as err:
        return error_envelope(err)
    except Exception as exc:
        return error_envelope(internal_error(exc))
    text = render(result, json_output=False)
    error = None
    if code != 0:
        # A result that is a failure without an exception (a tool's isError, a failed check):
        # its error is the tool error of the tree, the rendering's first line its message.
        server = getattr(result, "server", None)
        first = text.strip().splitlines()[0] if text.strip() else "the command failed"
        error = error_body(ToolError(first[:300], server=server if isinstance(server, str) else None))
    return {
        "exit": code,
        "text": text,
        "json": result.to_json() if result is not None else None,
        "error": error,
        "content": content_blocks(result),
    }


__all__ = ["PROTOCOL_VERSION", "content_blocks", "error_body", "error_envelope", "internal_error", "run_line"]
