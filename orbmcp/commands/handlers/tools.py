"""tools, call, resources, read, prompts, prompt.

Everything a user typed is checked before anything is spawned where that is possible (server
names, argument syntax, --timeout, output paths), so a typo costs milliseconds, not a connect.
Errors are OrbErrors: the front end maps them to exit codes (2 usage, 4 connection/protocol,
5 auth, 6 timeout); a tool's own ``isError`` is a result with exit code 1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from orbmcp import environment
from orbmcp.commands.arguments import parse_call_arguments
from orbmcp.commands.bounded_input import read_argument_files
from orbmcp.commands.context import CommandContext
from orbmcp.commands.durations import apply_timeout
from orbmcp.commands.handlers.lock import check_call, tool_diff
from orbmcp.commands.handlers.saved_files import (
    check_output,
    prepare_dir,
    save_media,
    user_path,
)
from orbmcp.commands.handlers.status import checked_log_level
from orbmcp.commands.pipe_notes import noting
from orbmcp.commands.results.call import CallOutcome, transcript_text
from orbmcp.commands.results.lock import ToolDiff
from orbmcp.commands.results.tools import (
    PromptListing,
    PromptMessages,
    ToolDetail,
    ToolEntry,
    ToolListing,
    ToolsToCall,
    prompt_arguments,
)
from orbmcp.commands.signature import parameter_rows, signature
from orbmcp.commands.spelling import spell_for
from orbmcp.core.session.hints import failure_error
from orbmcp.core.session.state import State
from orbmcp.core.tooling.calls import call_tool, get_prompt, list_prompts
from orbmcp.errors import TimeoutFailed, UsageError, cmd
from orbmcp.suggest import unknown
from orbmcp.text import shown_name

if TYPE_CHECKING:
    from orbmcp.core.capabilities import Interaction
    from orbmcp.core.capabilities.server_log import LogMessage
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.supervisor import Supervisor
    from orbmcp.core.tooling.registry import BridgedTool

T = TypeVar("T")


# -- shared helpers ------------------------------------------------------------------------------


async def _read_stdin(ctx: CommandContext) -> str | None:
    """Stdin from the front's terminal (a daemon client's, in the daemon); None when there is none."""
    if ctx.read_stdin is None:
        return None
    return await ctx.read_stdin()


def has_capability(sup: Supervisor, kind: str) -> bool:
    try:
        caps = sup.client.server_capabilities
    except Exception:
        return True  # unknown: let the request itself say what is wrong
    return getattr(caps, kind, None) is not None


async def ready_servers(
    ctx: CommandContext, server: str | None, verb: str
) -> tuple[list[Supervisor], list[str]]:
    """The connected servers a listing covers, plus notices about the ones it leaves out.

    One server: connect it (lazy ones too) or raise why not. Every server: a one-shot command
    connects the eager ones; a persistent session lists what is connected. With several servers a
    failure is a warning, even when it leaves nothing to list (the only eager server broke, the
    rest are lazy): the listing still says what the others are.
    """
    config = ctx.config()
    if server is not None:
        ctx.server(server)
        manager = await ctx.manager()
        return [await manager.ready(server)], []
    enabled = config.enabled_servers()
    if not enabled:
        return [], ["No enabled MCP server is configured (see `orbmcp config show`)."]
    manager = await ctx.manager()
    if not ctx.persistent:
        await manager.start_eager()
    else:
        # A session that just started (a daemon, a REPL) is still on its servers' first attempt:
        # a listing waits for those (each bounded by its timeoutMs), not for later retries.
        first = [manager.get(c.name) for c in enabled]
        async with anyio.create_task_group() as tg:
            for sup in first:
                if sup.state == State.STARTING and sup.snap.retries == 0:
                    tg.start_soon(sup.wait_settled)
    ready: list[Supervisor] = []
    failed: list[Supervisor] = []
    notices: list[str] = []
    for cfg in enabled:
        sup = manager.get(cfg.name)
        if sup.state == State.READY:
            ready.append(sup)
        elif sup.state in (State.FAILED, State.NEEDS_AUTH):
            failed.append(sup)
        elif sup.state == State.STARTING:
            notices.append(f"{cfg.name}: still connecting")
        else:
            connect = spell_for(cmd(verb, cfg.name), ctx.front)
            notices.append(f"{cfg.name}: {cfg.lifecycle}, not connected (`{connect}` connects it)")
    if failed and len(enabled) == 1:
        # The only server there is: its failure is the answer, with its exit status.
        raise failure_error(failed[0])
    for sup in failed:
        error = spell_for(sup.snap.last_error or str(sup.state), ctx.front)
        ctx.ui.notify(f"server '{sup.name}' is {sup.state}: {error}", level="warning")
    return ready, notices


async def each_server(sups: list[Supervisor], fn: Callable[[Supervisor], Awaitable[T]]) -> list[T]:
    """``fn`` on every server concurrently, results in the servers' order."""
    results: dict[int, T] = {}

    async def one(index: int, sup: Supervisor) -> None:
        results[index] = await fn(sup)

    async with anyio.create_task_group() as tg:
        for index, sup in enumerate(sups):
            tg.start_soon(one, index, sup)
    return [results[i] for i in range(len(sups))]


# -- tools ---------------------------------------------------------------------------------------


def _entry(tool: BridgedTool) -> ToolEntry:
    return ToolEntry(
        server=tool.server,
        name=tool.name,
        bridged_name=tool.bridged_name,
        description=tool.description,
        raw_description=tool.raw_description,
        input_schema=tool.input_schema,
        annotations=tool.annotations,
        signature=signature(shown_name(tool.name), tool.input_schema),
    )


async def tools(
    ctx: CommandContext,
    server: str | None = None,
    tool: str | None = None,
    *,
    schema: bool = False,
    timeout: str | None = None,
    diff: bool = False,
) -> ToolListing | ToolDetail | ToolDiff:
    apply_timeout(ctx, timeout)
    if diff:
        if server is None or tool is None:
            raise UsageError("--diff compares two servers: orbmcp tools --diff A B")

        return await tool_diff(ctx, server, tool)
    if server is not None and tool is not None:
        return await _one_tool(ctx, server, tool)
    sups, notices = await ready_servers(ctx, server, "tools")
    entries: list[ToolEntry] = []
    for sup in sups:
        entries += [_entry(t) for t in sup.runtime.tools.for_server(sup.name)]
    return ToolListing(tuple(entries), tuple(s.name for s in sups), schema=schema, notices=tuple(notices))


async def _one_tool(ctx: CommandContext, server: str, name: str) -> ToolDetail:
    ctx.server(server)
    manager = await ctx.manager()
    await manager.ready(server)
    tool = find_tool(manager, server, name)
    return ToolDetail(
        entry=_entry(tool),
        title=tool.title,
        parameters=parameter_rows(tool.input_schema),
        task_support=tool.task_support,
        output_schema=tool.output_schema,
    )


# -- call ----------------------------------------------------------------------------------------


def find_tool(manager: Manager, server: str, name: str) -> BridgedTool:
    """A tool by its server-side name, the name as listings show it (control and invisible
    characters escaped), or its bridged name; 'did you mean' otherwise."""
    registry = manager.tools
    found = registry.get(server, name)
    if found is not None and found.present:
        return found
    offered = registry.for_server(server)
    for tool in offered:
        if name in (tool.bridged_name, shown_name(tool.name)):
            return tool
    err = unknown("tool", name, [shown_name(t.name) for t in offered], server=server)
    raise UsageError(f"unknown tool '{name}' on server '{server}'", server=server, hint=err.hint)


@contextmanager
def naming_the_tool(server: str, what: str) -> Iterator[None]:
    """Arguments checked against a schema: their errors name the tool (or prompt) and its server,
    in the message and in JSON's ``server``, so a script running several calls knows which."""
    try:
        yield
    except UsageError as exc:
        raise UsageError(
            f"{what} on server '{server}': {exc.template}",
            server=server,
            hint=exc.hint_template,
            reason=exc.reason,
        ) from None


def _check_options(timeout: float | None, max_output: int | None) -> None:
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise UsageError(f"--timeout: expected a positive number of seconds, got {timeout}")
    if max_output is not None and max_output < 0:
        raise UsageError(f"--max-output: expected a number of bytes >= 0, got {max_output}")


async def call(
    ctx: CommandContext,
    server: str,
    tool: str | None = None,
    *,
    arguments: list[str] | None = None,
    args: str | None = None,
    timeout: float | None = None,
    save_images: Path | None = None,
    max_output: int | None = None,
    output: Path | None = None,
    no_check: bool = False,
    task: bool = False,
    verbose: bool = False,
    log_level: str | None = None,
) -> CallOutcome | ToolsToCall:
    ctx.server(server)
    _check_options(timeout, max_output)
    if tool is None:
        return await _tools_to_call(ctx, server)
    level = checked_log_level(log_level)
    tokens = list(arguments or [])
    stdin_text = await _read_stdin(ctx) if "-" in tokens else None
    read_file = await read_argument_files(tokens, limit=ctx.input_limit or environment.max_input_bytes())
    # Syntax first (bad JSON, k without =, unreadable @file): no server needed to reject those.
    parse_call_arguments(tokens, None, args_json=args, stdin_text=stdin_text, read_file=read_file)
    media_dir = prepare_dir(user_path("--save-images", save_images)) if save_images is not None else None
    out_path = user_path("--output", output) if output is not None else None
    if out_path is not None:
        check_output(out_path)

    manager = await ctx.manager()
    sup = await manager.ready(server)
    bridged = find_tool(manager, server, tool)

    check_call(ctx, sup, bridged.name)
    with naming_the_tool(server, f"tool '{bridged.name}'"):
        values = parse_call_arguments(
            tokens,
            bridged.input_schema,
            args_json=args,
            stdin_text=stdin_text,
            read_file=read_file,
            strict=not no_check,
        )

    def on_progress(value: float, total: float | None, message: str | None) -> None:
        ctx.ui.progress(server, bridged.name, value, total, message)

    def on_log(message: LogMessage) -> None:
        ctx.ui.server_log(server, message)

    interactions: list[Interaction] = []
    if task and bridged.task_support not in ("optional", "required"):
        raise UsageError(
            f"tool '{bridged.name}' on server '{server}' cannot run as a task",
            server=server,
            hint="call it without --task",
        )
    try:
        call = call_tool(
            sup,
            bridged.name,
            values,
            timeout_s=timeout,
            progress=on_progress,
            asker=ctx.ui,
            record=interactions,
            logs=on_log if verbose else None,
            as_task=task,
            log_level=level,
        )

        # A task's requests are bounded one by one; --timeout bounds the whole task too.
        whole = timeout if task or bridged.task_support == "required" else None
        with anyio.fail_after(whole):
            result = await noting(ctx, f"{server}/{bridged.name}", call)
    except (TimeoutFailed, TimeoutError):
        seconds = timeout if timeout is not None else sup.cfg.request_timeout_ms / 1000
        raise TimeoutFailed(
            f"server '{server}': tool '{bridged.name}' did not answer within {seconds:g} s; "
            "the call was cancelled",
            server=server,
            hint="allow more time with --timeout SECONDS, or requestTimeoutMs in the server's entry",
        ) from None

    saved = save_media(ctx, result, media_dir, bridged.name) if media_dir is not None else {}
    asked = tuple(interactions)
    outcome = CallOutcome(server, bridged.name, result, saved, max_output=max_output, interactions=asked)
    if out_path is not None:
        body = (
            json.dumps(outcome.to_json(), indent=2, ensure_ascii=False) + "\n"
            if ctx.json
            else transcript_text(result, saved)
        )
        data = body.encode("utf-8", "replace")
        try:
            out_path.write_bytes(data)
        except OSError as exc:
            raise UsageError(f"--output {out_path}: cannot write ({exc.strerror or exc})") from None
        outcome = replace(outcome, output_file=str(out_path), output_bytes=len(data))
    if result.is_error and not ctx.json:
        ctx.ui.notify(f"tool '{bridged.name}' on server '{server}' returned an error", level="error")
    return outcome


async def _tools_to_call(ctx: CommandContext, server: str) -> ToolsToCall:
    """``call SERVER``: which tool? Its tools (stdout), how to call one (stderr), exit 2."""
    listing = await tools(ctx, server)
    assert isinstance(listing, ToolListing)
    count = len(listing.tools)
    message = f"name the tool to call: server '{server}' has {count} tool{'' if count == 1 else 's'}"
    hint = "call one: " + spell_for(cmd("call", server, "TOOL", "key=value..."), ctx.front)
    if not ctx.json:
        ctx.ui.notify(f"{message}; {hint}", level="error")
    return ToolsToCall(listing.tools, listing.servers, message=message, hint=hint)


# -- prompts -------------------------------------------------------------------------------------


async def prompts(ctx: CommandContext, server: str | None = None) -> PromptListing:
    sups, notices = await ready_servers(ctx, server, "prompts")
    offering = [s for s in sups if has_capability(s, "prompts")]
    notices += [f"{s.name}: offers no prompts" for s in sups if s not in offering]
    rows: list[dict[str, Any]] = []
    for sup, found in zip(offering, await each_server(offering, list_prompts), strict=True):
        rows += [{"server": sup.name, **item} for item in found]
    return PromptListing(tuple(rows), tuple(s.name for s in offering), tuple(notices))


def prompt_schema(prompt: Mapping[str, Any]) -> dict[str, Any]:
    """Prompt arguments as a JSON schema, so ``k=v`` parsing (and its errors) match ``call``."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for arg in prompt_arguments(prompt):
        name = str(arg["name"])
        props[name] = {"type": "string"}
        if arg.get("required"):
            required.append(name)
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


async def prompt(
    ctx: CommandContext, server: str, name: str, arguments: list[str] | None = None
) -> PromptMessages:
    ctx.server(server)
    tokens = list(arguments or [])
    stdin_text = await _read_stdin(ctx) if "-" in tokens else None
    read_file = await read_argument_files(tokens, limit=ctx.input_limit or environment.max_input_bytes())
    parse_call_arguments(tokens, None, stdin_text=stdin_text, read_file=read_file)
    manager = await ctx.manager()
    sup = await manager.ready(server)
    if not has_capability(sup, "prompts"):
        raise UsageError(f"server '{server}' offers no prompts", server=server)
    offered = await list_prompts(sup)
    found = next((p for p in offered if p.get("name") == name), None)
    if found is None:
        err = unknown("prompt", name, [str(p.get("name")) for p in offered], server=server)
        raise UsageError(f"unknown prompt '{name}' on server '{server}'", server=server, hint=err.hint)
    with naming_the_tool(server, f"prompt '{name}'"):
        values = parse_call_arguments(
            tokens, prompt_schema(found), stdin_text=stdin_text, read_file=read_file
        )
    strings: dict[str, str] = {}
    for key, value in values.items():
        if not isinstance(value, str):
            raise UsageError(f"argument '{key}': prompt arguments are strings, got {json.dumps(value)[:40]}")
        strings[key] = value
    record: list[Interaction] = []
    result = await get_prompt(sup, name, strings, asker=ctx.ui, record=record)
    return PromptMessages(server, name, result, tuple(record))
