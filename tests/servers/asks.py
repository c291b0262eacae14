"""SDK ``MCPServer`` that asks its client things: every request kind of the client side of MCP.

    python tests/servers/asks.py [--http PORT] [--modern]

Tools: ``form`` (an elicitation with one field of every kind), ``two_forms`` (two questions in
turn; ``modern_two_forms`` as two input-required rounds), ``odd_form`` (a schema outside the
form subset), ``open_url`` (URL-mode elicitation), ``needs_url`` (-32042 on the first call, the
answer on the retry), ``sample`` (sampling/createMessage), ``roots`` (roots/list), ``log`` (log
messages at several levels), ``level`` (the level the client last set), ``touch`` (a
resources/updated notification). Resources: ``mem://note`` (text, subscribable), ``mem://blob``
(binary), template ``mem://items/{item_id}``. Prompt ``completable(department, role)``; completions
for its ``department`` and the template's ``item_id``. Instructions are set.

Set ``ORB_TEST_MARKER_DIR`` to record what the client sent (``roots-N.json``, ``level``,
``subscribed``, ``roots-changed-N`` for each ``notifications/roots/list_changed``).
"""

from __future__ import annotations

# ruff: noqa: E402 - the coverage tracer stops before the imports below
import sys

# Started by tests/servers/launch.py with -S: site-packages without their .pth start-ups, so the
# coverage tracer never starts here (~0.08 s of CPU per start); started without, it stops. Under the
# suite, sdk_site.start() hands the start to the worker's fork server (tests/servers/forkserver.py).
if sys.flags.no_site and __name__ == "__main__":
    import sdk_site  # type: ignore[import-not-found]

    sdk_site.start()
_coverage = sys.modules.get("coverage") if __name__ == "__main__" else None
if _coverage is not None and (_running := _coverage.Coverage.current()) is not None:
    _running.stop()

import argparse
import json
import os
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError

warnings.simplefilter("ignore")  # the logging and roots APIs warn (deprecated in 2026-07-28)

MARKER_ENV = "ORB_TEST_MARKER_DIR"
INSTRUCTIONS = "Use the form tool to test elicitation.\nNever call touch in production."
DEPARTMENTS = ["Engineering", "Marketing", "Sales", "Support"]
ITEMS = ["alpha", "beta", "gamma"]
BLOB = bytes(range(256)) * 4

FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your name", "minLength": 1},
        "agree": {"type": "boolean", "title": "Agree"},
        "email": {"type": "string", "format": "email", "title": "Email"},
        "homepage": {"type": "string", "format": "uri", "title": "Homepage"},
        "birthday": {"type": "string", "format": "date", "title": "Birthday"},
        "meeting": {"type": "string", "format": "date-time", "title": "Meeting"},
        "count": {"type": "integer", "title": "Count", "minimum": 1, "maximum": 10, "default": 3},
        "ratio": {"type": "number", "title": "Ratio", "minimum": 0, "maximum": 1},
        "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"], "default": "green"},
        "size": {
            "type": "string",
            "title": "Size",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "pet": {
            "type": "string",
            "title": "Pet",
            "enum": ["p1", "p2"],
            "enumNames": ["Cat", "Dog"],
        },
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
        },
        "fish": {
            "type": "array",
            "title": "Fish",
            "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}]},
            "default": ["f1"],
        },
    },
    "required": ["name", "agree"],
}

server = MCPServer("asks", version="1.0", instructions=INSTRUCTIONS, log_level="WARNING")
_state: dict[str, Any] = {"url_required": True, "level": None, "roots_calls": 0}


def _marker(name: str, text: str) -> None:
    directory = os.environ.get(MARKER_ENV)
    if directory:
        Path(directory, name).write_text(text, encoding="utf-8")


@server.tool()
async def form(ctx: Context, message: str = "Tell us about you\x1b[31m (escaped)") -> str:
    """Ask for one field of every kind; return what came back as JSON."""
    result = await ctx.request_context.session.elicit_form(message, FORM_SCHEMA, ctx.request_id)
    return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)


@server.tool(structured_output=False)
async def modern_form(ctx: Context) -> Any:
    """2026-07-28 style (``--modern``): the question comes back as an InputRequiredResult, and the
    client retries with the answer."""
    responses = ctx.input_responses or {}
    answer = responses.get("q")
    if answer is not None:
        return f"{getattr(answer, 'action', '?')} {json.dumps(getattr(answer, 'content', None))}"
    schema: Any = {"type": "object", "properties": {"ok": {"type": "boolean", "title": "OK?"}}}
    question = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message="Modern?", requested_schema=schema)
    )
    return types.InputRequiredResult(input_requests={"q": question})


_YES_NO: Any = {"type": "object", "properties": {"ok": {"type": "boolean", "title": "OK?"}}}


@server.tool()
async def two_forms(ctx: Context) -> str:
    """Two questions, one after the other; both actions."""
    session = ctx.request_context.session
    first = await session.elicit_form("First?", _YES_NO, ctx.request_id)
    second = await session.elicit_form("Second?", _YES_NO, ctx.request_id)
    return f"{first.action} {second.action}"


@server.tool(structured_output=False)
async def modern_two_forms(ctx: Context) -> Any:
    """``--modern``: two rounds of InputRequiredResult, one question each; then "done"."""
    responses = ctx.input_responses or {}
    if "second" in responses:
        return "done"
    key = "second" if "first" in responses else "first"
    question = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=f"Modern {key}?", requested_schema=_YES_NO)
    )
    return types.InputRequiredResult(input_requests={key: question})


@server.tool()
async def odd_form(ctx: Context) -> str:
    """A schema outside the form subset (a nested object)."""
    schema: Any = {"type": "object", "properties": {"addr": {"type": "object", "properties": {}}}}
    result = await ctx.request_context.session.elicit_form("Nested", schema, ctx.request_id)
    return result.action


@server.tool()
async def open_url(ctx: Context, url: str = "https://example.com/connect") -> str:
    """URL-mode elicitation; returns the action."""
    result = await ctx.elicit_url("Connect your account", url, "el-1")
    return result.action


@server.tool()
async def needs_url(url: str = "https://example.com/authorize") -> str:
    """-32042 on the first call (the client must open a URL), the answer after."""
    if _state["url_required"]:
        _state["url_required"] = False
        raise UrlElicitationRequiredError(
            [types.ElicitRequestURLParams(message="Authorize first", url=url, elicitation_id="el-2")]
        )
    return "authorized"


@server.tool()
async def sample(ctx: Context, prompt: str = "hello") -> str:
    """sampling/createMessage; the model's text, or the error."""
    try:
        result = await ctx.request_context.session.create_message(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(text=prompt))],
            max_tokens=50,
            system_prompt="You are a test.",
            model_preferences=types.ModelPreferences(
                hints=[types.ModelHint(name="tiny")], speed_priority=1.0
            ),
        )
    except Exception as exc:
        return f"error: {exc}"
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else str(content)
    return f"{result.model}: {text}"


@server.tool()
async def roots(ctx: Context) -> str:
    """roots/list; the URIs, one per line."""
    result = await ctx.request_context.session.list_roots()
    _state["roots_calls"] += 1
    uris = [str(r.uri) for r in result.roots]
    _marker(f"roots-{_state['roots_calls']}.json", json.dumps(uris))
    return "\n".join(uris)


@server.tool()
async def log(ctx: Context, message: str = "hello") -> str:
    """Log messages at debug, info and warning (one carries a secret and an escape)."""
    session = ctx.request_context.session
    await session.send_log_message(level="debug", data=f"debug {message}", logger="asks")
    await session.send_log_message(level="info", data={"said": message}, logger="asks")
    await session.send_log_message(
        level="warning", data=f"token=sk-live-SECRET42 \x1b[2J{message}", logger=None
    )
    return "logged"


@server.tool()
async def level() -> str:
    """The log level the client last asked for."""
    return str(_state["level"])


@server.tool()
async def touch(ctx: Context, uri: str = "mem://note") -> str:
    """Send notifications/resources/updated for ``uri`` (2025-era subscriptions; 2026-07-28 listen
    streams)."""
    if ctx.protocol_version and ctx.protocol_version >= "2026":
        await ctx.notify_resource_updated(uri)
    else:
        await ctx.request_context.session.send_resource_updated(uri)
    return "touched"


@server.resource("mem://note", mime_type="text/plain")
def note() -> str:
    return "a note"


@server.resource("mem://blob", mime_type="application/octet-stream")
def blob() -> bytes:
    return BLOB


@server.resource("mem://items/{item_id}", mime_type="text/plain")
def item(item_id: str) -> str:
    return f"item {item_id}"


@server.prompt()
def completable(department: str, role: str = "member") -> str:
    """A prompt whose department completes."""
    return f"Welcome to {department} as {role}"


@server.completion()
async def complete(ref: Any, argument: Any, context: Any) -> types.Completion | None:
    pool = DEPARTMENTS if argument.name == "department" else ITEMS if argument.name == "item_id" else []
    return types.Completion(values=[v for v in pool if v.lower().startswith(argument.value.lower())])


async def _set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    _state["level"] = params.level
    _marker("level", str(params.level))
    return types.EmptyResult()


async def _subscribe(ctx: Any, params: Any) -> types.EmptyResult:
    _marker("subscribed", str(params.uri))
    return types.EmptyResult()


async def _roots_changed(ctx: Any, params: Any) -> None:
    _state["roots_changed"] = _state.get("roots_changed", 0) + 1
    _marker(f"roots-changed-{_state['roots_changed']}", "")


low = server._lowlevel_server
low.add_notification_handler("notifications/roots/list_changed", types.NotificationParams, _roots_changed)
low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)
low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, _subscribe)
low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, _subscribe)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--modern", action="store_true", help="also speak 2026-07-28 (server/discover)")
    args = parser.parse_args()
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.modern:
        server.run()
    else:
        anyio.run(serve_legacy_stdio)


async def serve_legacy_stdio() -> None:
    """stdio, 2025-11-25 only, like most servers in the field (server-everything included): the
    SDK server serves both eras on one stream, so ``server/discover`` is refused here, before it
    can decide the era, and the client falls back to ``initialize``."""
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    stdin = anyio.wrap_file(sys.stdin.buffer)
    stdout = anyio.wrap_file(sys.stdout.buffer)
    to_server, server_reads = create_context_streams[SessionMessage | Exception](0)
    server_writes, from_server = create_context_streams[SessionMessage](0)

    async def write(line: str) -> None:
        await stdout.write(line.encode() + b"\n")
        await stdout.flush()

    async def reader() -> None:
        async with to_server:
            async for raw in stdin:
                body = json.loads(raw)
                if isinstance(body, dict) and body.get("method") == "server/discover":
                    error = {"code": types.METHOD_NOT_FOUND, "message": "Method not found"}
                    await write(json.dumps({"jsonrpc": "2.0", "id": body.get("id"), "error": error}))
                    continue
                await to_server.send(
                    SessionMessage(types.jsonrpc_message_adapter.validate_json(raw, by_name=False))
                )

    async def writer() -> None:
        async with from_server:
            async for message in from_server:
                await write(message.message.model_dump_json(by_alias=True, exclude_unset=True))

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        await low.run(server_reads, server_writes, low.create_initialization_options())
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    main()
