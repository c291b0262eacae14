"""SDK low-level stdio server with what the MCP conformance suite's server scenarios call, plus the
requests a gateway must forward (sampling, elicitation, roots) and resource updates on demand.

    python tests/servers/reference.py

It stands behind ``orbmcp serve --http --names raw`` for the suite (``tests/serve/test_conformance``)
and behind the serve tests. Tools: ``test_simple_text``, ``test_image_content``,
``test_audio_content``, ``test_embedded_resource``, ``test_multiple_content_types``,
``test_tool_with_logging``, ``test_tool_with_progress``, ``test_error_handling``,
``test_reconnection``, ``test_sampling``, ``test_elicitation``,
``test_elicitation_sep1034_defaults``, ``test_elicitation_sep1330_enums``,
``json_schema_2020_12_tool``; and ``test_roots`` (the client's roots), ``test_update_resource``
(sends ``notifications/resources/updated`` for a URI), ``test_subscriptions`` (what is subscribed),
``test_elicitation_abandoned`` (asks, then cancels its own request after ``seconds``).
Resources ``test://static-text``, ``test://static-binary``, ``test://watched-resource`` and the
template ``test://template/{id}/data``; prompts ``test_simple_prompt``,
``test_prompt_with_arguments``, ``test_prompt_with_embedded_resource``, ``test_prompt_with_image``;
``logging/setLevel``, ``completion/complete`` and ``resources/(un)subscribe``.
"""

from __future__ import annotations

# ruff: noqa: E402 - the coverage tracer stops before the imports below
import sys

# No orbmcp code runs in this server: the coverage tracer a test run starts in every Python
# subprocess (pyproject: patch = ["subprocess"]) would only slow its SDK import.
# Started by tests/servers/launch.py with -S: site-packages without their .pth start-ups, so the
# coverage tracer never starts here (~0.08 s of CPU per start); started without, it stops. Under the
# suite, sdk_site.start() hands the start to the worker's fork server (tests/servers/forkserver.py).
if sys.flags.no_site and __name__ == "__main__":
    import sdk_site  # type: ignore[import-not-found]

    sdk_site.start()
_coverage = sys.modules.get("coverage") if __name__ == "__main__" else None
if _coverage is not None and (_running := _coverage.Coverage.current()) is not None:
    _running.stop()

import base64
import json
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.message import ServerMessageMetadata

warnings.simplefilter("ignore", MCPDeprecationWarning)  # sampling, roots and logging are 2025-era

# A 1x1 PNG and a 2-sample WAV, the suite's kind of payload.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8cfc0f01f0005050200"
        "5fc8f1d20000000049454e44ae426082"
    )
).decode()
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
WATCHED = "test://watched-resource"
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}
DEFAULTS_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}
ENUMS_FORM = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Pick one",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Pick one (titled)",
            "oneOf": [
                {"const": "value1", "title": "First"},
                {"const": "value2", "title": "Second"},
                {"const": "value3", "title": "Third"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Pick one (legacy titles)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option one", "Option two", "Option three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Pick several",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Pick several (titled)",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First"},
                    {"const": "value2", "title": "Second"},
                    {"const": "value3", "title": "Third"},
                ]
            },
        },
    },
    "required": [],
}

Ctx = ServerRequestContext[Any, Any]
ToolFn = Callable[[Ctx, dict[str, Any]], Awaitable[types.CallToolResult]]


def subscriptions(ctx: Ctx) -> set[str]:
    """The URIs this server's client subscribed to: each served connection has its own."""
    subscribed: set[str] = ctx.lifespan_context["subscriptions"]
    return subscribed


def text(value: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)], is_error=error)


def related(ctx: Ctx) -> ServerMessageMetadata:
    return ServerMessageMetadata(related_request_id=ctx.request_id)


async def simple_text(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return text("This is a simple text response for testing.")


async def image(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.ImageContent(data=PNG, mime_type="image/png")])


async def audio(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.AudioContent(data=WAV, mime_type="audio/wav")])


def _embedded(uri: str, mime: str, body: str) -> types.EmbeddedResource:
    return types.EmbeddedResource(resource=types.TextResourceContents(uri=uri, mime_type=mime, text=body))


async def embedded(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    resource = _embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")
    return types.CallToolResult(content=[resource])


async def mixed(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[
            types.TextContent(text="Multiple content types test:"),
            types.ImageContent(data=PNG, mime_type="image/png"),
            _embedded(
                "test://mixed-content-resource",
                "application/json",
                json.dumps({"test": "data", "value": 123}),
            ),
        ]
    )


async def logging_tool(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.session.send_log_message("info", step, "reference", related_request_id=ctx.request_id)
    return text("Tool with logging executed successfully")


async def progress_tool(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    for value in (0, 50, 100):
        await ctx.session.report_progress(value, 100, f"Completed step {value} of 100")
    return text("progress reported")


async def error_tool(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return text("This tool intentionally returns an error for testing", error=True)


async def reconnection(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return text("Reconnection test completed successfully.")


async def sampling(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    message = types.SamplingMessage(role="user", content=types.TextContent(text=str(args.get("prompt", ""))))
    try:
        result = await ctx.session.create_message(
            [message], max_tokens=100, related_request_id=ctx.request_id
        )
    except MCPError as exc:
        return text(f"Sampling not supported or error: {exc.error.message}", error=True)
    reply = result.content.text if isinstance(result.content, types.TextContent) else str(result.content)
    return text(f"LLM response: {reply} (model {result.model})")


async def _elicit(ctx: Ctx, message: str, schema: dict[str, Any]) -> types.CallToolResult:
    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
    )
    try:
        result = await ctx.session.send_request(request, types.ElicitResult, metadata=related(ctx))
    except MCPError as exc:
        return text(f"Elicitation not supported or error: {exc.error.message}", error=True)
    return text(f"User response: action={result.action}, content={json.dumps(result.content or {})}")


async def elicitation(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    schema = {
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"],
    }
    return await _elicit(ctx, str(args.get("message", "Please respond")), schema)


async def elicitation_abandoned(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    """Ask, then give up after ``seconds``: the server cancels its own request."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    params = types.ElicitRequestFormParams(message="Will you answer in time?", requested_schema=schema)
    try:
        await ctx.session.send_request(
            types.ElicitRequest(params=params),
            types.ElicitResult,
            request_read_timeout_seconds=float(args.get("seconds", 0.5)),
            metadata=related(ctx),
        )
    except MCPError as exc:
        return text(f"gave up: {exc.error.message}")
    return text("answered")


async def elicitation_defaults(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return await _elicit(ctx, "Please review and update the form fields with defaults", DEFAULTS_FORM)


async def elicitation_enums(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return await _elicit(ctx, "Please select options from the enum fields", ENUMS_FORM)


async def json_schema_tool(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return text(f"JSON Schema 2020-12 tool called with: {json.dumps(args)}")


async def roots(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    try:
        result = await ctx.session.send_request(
            types.ListRootsRequest(), types.ListRootsResult, metadata=related(ctx)
        )
    except MCPError as exc:
        return text(f"roots/list failed: {exc.error.message}", error=True)
    return text(json.dumps([str(root.uri) for root in result.roots]))


async def update_resource(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    uri = str(args.get("uri", WATCHED))
    await ctx.session.send_resource_updated(uri)
    return text(f"updated {uri}")


async def list_subscriptions(ctx: Ctx, args: dict[str, Any]) -> types.CallToolResult:
    return text(json.dumps(sorted(subscriptions(ctx))))


def _string_args(*names: str) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": list(names)}


TOOLS: dict[str, tuple[str, dict[str, Any], ToolFn]] = {
    "test_simple_text": ("Tests simple text content response", EMPTY, simple_text),
    "test_image_content": ("Tests image content response", EMPTY, image),
    "test_audio_content": ("Tests audio content response", EMPTY, audio),
    "test_embedded_resource": ("Tests embedded resource content response", EMPTY, embedded),
    "test_multiple_content_types": ("Tests text, image and resource content together", EMPTY, mixed),
    "test_tool_with_logging": ("Tests a tool that logs while it runs", EMPTY, logging_tool),
    "test_tool_with_progress": ("Tests a tool that reports progress", EMPTY, progress_tool),
    "test_error_handling": ("Tests an error result", EMPTY, error_tool),
    "test_reconnection": ("Tests SSE reconnection (answers at once here)", EMPTY, reconnection),
    "test_sampling": ("Tests server-initiated sampling", _string_args("prompt"), sampling),
    "test_elicitation": ("Tests server-initiated elicitation", _string_args("message"), elicitation),
    "test_elicitation_sep1034_defaults": (
        "Tests elicitation defaults (SEP-1034)",
        EMPTY,
        elicitation_defaults,
    ),
    "test_elicitation_sep1330_enums": ("Tests elicitation enums (SEP-1330)", EMPTY, elicitation_enums),
    "json_schema_2020_12_tool": (
        "Tool with JSON Schema 2020-12 features (SEP-1613)",
        JSON_SCHEMA_2020_12,
        json_schema_tool,
    ),
    "test_roots": ("The client's roots, as a JSON list of URIs", EMPTY, roots),
    "test_elicitation_abandoned": ("Ask, then cancel the question", EMPTY, elicitation_abandoned),
    "test_update_resource": ("Announce that a resource changed", _string_args("uri"), update_resource),
    "test_subscriptions": ("The resource URIs subscribed now", EMPTY, list_subscriptions),
}


async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[types.Tool(name=n, description=d, input_schema=s) for n, (d, s, _f) in TOOLS.items()]
    )


async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    entry = TOOLS.get(params.name)
    if entry is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    return await entry[2](ctx, dict(params.arguments or {}))


RESOURCES = [
    types.Resource(
        uri="test://static-text", name="static-text", mime_type="text/plain", description="Static text"
    ),
    types.Resource(
        uri="test://static-binary", name="static-binary", mime_type="image/png", description="A PNG"
    ),
    types.Resource(
        uri=WATCHED, name="watched-resource", mime_type="text/plain", description="Subscribe to it"
    ),
]


async def list_resources(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=RESOURCES)


async def list_templates(
    ctx: Ctx, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(
        uri_template="test://template/{id}/data", name="template", mime_type="application/json"
    )
    return types.ListResourceTemplatesResult(resource_templates=[template])


TEXT_BLOBS = {
    "test://text-blob": ("text/plain; charset=utf-8", b"plain text, sent as a blob\nsecond line\n"),
    "test://json-blob": ("application/json", b'{"a": 1}'),
    "test://latin1-blob": ("text/plain; charset=iso-8859-1", "caf\u00e9".encode("latin-1")),
}


async def read_resource(ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    contents: types.TextResourceContents | types.BlobResourceContents
    if uri == "test://static-text":
        contents = types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="This is the static text resource."
        )
    elif uri in TEXT_BLOBS:  # not listed: text a server sent as a blob, read by its URI
        mime, data = TEXT_BLOBS[uri]
        contents = types.BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode())
    elif uri == "test://static-binary":
        contents = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)
    elif uri == WATCHED:
        contents = types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="Watched resource content"
        )
    elif uri.startswith("test://template/") and uri.endswith("/data"):
        ident = uri[len("test://template/") : -len("/data")]
        body = json.dumps({"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"})
        contents = types.TextResourceContents(uri=uri, mime_type="application/json", text=body)
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {uri}")
    return types.ReadResourceResult(contents=[contents])


async def subscribe(ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
    subscriptions(ctx).add(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    subscriptions(ctx).discard(str(params.uri))
    return types.EmptyResult()


PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A simple prompt without arguments"),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with required arguments",
        arguments=[
            types.PromptArgument(name="arg1", description="First test argument", required=True),
            types.PromptArgument(name="arg2", description="Second test argument", required=True),
        ],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt that includes an embedded resource",
        arguments=[types.PromptArgument(name="resourceUri", description="URI to embed", required=True)],
    ),
    types.Prompt(name="test_prompt_with_image", description="A prompt that includes image content"),
]


async def list_prompts(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


def _user(content: Any) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=content)


async def get_prompt(ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    args = dict(params.arguments or {})
    if params.name == "test_simple_prompt":
        messages = [_user(types.TextContent(text="This is a simple prompt for testing."))]
    elif params.name == "test_prompt_with_arguments":
        body = f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"
        messages = [_user(types.TextContent(text=body))]
    elif params.name == "test_prompt_with_embedded_resource":
        uri = args.get("resourceUri", "test://example-resource")
        messages = [
            _user(_embedded(uri, "text/plain", "Embedded resource content for testing.")),
            _user(types.TextContent(text="Please process the embedded resource above.")),
        ]
    elif params.name == "test_prompt_with_image":
        messages = [
            _user(types.ImageContent(data=PNG, mime_type="image/png")),
            _user(types.TextContent(text="Please analyze the image above.")),
        ]
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    return types.GetPromptResult(messages=messages)


async def set_level(ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def complete(ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
    value = params.argument.value
    values = [v for v in ("testValue1", "testValue2", "other") if v.startswith(value)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


def build_server() -> Server[Any]:
    server: Server[Any] = Server(
        "reference",
        version="1.0.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    server.middleware.append(handshake_only)
    return server


async def handshake_only(ctx: Ctx, call_next: Any) -> Any:
    """Refuse server/discover: the requests this server sends its client exist in the 2025 era only."""
    if ctx.method == "server/discover":
        raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found")
    return await call_next(ctx)


async def serve_streams(read: Any, write: Any) -> None:
    """Serve one client on a pair of SDK message streams (stdio's, or in-memory ones in a test)."""
    server = build_server()
    options = server.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )
    # Handshake-only: a dual-era loop would lock onto 2026-07-28 at the client's probe.
    await serve_loop(server, read, write, lifespan_state={"subscriptions": set()}, init_options=options)


async def main() -> None:
    async with stdio_server() as (read, write):
        await serve_streams(read, write)


if __name__ == "__main__":
    anyio.run(main)
