"""SDK low-level stdio server whose ``tools/list`` paginates (``MCPServer`` ignores cursors).

    python tests/servers/paged.py --tools N --page-size K [--repeat-cursor] [--empty-cursor-first]
        [--bad-header-tool]

Tools are ``t0000``.. and calling one returns its name. Cursors are decimal offsets.
``--empty-cursor-first`` makes the first page's cursor ``""`` (a valid cursor that a careless
client mistakes for "no more pages"); ``--repeat-cursor`` returns the same non-empty cursor forever.
``--bad-header-tool`` adds ``bad_header``, whose ``x-mcp-header`` sits on an object property: a
2026-07-28 client must drop that tool (and orbmcp must say so).
"""

from __future__ import annotations

# ruff: noqa: E402 - the coverage tracer stops before the imports below
import sys

# No orbmcp code runs in this server: the coverage tracer a test run starts in every Python
# subprocess (pyproject: patch = ["subprocess"]) would only slow its SDK import (~0.4 s of CPU
# each start). Imported as a module (by the tests), this is a no-op.
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
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

REPEATED_CURSOR = "again"


def build_server(
    count: int,
    page_size: int,
    *,
    repeat_cursor: bool = False,
    empty_first: bool = False,
    bad_header: bool = False,
) -> Server[Any]:
    tools = [
        types.Tool(name=f"t{i:04d}", description=f"synthetic tool {i}", input_schema={"type": "object"})
        for i in range(count)
    ]
    if bad_header:
        schema = {"type": "object", "properties": {"where": {"type": "object", "x-mcp-header": "Region"}}}
        tools.append(types.Tool(name="bad_header", description="invalid x-mcp-header", input_schema=schema))
    size = max(page_size, 1)

    def offset_of(cursor: str | None) -> int:
        if cursor is None:
            return 0
        if cursor == "" and empty_first:
            return size
        if cursor == REPEATED_CURSOR and repeat_cursor:
            return 0
        try:
            return int(cursor)
        except ValueError:
            raise MCPError(-32602, f"Invalid cursor: {cursor!r}") from None

    def cursor_for(start: int, end: int) -> str | None:
        if repeat_cursor:
            return REPEATED_CURSOR
        if end >= len(tools):
            return None
        return "" if start == 0 and empty_first else str(end)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = offset_of(params.cursor if params else None)
        end = start + size
        return types.ListToolsResult(tools=tools[start:end], next_cursor=cursor_for(start, end))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if not any(t.name == params.name for t in tools):
            return types.CallToolResult(
                content=[types.TextContent(text=f"unknown tool {params.name}")], is_error=True
            )
        return types.CallToolResult(content=[types.TextContent(text=params.name)])

    return Server("paged", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def from_argv(argv: list[str]) -> Server[Any]:
    """The server this script's command line describes."""
    p = argparse.ArgumentParser(description="paginating MCP test server (stdio)")
    p.add_argument("--tools", type=int, default=5, metavar="N")
    p.add_argument("--page-size", type=int, default=2, metavar="K")
    p.add_argument("--repeat-cursor", action="store_true")
    p.add_argument("--empty-cursor-first", action="store_true")
    p.add_argument("--bad-header-tool", action="store_true")
    args = p.parse_args(argv)
    return build_server(
        args.tools,
        args.page_size,
        repeat_cursor=args.repeat_cursor,
        empty_first=args.empty_cursor_first,
        bad_header=args.bad_header_tool,
    )


def main(argv: list[str]) -> int:
    anyio.run(serve, from_argv(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
