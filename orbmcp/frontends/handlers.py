"""Handlers of the commands whose work is a front end itself: ``shell`` (the REPL), ``slash``
(one slash line, for agents in any language) and ``complete`` (candidates for a partial line).

They sit in the front layer because they drive other fronts; ``orbmcp/front_handlers.py`` binds
them to their commands by typed lazy references, so loading the table imports none of this.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.base import JsonText, Result, ShellExit
from orbmcp.commands.results.completion import Completions


def shell(ctx: CommandContext) -> ShellExit | None:
    """Run the REPL until Ctrl-D or /exit; every server it started is stopped on the way out.

    Interactive sessions exit 0 (130 when SIGTERM/SIGHUP ended them); a script piped in exits
    with its last command's status, like sh.
    """
    from orbmcp.frontends.shell import run_shell

    status = run_shell(ctx)
    return None if status == 0 else ShellExit(status)


async def slash(
    ctx: CommandContext, line: str | None, stdio: bool = False, list_commands: bool = False
) -> Result | None:
    """Run one slash line with the handler the shell command would run; return its result model.

    ``--json``: the agent protocol's result envelope (``session/agent_reply.py``), exit status
    included. ``--list``: every slash command. ``--stdio``: serve the agent protocol until stdin
    closes (``frontends/agent_protocol.py``)."""
    from orbmcp.errors import UsageError

    if sum((line is not None, stdio, list_commands)) != 1:
        raise UsageError(
            "give one of: a slash LINE, --list or --stdio",
            hint='e.g. orbmcp slash "/mcp" or orbmcp slash --stdio',
        )
    if list_commands:
        from orbmcp.commands.slash_catalog import slash_catalog

        return slash_catalog()
    if stdio:
        from orbmcp.frontends.agent_protocol import serve_agent

        await serve_agent(ctx)
        return None
    assert line is not None
    ctx = replace(ctx, front="slash")  # an agent's line: what it names is spelled /mcp...
    if ctx.json:
        from orbmcp.session.agent_reply import run_line

        envelope = await run_line(line, replace(ctx, json=False))
        return JsonText(envelope, int(envelope["exit"]))
    from orbmcp.commands.spelling import slash_spelling
    from orbmcp.errors import OrbError
    from orbmcp.session.slash import parse_slash, run_invocation

    try:
        inv = parse_slash(line, servers=lambda: list(ctx.config().servers))
        result, code = await run_invocation(inv, ctx)
    except OrbError as err:
        raise err.spelled(slash_spelling) from None  # the shell's error boundary prints it
    if inv.json and not ctx.json and result is not None:
        return JsonText(result.to_json(), code)
    return result


async def complete(ctx: CommandContext, line: str) -> Completions:
    """Candidates for the word being typed at the end of ``line``.

    Only a prompt's or a tool's argument and resource URIs need a server (``completion/complete``,
    the tool's schema): a live session answers them, otherwise that one server is connected for
    the question."""
    from orbmcp.commands.complete import complete_candidates
    from orbmcp.commands.completion_words import word_start
    from orbmcp.commands.live_query import LiveQuery
    from orbmcp.session.persistent import PersistentSessions

    running: set[str] | None = None
    tools: dict[str, list[str]] | None = None
    live_session = isinstance(ctx.sessions, PersistentSessions) and ctx.sessions.started
    if isinstance(ctx.sessions, PersistentSessions) and ctx.sessions.started:
        # A live session (the daemon's) knows what runs and the tools it discovered.
        names, by_server = ctx.sessions.snapshot()
        running, tools = names, {k: list(v) for k, v in by_server.items()}
    wanted: list[LiveQuery] = []

    def record(query: LiveQuery) -> list[str]:
        wanted.append(query)
        return []

    def candidates(live: object) -> Completions:
        found = complete_candidates(
            line,
            project=ctx.project,
            config_file=ctx.config_file,
            running=running,
            tool_names=tools,
            live=live,  # type: ignore[arg-type]
        )
        return Completions(tuple(found), word_start(line))

    first = candidates(record)
    if not wanted:
        return first
    answers = await _live_answers(ctx, wanted, persistent=live_session)
    return candidates(lambda query: answers.get(query, []))


async def _live_answers(ctx: CommandContext, queries: list[Any], *, persistent: bool) -> dict[Any, list[Any]]:
    from orbmcp.commands.live_completion import live_candidates

    if persistent:
        return await live_candidates(await ctx.manager(), queries)
    from orbmcp.core.session.manager import Manager

    try:
        config = ctx.config()
    except Exception:
        return {}
    # Connected for this question only, with nobody to answer a server's questions.
    async with Manager(config, retries=False) as manager:
        return await live_candidates(manager, queries)
