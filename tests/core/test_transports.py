"""The SDK-facing transport layer against real servers: stdio pipes, loopback HTTP and SSE."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types
import pytest
import uvicorn
from mcp import Client, MCPError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from orbmcp.config.model import ServerConfig
from orbmcp.core.session.classify import classify_error
from orbmcp.core.wire import era
from orbmcp.core.wire.era import EraCache, client_mode_for, discover_timeout_for, unwrap_exception
from orbmcp.core.wire.transports.sse import EndpointOriginMismatch, sse_transport
from orbmcp.core.wire.transports.stdio import LineTooLong, stdio_pipe_transport
from orbmcp.core.wire.transports.streamable_http import http_transport
from orbmcp.errors import AuthError, ConnectionFailed, InternalError, ProtocolError, TimeoutFailed
from orbmcp.net.http import USER_AGENT, make_http_client
from tests.core.live import wait_until
from tests.timeouts import HANG_GUARD_S

SDK_SERVER = """
from mcp.server.mcpserver import MCPServer
mcp = MCPServer("sdk", log_level="WARNING")

@mcp.tool()
def echo(text: str) -> str:
    return text

mcp.run()
"""

# Stdlib only (starts in ~30 ms): a 2025-era server that can misbehave on request.
RAW_SERVER = r"""
import json, os, sys, time
args = sys.argv[1:]
def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default
log_path, version, huge = opt("--log"), opt("--version"), int(opt("--huge", "0"))
out = sys.stdout.buffer
def log(text):
    if log_path:
        with open(log_path, "a") as f:
            f.write(text + "\n")
def write(raw):
    if "--split" in args:  # dribble bytes so that messages straddle reads
        for i in range(0, len(raw), 7):
            out.write(raw[i:i + 7]); out.flush(); time.sleep(0.0005)
    else:
        out.write(raw); out.flush()
def send(*msgs):
    write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
for raw in sys.stdin.buffer:
    log(raw.decode().rstrip("\n"))
    msg = json.loads(raw)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        if "--garbage" in args:
            write(b"hello from a banner\n\xff\xfe not utf-8\n{\"not\": \"json-rpc\"}\n\n")
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": version or msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "1"}}})
    elif method == "tools/list":
        if huge:
            write(b"x" * huge + (b"\n" if "--huge-newline" in args else b""))
            continue
        tool = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
        # Two messages in one write: a notification packed with the response.
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
             {"jsonrpc": "2.0", "id": mid, "result": {"tools": [tool]}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "die":
            os._exit(1)
        if name == "malformed":
            send({"jsonrpc": "2.0", "id": mid, "result": 5})
            continue
        text = msg["params"]["arguments"]["text"]
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
    elif mid is not None and "--ignore-unknown" not in args:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
log("EOF")
if "--linger" in args:
    time.sleep(60)
"""


@pytest.fixture
def scripts(tmp_path: Path) -> dict[str, Path]:
    paths = {"sdk": tmp_path / "sdk_server.py", "raw": tmp_path / "raw_server.py"}
    paths["sdk"].write_text(SDK_SERVER)
    paths["raw"].write_text(RAW_SERVER)
    return paths


@asynccontextmanager
async def spawned(*argv: str | Path) -> AsyncIterator[Any]:
    proc = await anyio.open_process(
        [sys.executable, *map(str, argv)], stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        yield proc
    finally:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with anyio.fail_after(HANG_GUARD_S), anyio.CancelScope(shield=True):
            await proc.aclose()


def received(log: Path) -> list[str]:
    """Every line the raw server read from stdin; each must be one whole JSON message."""
    lines = log.read_text().splitlines() if log.exists() else []
    return [line if line == "EOF" else json.loads(line).get("method", "<response>") for line in lines]


# --- stdio ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "expected"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_sdk_server_over_pipes(scripts: dict[str, Path], mode: str, expected: str) -> None:
    async with spawned(scripts["sdk"]) as proc:
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(stdio_pipe_transport(proc.stdin, proc.stdout, server="t"), mode=mode) as client:
                assert client.protocol_version == expected
                tools = await client.list_tools()
                assert [t.name for t in tools.tools] == ["echo"]
                result = await client.call_tool("echo", {"text": "two\nlines ✓"})
            assert result.content[0].text == "two\nlines ✓"  # type: ignore[union-attr]
            # Leaving the transport closed stdin, and this server exits on EOF.
            await proc.wait()
    assert proc.returncode == 0


async def test_reframes_split_and_packed_messages_and_writes_one_line_each(
    scripts: dict[str, Path], tmp_path: Path
) -> None:
    log = tmp_path / "received.log"
    notes: list[Any] = []

    async def on_message(message: Any) -> None:
        notes.append(message)

    async with spawned(scripts["raw"], "--split", "--log", log) as proc:
        transport = stdio_pipe_transport(proc.stdin, proc.stdout, server="t")
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(transport, mode="legacy", message_handler=on_message) as client:
                tools = await client.list_tools()
                result = await client.call_tool("echo", {"text": 'a\nb "quoted" \\ é'})
                await wait_until(lambda: notes)
    assert [t.name for t in tools.tools] == ["echo"]
    assert result.content[0].text == 'a\nb "quoted" \\ é'  # type: ignore[union-attr]
    assert isinstance(notes[0], mcp_types.ToolListChangedNotification)
    # received() parses every line the server read: a message split over two lines would fail here.
    assert received(log)[:4] == ["initialize", "notifications/initialized", "tools/list", "tools/call"]


async def test_garbage_lines_are_skipped_and_reported(scripts: dict[str, Path]) -> None:
    garbage: list[str] = []
    async with spawned(scripts["raw"], "--garbage") as proc:
        transport = stdio_pipe_transport(proc.stdin, proc.stdout, server="t", on_garbage=garbage.append)
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(transport, mode="legacy", read_timeout_seconds=3600) as client:
                assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
                # A malformed answer fails its own request at once (inside the bound above), not
                # after the hour-long read timeout...
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("malformed", {})
                assert "malformed" in caught.value.message
                # ...and the session goes on.
                result = await client.call_tool("echo", {"text": "still here"})
    assert result.content[0].text == "still here"  # type: ignore[union-attr]
    assert garbage[:3] == ["hello from a banner", "\ufffd\ufffd not utf-8", '{"not": "json-rpc"}']
    assert '"result": 5' in garbage[3]


@pytest.mark.parametrize("newline", [False, True], ids=["unterminated", "terminated"])
async def test_line_over_the_cap_kills_the_connection_cleanly(
    scripts: dict[str, Path], newline: bool
) -> None:
    cap = 256 * 1024
    argv = ["--huge", str(3 * cap)] + (["--huge-newline"] if newline else [])
    async with spawned(scripts["raw"], *argv) as proc:
        transport = stdio_pipe_transport(proc.stdin, proc.stdout, server="t", max_line_bytes=cap)
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(BaseException) as caught:
            async with Client(transport, mode="legacy") as client:
                await client.list_tools()
    leaf = unwrap_exception(caught.value)
    assert isinstance(leaf, LineTooLong), repr(caught.value)
    assert leaf.message == f"server 't' sent a line longer than {cap} bytes"
    mapped = classify_error(caught.value, server="t")
    assert isinstance(mapped, ConnectionFailed) and mapped.server == "t"


async def test_stdout_eof_fails_the_pending_call(scripts: dict[str, Path]) -> None:
    async with spawned(scripts["raw"]) as proc:
        transport = stdio_pipe_transport(proc.stdin, proc.stdout, server="t")
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(transport, mode="legacy", read_timeout_seconds=30) as client:
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("die", {})
    error = classify_error(caught.value, server="t")
    assert isinstance(error, ConnectionFailed)
    assert error.message == "server 't' closed the connection"


async def test_closing_the_transport_closes_stdin_only(scripts: dict[str, Path], tmp_path: Path) -> None:
    log = tmp_path / "received.log"
    async with spawned(scripts["raw"], "--linger", "--log", log) as proc:
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(stdio_pipe_transport(proc.stdin, proc.stdout, server="t"), mode="legacy"):
                pass
            await wait_until(lambda: received(log)[-1:] == ["EOF"])
        assert proc.returncode is None  # stopping the process is the caller's job


async def test_silent_server_first_contact_is_bounded_then_cached(
    scripts: dict[str, Path], tmp_path: Path
) -> None:
    cache = EraCache(tmp_path / "state" / "era.json")
    cfg = ServerConfig(name="quiet", transport="stdio", command=sys.executable, args=(str(scripts["raw"]),))
    key = cfg.definition_hash()
    for attempt in range(2):
        log = tmp_path / f"received-{attempt}.log"
        cached = cache.get(key)
        async with spawned(scripts["raw"], "--ignore-unknown", "--log", log) as proc:
            transport = stdio_pipe_transport(
                proc.stdin, proc.stdout, server="quiet", discover_timeout_s=discover_timeout_for(cached)
            )
            # Bounded: the silent server costs the short probe, not the connect timeout.
            with anyio.fail_after(HANG_GUARD_S):
                async with Client(transport, mode=client_mode_for(cached)) as client:
                    cache.record(key, client.protocol_version)
                    await client.list_tools()
        methods = received(log)
        if attempt == 0:
            assert cached is None
            assert methods[:2] == ["server/discover", "initialize"]  # the probe gave up, then fell back
        else:
            assert cached == "legacy"
            # Cached: no probe at all, so no probe wait.
            assert "server/discover" not in methods and methods[0] == "initialize"
    assert stat.S_IMODE(cache.path.stat().st_mode) == 0o600


async def test_unsupported_protocol_version_is_refused(scripts: dict[str, Path], tmp_path: Path) -> None:
    log = tmp_path / "received.log"
    async with spawned(scripts["raw"], "--version", "1999-01-01", "--log", log) as proc:
        transport = stdio_pipe_transport(proc.stdin, proc.stdout, server="old")
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(BaseException) as caught:
            async with Client(transport, mode="legacy"):
                pass
        await wait_until(lambda: received(log)[-1:] == ["EOF"])  # the connection was closed
    error = classify_error(caught.value, server="old")
    assert isinstance(error, ProtocolError)
    assert "'1999-01-01'" in error.message and "2025-11-25" in error.message
    assert received(log) == ["initialize", "EOF"]  # no notifications/initialized, nothing after
    assert not era.should_retry_with_auto(caught.value)


# --- HTTP ----------------------------------------------------------------------------------------


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[int]:
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        await wait_until(lambda: server.started)
        try:
            yield server.servers[0].sockets[0].getsockname()[1]
        finally:
            server.should_exit = True


def recording(app: Any, seen: list[tuple[str, dict[str, str]]]) -> Any:
    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append((scope["method"], {k.decode().lower(): v.decode() for k, v in scope["headers"]}))
        await app(scope, receive, send)

    return wrapped


def sdk_http_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("h", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


class TimeoutRecorder(httpx2.Auth):
    """A real Auth hook: it sees each request as the transport's client built it."""

    def __init__(self) -> None:
        self.timeouts: list[dict[str, float | None]] = []

    def auth_flow(self, request: httpx2.Request) -> Any:
        self.timeouts.append(request.extensions["timeout"])
        yield request


@pytest.mark.parametrize(("mode", "expected"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_streamable_http_headers_timeouts_and_session_end(mode: str, expected: str) -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    statuses: list[int] = []
    auth = TimeoutRecorder()
    async with serving(recording(sdk_http_server().streamable_http_app(), seen)) as port:
        transport = http_transport(
            f"http://127.0.0.1:{port}/mcp",
            headers={"X-Team": "cli"},
            auth=auth,
            timeout_s=3.0,
            request_timeout_s=45.0,
            on_response=lambda status, headers: statuses.append(status),
        )
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(transport, mode=mode) as client:
                assert client.protocol_version == expected
                result = await client.call_tool("echo", {"text": "hi"})
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    assert seen and all(h.get("x-team") == "cli" and h.get("user-agent") == USER_AGENT for _, h in seen)
    assert statuses and all(s < 300 for s in statuses)
    # Not httpx2's 5 s default: a long tool call must outlive the socket read timeout.
    assert auth.timeouts and all(t["connect"] == 3.0 and (t["read"] or 0) >= 45.0 for t in auth.timeouts)
    if mode == "legacy":
        assert seen[-1][0] == "DELETE"  # terminate_on_close ends the 2025-era session


def test_http_client_timeouts_are_real() -> None:
    client = make_http_client(timeout_s=2.0, request_timeout_s=600.0, headers={"User-Agent": "custom"})
    assert client.timeout.connect == 2.0 and client.timeout.pool == 2.0
    assert client.timeout.read == 600.0 and client.timeout.write == 600.0
    assert client.headers["user-agent"] == "custom"  # configured headers win
    short = make_http_client(timeout_s=2.0, request_timeout_s=1.0)
    assert short.timeout.read is not None and short.timeout.read > 5.0


def deny_app(status: int, challenge: str) -> Any:
    async def deny(request: Request) -> Response:
        return Response("no", status_code=status, headers={"WWW-Authenticate": challenge})

    return Starlette(routes=[Route("/mcp", deny, methods=["GET", "POST", "DELETE"])])


@pytest.mark.parametrize(
    ("status", "challenge", "needle"),
    [
        (401, 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"', "HTTP 401"),
        (403, 'Bearer error="insufficient_scope", scope="files:write"', "files:write"),
    ],
)
async def test_http_auth_failures_become_auth_errors(status: int, challenge: str, needle: str) -> None:
    last: dict[str, Any] = {}

    def hook(code: int, headers: Any) -> None:
        last.update(status=code, www=headers.get("www-authenticate"))

    async with serving(deny_app(status, challenge)) as port:
        transport = http_transport(
            f"http://127.0.0.1:{port}/mcp", timeout_s=3.0, request_timeout_s=10.0, on_response=hook
        )
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(BaseException) as caught:
            async with Client(transport):
                pass
    leaf = unwrap_exception(caught.value)
    assert isinstance(leaf, MCPError) and leaf.code == mcp_types.INTERNAL_ERROR  # the SDK hides the status
    error = classify_error(
        caught.value, server="api", http_status=last["status"], www_authenticate=last["www"]
    )
    assert isinstance(error, AuthError)
    assert needle in error.message and error.hint is not None and "orbmcp auth api" in error.hint


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("factory", [http_transport, sse_transport])
async def test_connection_refused(factory: Any) -> None:
    transport = factory(f"http://127.0.0.1:{free_port()}/mcp", timeout_s=2.0, request_timeout_s=5.0)
    with anyio.fail_after(HANG_GUARD_S), pytest.raises(BaseException) as caught:
        async with Client(transport):
            pass
    error = classify_error(caught.value, server="down")
    assert isinstance(error, ConnectionFailed)
    assert error.message.startswith("cannot connect to server 'down'")


async def test_legacy_sse_server() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    async with serving(recording(sdk_http_server().sse_app(), seen)) as port:
        transport = sse_transport(
            f"http://127.0.0.1:{port}/sse", headers={"X-Team": "cli"}, timeout_s=3.0, request_timeout_s=10.0
        )
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(transport, mode="legacy") as client:
                assert client.protocol_version == "2025-11-25"
                result = await client.call_tool("echo", {"text": "over sse"})
    assert result.content[0].text == "over sse"  # type: ignore[union-attr]
    assert {m for m, _ in seen} == {"GET", "POST"}
    assert all(h.get("x-team") == "cli" for _, h in seen)


async def test_sse_endpoint_on_another_origin_is_refused() -> None:
    posts: list[str] = []

    async def record_post(request: Request) -> Response:
        posts.append(request.headers.get("x-secret", ""))
        return Response(status_code=202)

    evil = Starlette(routes=[Route("/messages/", record_post, methods=["POST"])])
    async with serving(evil) as evil_port:

        async def events(request: Request) -> StreamingResponse:
            async def stream() -> AsyncIterator[bytes]:
                yield f"event: endpoint\ndata: http://127.0.0.1:{evil_port}/messages/?session_id=s\n\n".encode()
                await anyio.sleep_forever()

            return StreamingResponse(stream(), media_type="text/event-stream")

        async with serving(Starlette(routes=[Route("/sse", events)])) as port:
            transport = sse_transport(
                f"http://127.0.0.1:{port}/sse",
                headers={"X-Secret": "s3cret"},
                timeout_s=3.0,
                request_timeout_s=10.0,
            )
            with anyio.fail_after(HANG_GUARD_S), pytest.raises(BaseException) as caught:
                async with Client(transport, mode="legacy"):
                    pass
    assert isinstance(unwrap_exception(caught.value), EndpointOriginMismatch)
    assert posts == []  # nothing, and no credential, went to the other origin
    error = classify_error(caught.value, server="s")
    assert isinstance(error, ProtocolError)
    assert f"127.0.0.1:{evil_port}" in error.message and "session_id" not in error.message


def raw_sse_app(outbox: Any, inbox: Any) -> Starlette:
    """A hand-written 2024-11-05 server: answers over the event stream, fails tools/call with 500."""

    async def events(request: Request) -> StreamingResponse:
        async def stream() -> AsyncIterator[bytes]:
            yield b"event: endpoint\ndata: /messages/?session_id=1\n\n"
            async for data in inbox:
                yield f"event: message\ndata: {data}\n\n".encode()

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def messages(request: Request) -> Response:
        msg = await request.json()
        method, mid = msg.get("method"), msg.get("id")
        if method == "tools/call":
            return Response("boom", status_code=500)
        if method == "initialize":
            result = {
                "protocolVersion": "2024-11-05",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "r", "version": "1"},
            }
            await outbox.send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}))
        elif method == "tools/list":
            await outbox.send("this is not json")  # skipped, the stream goes on
            await outbox.send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"tools": []}}))
        return Response(status_code=202)

    return Starlette(routes=[Route("/sse", events), Route("/messages/", messages, methods=["POST"])])


async def test_sse_failed_post_fails_only_that_request() -> None:
    outbox, inbox = anyio.create_memory_object_stream[str](10)
    async with outbox, inbox, serving(raw_sse_app(outbox, inbox)) as port:
        transport = sse_transport(f"http://127.0.0.1:{port}/sse", timeout_s=3.0, request_timeout_s=10.0)
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(transport, mode="legacy", read_timeout_seconds=3600) as client:
                assert client.protocol_version == "2024-11-05"
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("anything", {})
                assert "HTTP 500" in caught.value.message  # the failed POST, not the read timeout
                assert (await client.list_tools()).tools == []


@pytest.mark.parametrize(
    ("status", "kind", "text"), [(404, ConnectionFailed, "HTTP 404"), (401, AuthError, "HTTP 401")]
)
async def test_sse_connect_rejected(status: int, kind: type, text: str) -> None:
    async def reject(request: Request) -> Response:
        return Response("no", status_code=status)

    async with serving(Starlette(routes=[Route("/sse", reject)])) as port:
        transport = sse_transport(f"http://127.0.0.1:{port}/sse", timeout_s=3.0, request_timeout_s=10.0)
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(BaseException) as caught:
            async with Client(transport, mode="legacy"):
                pass
    assert isinstance(unwrap_exception(caught.value), httpx2.HTTPStatusError)  # raised bare
    error = classify_error(caught.value, server="s")  # the status comes from the exception itself
    assert isinstance(error, kind) and text in error.message


# --- era cache and error mapping -----------------------------------------------------------------


def test_era_cache_roundtrip_and_corruption(tmp_path: Path) -> None:
    path = tmp_path / "era.json"
    cache = EraCache(path)
    assert cache.get("a") is None
    cache.record("a", "2026-07-28")
    cache.record("b", "2025-06-18")
    cache.record("c", "1999-01-01")  # not a version we speak: not recorded
    assert (EraCache(path).get("a"), EraCache(path).get("b"), EraCache(path).get("c")) == (
        "modern",
        "legacy",
        None,
    )
    entry = cache.entry("b")
    assert entry is not None and entry["protocolVersion"] == "2025-06-18" and entry["at"] > 0
    cache.forget("a")
    assert cache.get("a") is None and cache.get("b") == "legacy"
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]
    for junk in ("{not json", "[]", '{"format": 1, "servers": []}', '{"format": 99, "servers": {}}'):
        path.write_text(junk)
        assert cache.get("b") is None
    cache.record("b", "2025-11-25")  # a corrupt file is replaced, not fatal
    assert EraCache(path).get("b") == "legacy"
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    EraCache(blocker / "era.json").record("a", "2026-07-28")  # unwritable: silently not cached


def test_era_cache_keeps_the_newest_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(era, "MAX_CACHE_ENTRIES", 3)
    cache = EraCache(tmp_path / "era.json")
    for n in range(5):
        cache.record(f"k{n}", "2025-11-25")
    assert [cache.get(f"k{n}") for n in range(5)] == [None, None, "legacy", "legacy", "legacy"]


def test_schema_violations_are_protocol_errors() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as caught:
        mcp_types.Tool.model_validate({"name": 3})
    error = classify_error(caught.value, server="x")
    assert isinstance(error, ProtocolError) and "does not match the MCP schema" in error.message


def test_era_policy() -> None:
    assert (client_mode_for(None), client_mode_for("modern"), client_mode_for("legacy")) == (
        "auto",
        "auto",
        "legacy",
    )
    assert discover_timeout_for("legacy") is None
    assert discover_timeout_for(None) == discover_timeout_for("modern") == era.DISCOVER_PROBE_TIMEOUT_S
    # The copies era.py keeps to stay import-light must match the SDK.
    from mcp_types import version

    assert tuple(version.MODERN_PROTOCOL_VERSIONS) == era.MODERN_PROTOCOL_VERSIONS
    assert tuple(version.HANDSHAKE_PROTOCOL_VERSIONS) == era.HANDSHAKE_PROTOCOL_VERSIONS
    assert (era.UNSUPPORTED_PROTOCOL_VERSION, era.REQUEST_TIMEOUT, era.CONNECTION_CLOSED) == (
        mcp_types.UNSUPPORTED_PROTOCOL_VERSION,
        mcp_types.REQUEST_TIMEOUT,
        mcp_types.CONNECTION_CLOSED,
    )


def test_retry_with_auto_decision() -> None:
    modern_only = MCPError(-32022, "Unsupported protocol version", {"supported": ["2026-07-28"]})
    assert era.should_retry_with_auto(ExceptionGroup("x", [ExceptionGroup("y", [modern_only])]))
    assert era.should_retry_with_auto(MCPError(-32601, "Method not found"))
    assert era.should_retry_with_auto(
        RuntimeError("Unsupported protocol version from the server: 2026-07-28")
    )
    assert not era.should_retry_with_auto(MCPError(-32000, "Connection closed"))
    assert not era.should_retry_with_auto(TimeoutError())


def raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


@pytest.mark.parametrize(
    ("exc", "kind", "text"),
    [
        (MCPError(-32001, "Request 'tools/call' timed out"), TimeoutFailed, "did not answer in time"),
        (TimeoutError(), TimeoutFailed, "did not answer in time"),
        (MCPError(-32000, "Connection closed"), ConnectionFailed, "closed the connection"),
        (MCPError(-32602, "bad\nparams"), ProtocolError, "error -32602: bad params"),
        (MCPError(-32022, "no", {"supported": ["2027-01-01"]}), ProtocolError, "2027-01-01"),
        (BrokenPipeError(32, "Broken pipe"), ConnectionFailed, "closed the connection"),
        (
            FileNotFoundError(2, "No such file", "nosuch-cmd"),
            ConnectionFailed,
            "command not found: nosuch-cmd",
        ),
        (anyio.EndOfStream(), ConnectionFailed, "closed the connection"),
        (httpx2.ConnectTimeout("slow"), TimeoutFailed, "could not connect to server 'x' in time"),
        (httpx2.RemoteProtocolError("peer closed"), ConnectionFailed, "connection to server 'x' failed"),
        (EndpointOriginMismatch("http://evil:1"), ProtocolError, "another origin (http://evil:1)"),
        (ValueError("weird"), InternalError, "unexpected ValueError"),
    ],
)
def test_classify_error_table(exc: BaseException, kind: type, text: str) -> None:
    error = classify_error(ExceptionGroup("outer", [ExceptionGroup("inner", [raised(exc)])]), server="x")
    assert isinstance(error, kind)
    assert text in error.message and "\n" not in error.message
    assert error.server == "x"


def test_classify_error_prefers_orb_errors_and_redacts() -> None:
    group = ExceptionGroup("g", [MCPError(-32000, "Connection closed"), LineTooLong("too long", server="t")])
    assert isinstance(classify_error(group, server="t"), LineTooLong)
    secret = classify_error(
        MCPError(-32602, "bad header Authorization: Bearer sk-live-123456789"), server="x"
    )
    assert "sk-live-123456789" not in secret.message
    status = classify_error(
        MCPError(-32603, "Server returned an error response"), server="x", http_status=503
    )
    assert isinstance(status, ConnectionFailed) and "HTTP 503" in status.message
    forbidden = classify_error(MCPError(-32603, "x"), server="x", http_status=403, www_authenticate="Bearer")
    assert isinstance(forbidden, AuthError) and "HTTP 403" in forbidden.message
