"""SDK ``MCPServer`` exposing one tool per feature or fault a client must handle.

    python tests/servers/everything.py [--http PORT | --sse PORT] [--list-changed]

stdio by default. With ``--http``/``--sse`` it binds 127.0.0.1:PORT (0 picks a free port), prints
exactly one line ``LISTENING <port>`` and nothing else on stdout. ``--list-changed`` advertises
``tools.listChanged`` on 2025-era sessions, which ``MCPServer.run()`` never does.

Set ``ORB_TEST_MARKER_DIR`` to let ``sleep`` leave ``sleep-started``/``sleep-cancelled`` files
there, so a test can prove that a cancellation reached the server.
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
import base64
import functools
import io
import os
import socket
import struct
import wave
import zlib
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from pydantic import BaseModel

MARKER_ENV = "ORB_TEST_MARKER_DIR"
CRASH_EXIT_CODE = 3


def tiny_png() -> bytes:
    """A valid 1x1 RGB PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def tiny_wav() -> bytes:
    """8 frames of 16-bit mono silence."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 8)
    return buf.getvalue()


class Weather(BaseModel):
    city: str
    temperature: float
    conditions: list[str]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _marker(name: str) -> None:
    """Written whole, then renamed into place: a test that sees the file can read the pid."""
    directory = os.environ.get(MARKER_ENV)
    if directory:
        partial = Path(directory, f".{name}.{os.getpid()}")
        partial.write_text(str(os.getpid()), encoding="utf-8")
        partial.replace(Path(directory, name))


def register_content_tools(server: MCPServer) -> None:
    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(annotations=types.ToolAnnotations(destructive_hint=True, open_world_hint=False))
    def destructive() -> str:
        """Pretend to delete something."""
        return "destroyed"

    @server.tool()
    async def slow(ctx: Context, steps: int = 3, delay: float = 0.05) -> str:
        """Report progress for each step."""
        for i in range(1, steps + 1):
            await anyio.sleep(delay)
            await ctx.report_progress(i, steps, f"step {i}")
        return f"done {steps} steps"

    @server.tool()
    async def noisy_progress(ctx: Context, count: int = 1000) -> str:
        """Misbehaving progress: a burst of updates, some repeated or going backwards."""
        for i in range(1, count + 1):
            await ctx.report_progress(i, count)
            if i % 10 == 0:
                await ctx.report_progress(i, count, "repeated")
                await ctx.report_progress(i - 5, count, "backwards")
        return f"sent {count}"

    @server.tool(structured_output=False)
    def image() -> Image:
        """A 1x1 PNG."""
        return Image(data=tiny_png(), format="png")

    @server.tool(structured_output=False)
    def audio() -> Audio:
        """A short silent WAV."""
        return Audio(data=tiny_wav(), format="wav")

    @server.tool(structured_output=False)
    def mixed() -> list[types.ContentBlock]:
        """One block of every content kind."""
        return [
            types.TextContent(text="mixed text"),
            types.ImageContent(data=_b64(tiny_png()), mime_type="image/png"),
            types.ResourceLink(uri="mem://hello", name="hello", mime_type="text/plain"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="mem://embedded.txt", text="embedded text", mime_type="text/plain"
                )
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="mem://embedded.bin", blob=_b64(b"\x00\x01\x02"), mime_type="application/octet-stream"
                )
            ),
        ]

    @server.tool()
    def structured() -> Weather:
        """A pydantic result: structuredContent plus its JSON text."""
        return Weather(city="Paris", temperature=21.5, conditions=["sunny", "dry"])

    @server.tool()
    def big(size: int) -> str:
        """A string of exactly `size` bytes."""
        return "x" * size


def register_fault_tools(server: MCPServer) -> None:
    @server.tool()
    def fail(message: str) -> str:
        """Fail with `message` as the isError text (a ToolError keeps the text and skips the traceback)."""
        raise ToolError(message)

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Sleep; with ORB_TEST_MARKER_DIR set, leave marker files on start and on cancellation."""
        _marker("sleep-started")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            _marker("sleep-cancelled")
            raise
        return f"slept {seconds}"

    @server.tool()
    def crash() -> str:
        """Die mid-call without answering."""
        os._exit(CRASH_EXIT_CODE)

    @server.tool()
    def env(name: str) -> str:
        """The value of an environment variable in the server process."""
        return os.environ.get(name, "<unset>")

    @server.tool()
    def cwd() -> str:
        """The server's working directory."""
        return os.getcwd()

    @server.tool()
    def stderr(text: str) -> str:
        """Write text to the server's stderr."""
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
        return "written"


async def _notify_tools_changed(ctx: Context) -> None:
    # Each era listens on a different channel and the other one may refuse: send on both.
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:
        pass
    try:
        await ctx.notify_tools_changed()
    except Exception:
        pass


def register_dynamic_tools(server: MCPServer) -> None:
    def make_dynamic(name: str) -> Any:
        def dynamic() -> str:
            return f"dynamic {name}"

        return dynamic

    @server.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a new tool at runtime and announce it."""
        server.add_tool(make_dynamic(name), name=name, description=f"dynamic tool {name}")
        await _notify_tools_changed(ctx)
        return f"added {name}"

    @server.tool()
    async def remove_tool(name: str, ctx: Context) -> str:
        """Remove a tool at runtime and announce it."""
        server.remove_tool(name)
        await _notify_tools_changed(ctx)
        return f"removed {name}"


def register_resources_and_prompts(server: MCPServer) -> None:
    @server.resource("mem://hello", mime_type="text/plain")
    def hello() -> str:
        return "hello world"

    @server.resource("mem://greeting/{name}", mime_type="text/plain")
    def greeting(name: str) -> str:
        return f"greetings, {name}"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Please greet {name} warmly."


def build_server(*, list_changed: bool = False) -> MCPServer:
    server = MCPServer("everything", version="1.0.0", instructions="orbmcp test server", log_level="WARNING")
    register_content_tools(server)
    register_fault_tools(server)
    register_dynamic_tools(server)
    register_resources_and_prompts(server)
    if list_changed:
        # Every transport builds its options through this method without arguments.
        low = server._lowlevel_server
        options = NotificationOptions(tools_changed=True)
        low.create_initialization_options = functools.partial(  # type: ignore[method-assign]
            low.create_initialization_options, options
        )
    return server


async def run_stdio(server: MCPServer) -> None:
    low = server._lowlevel_server
    async with stdio_server() as (read, write):
        await low.run(read, write, low.create_initialization_options())


async def run_http(server: MCPServer, port: int, *, sse: bool) -> None:
    import uvicorn

    app = server.sse_app() if sse else server.streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # restart on the same port
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    # Early connections wait in the backlog, so announcing before serving is safe.
    print(f"LISTENING {sock.getsockname()[1]}", flush=True)
    # Nothing else may reach stdout: the launcher stops reading it after this line.
    os.dup2(2, 1)
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    await uv.serve(sockets=[sock])


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description="MCP test server with every feature")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--http", type=int, metavar="PORT", help="Streamable HTTP at /mcp")
    where.add_argument("--sse", type=int, metavar="PORT", help="legacy SSE at /sse")
    p.add_argument("--list-changed", action="store_true")
    args = p.parse_args(argv)
    server = build_server(list_changed=args.list_changed)
    if args.http is not None:
        anyio.run(functools.partial(run_http, server, args.http, sse=False))
    elif args.sse is not None:
        anyio.run(functools.partial(run_http, server, args.sse, sse=True))
    else:
        anyio.run(run_stdio, server)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
