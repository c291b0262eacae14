"""The parts of serve that need no agent: options, names and URIs, the token, the event store, the
HTTP guard's decisions, the wire's refusals, the slash lines, and the command's usage errors."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orbmcp.errors import UsageError
from orbmcp.serve import naming, slash
from orbmcp.serve.command import options_from
from orbmcp.serve.events import memory_event_store
from orbmcp.serve.http import Guard, listen
from orbmcp.serve.options import HttpAddress, ServeOptions, is_loopback, parse_address
from orbmcp.serve.token import load_or_create, matches, token_path
from orbmcp.serve.wire import _refusal, message_streams
from tests.cli import run_cli

# -- options ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("8765", "127.0.0.1", 8765),
        ("127.0.0.1:0", "127.0.0.1", 0),
        ("[::1]:9000", "::1", 9000),
        ("localhost:1", "localhost", 1),
        ("0.0.0.0:80", "0.0.0.0", 80),
        (":8080", "127.0.0.1", 8080),
    ],
)
def test_addresses_are_read_as_host_and_port(text: str, host: str, port: int) -> None:
    address = parse_address(text)
    assert (address.host, address.port) == (host, port)


@pytest.mark.parametrize("text", ["", "port", "1:2:3", "65536", "-1", "host:"])
def test_bad_addresses_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        parse_address(text)


def test_urls_and_loopback() -> None:
    assert HttpAddress("::1", 8).url == "http://[::1]:8/mcp"
    assert HttpAddress("127.0.0.1", 8).loopback and is_loopback("LOCALHOST") and not is_loopback("10.0.0.1")
    assert not is_loopback("example.com")


def test_options_cross_the_daemon_socket_and_are_checked() -> None:
    options = ServeOptions(names="raw", prefix="p", servers=("a", "b"))
    assert ServeOptions.from_json(json.loads(json.dumps(options.to_json()))) == options
    assert options.serves("a") and not options.serves("c") and ServeOptions().serves("anything")
    for bad in (None, {"names": "odd"}, {"prefix": 3}, {"servers": "a"}, {"servers": [1]}):
        with pytest.raises(UsageError):
            ServeOptions.from_json(bad)


def test_contradictory_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="--stdio or --http"):
        options_from(stdio=True, http="1")
    with pytest.raises(UsageError, match="--names must be one of"):
        options_from(names="both")
    with pytest.raises(UsageError, match="--allow-remote applies to --http only"):
        options_from(allow_remote=True)
    options, address = options_from(http="0", server=["a", "a", "b"], names="raw")
    assert options.servers == ("a", "b") and address == HttpAddress("127.0.0.1", 0)


def test_the_command_line_refuses_what_makes_no_sense(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    for args, message in (
        (("serve", "--print-token", "--stdio"), "--print-token prints the HTTP token and exits"),
        (("serve", "--http", "0.0.0.0:0"), "refusing to listen on 0.0.0.0"),
        (("serve", "--http", "1", "--stdio"), "choose one transport"),
    ):
        result = run_cli("--no-daemon", "--config", str(config), *args)
        assert result.code == 2 and message in result.stderr, (args, result.stderr)


def test_print_token_prints_the_same_private_token_each_time(_isolated_agent_dir: Path) -> None:
    first = run_cli("--no-daemon", "serve", "--print-token")
    assert first.code == 0
    token = first.stdout.strip()
    assert run_cli("--no-daemon", "serve", "--print-token").stdout.strip() == token
    assert json.loads(run_cli("--no-daemon", "serve", "--print-token", "--json").stdout) == [token]
    path = token_path(_isolated_agent_dir)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# -- names and URIs -----------------------------------------------------------------------------------


def test_resource_uris_name_their_server_and_decode_back() -> None:
    uri = naming.resource_uri("bridged", "my server", "file:///a b/c?d=1")
    assert uri == "orbmcp://my%20server/file%3A%2F%2F%2Fa%20b%2Fc%3Fd%3D1"
    assert naming.parse_resource_uri(uri) == ("my server", "file:///a b/c?d=1")
    assert naming.resource_uri("raw", "s", "x://y") == "x://y"
    assert naming.parse_resource_uri("x://y") is None and naming.parse_resource_uri("orbmcp://") is None
    assert naming.parse_resource_uri("orbmcp://server") is None


def test_templates_keep_their_expressions() -> None:
    assert (
        naming.template_uri("bridged", "s", "mem://greeting/{name}")
        == "orbmcp://s/mem%3A%2F%2Fgreeting%2F{name}"
    )
    assert naming.template_uri("raw", "s", "mem://{x}") == "mem://{x}"


@settings(max_examples=60, derandomize=True)
@given(server=st.text(min_size=1, max_size=20), uri=st.text(max_size=60))
def test_any_server_and_uri_survive_the_round_trip(server: str, uri: str) -> None:
    assert naming.parse_resource_uri(naming.resource_uri("bridged", server, uri)) == (server, uri)


def test_raw_name_clashes_are_named_once_each() -> None:
    found = naming.clashes({"a": ["x", "y"], "b": ["x", "mcp_status"], "c": ["z"]}, ["mcp_status"], "tool")
    assert found == [
        "tool 'x' is offered by 'a' and 'b'",
        "tool 'mcp_status' is offered by orbmcp itself and 'b'",
    ]
    assert naming.prompt_name("bridged", "s", "p") == "s__p" and naming.prompt_name("raw", "s", "p") == "p"


# -- the token -----------------------------------------------------------------------------------------


def test_a_damaged_token_file_is_replaced(tmp_path: Path) -> None:
    path = token_path(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    path.write_text("short")
    os.chmod(path, 0o644)
    token = load_or_create(tmp_path)
    assert len(token) >= 32 and token != "short"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create(tmp_path) == token


def test_only_the_bearer_token_matches() -> None:
    token = "a" * 43
    assert matches(token, f"Bearer {token}") and matches(token, f"bearer  {token} ")
    assert not matches(token, None) and not matches(token, token) and not matches(token, f"Basic {token}")
    assert not matches(token, "Bearer " + "b" * 43)


# -- the event store -------------------------------------------------------------------------------------


async def test_events_after_a_known_one_are_replayed_per_stream() -> None:
    store = memory_event_store(max_events=4)
    first = await store.store_event("s1", None)
    other = await store.store_event("s2", {"other": 1})
    second = await store.store_event("s1", {"x": 2})
    third = await store.store_event("s1", {"x": 3})
    sent: list[Any] = []

    async def send(event: Any) -> None:
        sent.append((event.event_id, event.message))

    assert await store.replay_events_after(first, send) == "s1"
    assert sent == [(second, {"x": 2}), (third, {"x": 3})] and other not in [e for e, _ in sent]
    await store.store_event("s1", {"x": 4})  # the oldest (the priming event) is forgotten
    assert await store.replay_events_after(first, send) is None
    assert await store.replay_events_after("unknown", send) is None


# -- the guard ---------------------------------------------------------------------------------------------


def _request(path: str = "/mcp", **headers: str) -> dict[str, Any]:
    return {
        "type": "http",
        "path": path,
        "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }


async def _status(guard: Guard, scope: dict[str, Any]) -> int | None:
    statuses: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    await guard(scope, receive, send)
    return statuses[0] if statuses else None


async def test_the_guard_checks_path_origin_host_and_token_in_that_order() -> None:
    passed: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        passed.append(scope)

    token = "t" * 43
    auth = f"Bearer {token}"
    local = Guard(
        app, token, HttpAddress("127.0.0.1", 9), negotiated=lambda s: "2025-11-25" if s == "s1" else None
    )
    assert await _status(local, _request("/other", host="127.0.0.1:9", authorization=auth)) == 404
    assert (
        await _status(local, _request(host="127.0.0.1:9", origin="http://evil.example", authorization=auth))
        == 403
    )
    assert (
        await _status(local, _request(host="127.0.0.1:9", origin="javascript:alert(1)", authorization=auth))
        == 403
    )
    assert await _status(local, _request(host="evil.example", authorization=auth)) == 421
    assert await _status(local, _request(host="localhost:9")) == 401
    assert (
        await _status(local, _request(host="localhost:9", origin="http://localhost:3000", authorization=auth))
        is None
    )
    await _status(
        local,
        _request(host="[::1]:9", authorization=auth, mcp_session_id="s1", mcp_protocol_version="2025-03-26"),
    )
    assert (b"mcp-protocol-version", b"2025-11-25") in passed[-1]["headers"]  # served as the session agreed
    assert len(passed) == 2
    await local({"type": "lifespan"}, None, None)  # type: ignore[arg-type]

    remote = Guard(app, token, HttpAddress("10.1.2.3", 9))
    assert (
        await _status(remote, _request(host="anything", authorization=auth)) is None
    )  # remote: no host check
    assert await _status(remote, _request(host="x", origin="http://10.1.2.3:9", authorization=auth)) is None
    assert await _status(remote, _request(host="x", origin="http://127.0.0.1:9", authorization=auth)) == 403


def test_a_port_in_use_is_a_usage_error() -> None:
    first = listen(HttpAddress("127.0.0.1", 0), allow_remote=False)
    try:
        with pytest.raises(UsageError, match="cannot listen"):
            listen(HttpAddress("127.0.0.1", first.getsockname()[1]), allow_remote=False)
    finally:
        first.close()


# -- the wire ------------------------------------------------------------------------------------------------


def test_refusals_answer_with_the_request_id_when_there_is_one() -> None:
    assert json.loads(_refusal(b"{nope"))["error"]["code"] == -32700
    assert json.loads(_refusal(b'{"id": "x", "method": 1}'))["id"] == "x"
    assert json.loads(_refusal(b'{"id": true}'))["id"] is None
    assert json.loads(_refusal(b"[1, 2]"))["error"]["code"] == -32600


async def test_a_line_over_the_limit_ends_the_wire() -> None:
    from orbmcp.serve.wire import LineTooLong

    send_in, receive_in = anyio.create_memory_object_stream[bytes](10)
    out_send, _out_receive = anyio.create_memory_object_stream[bytes](10)

    class Bytes:
        def __init__(self, stream: Any) -> None:
            self.stream = stream

        async def receive(self, max_bytes: int = 65536) -> bytes:
            return await self.stream.receive()

        async def send(self, data: bytes) -> None:
            await self.stream.send(data)

    await send_in.send(b"x" * 200)
    with pytest.raises(BaseExceptionGroup) as caught:
        async with message_streams(Bytes(receive_in), Bytes(out_send), max_line_bytes=100) as (read, _write):  # type: ignore[arg-type]
            await read.receive()
    assert caught.group_contains(LineTooLong)


# -- the slash prompts ----------------------------------------------------------------------------------------


def test_prompt_lines_are_the_slash_commands() -> None:
    auth = slash.BY_NAME["mcp_auth"]
    assert auth.line({"server": "git hub", "reset": "true"}) == "/mcp:auth 'git hub' --reset"
    assert auth.line({"server": "x", "reset": False}) == "/mcp:auth x"
    assert slash.BY_NAME["mcp_server"].line({"server": "start"}) == "/mcp status start"
    assert slash.BY_NAME["mcp_reconnect"].line({}) == "/mcp reconnect"
    assert auth.usage == "/mcp:auth <server> [--reset]"
    with pytest.raises(UsageError, match="mcp_stop needs 'server'"):
        slash.BY_NAME["mcp_stop"].line({"server": ""})
    wire = slash.prompt_wire(auth)
    assert [a["required"] for a in wire["arguments"]] == [True, False]
    tool = slash.tool_wire(auth, ["a"])
    assert tool["inputSchema"]["properties"]["reset"]["type"] == "boolean"
    assert tool["inputSchema"]["required"] == ["server"]
    assert slash._partial("a b") == "'a b" and slash._partial("") == "" and slash._partial("ok") == "ok"


def test_a_parsed_form_rebuilds_to_a_schema_that_parses_the_same() -> None:
    """``form_schema`` (for a front that has only the parsed fields) loses nothing orbmcp checks."""
    from orbmcp.core.capabilities.elicitation import parse_form
    from orbmcp.serve.asker import form_schema

    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 40, "default": "Ada"},
            "mail": {"type": "string", "format": "email", "description": "Where to write"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "ratio": {"type": "number"},
            "ok": {"type": "boolean", "default": True},
            "one": {"type": "string", "enum": ["a", "b"], "enumNames": ["Option A", "Option B"]},
            "many": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}, "maxItems": 1},
        },
        "required": ["name", "one"],
    }
    fields = parse_form(schema)
    rebuilt = form_schema(fields)
    assert parse_form(rebuilt) == fields
    assert rebuilt["required"] == ["name", "one"]
    assert (
        form_schema(parse_form({"type": "object", "properties": {"x": {"type": "boolean"}}})).get("required")
        is None
    )


# -- raw names keep their owner --------------------------------------------------------------------


def _tool(server: str, name: str, **extra: Any) -> Any:
    from orbmcp.core.tooling.registry import BridgedTool

    return BridgedTool(server, name, f"b_{server}_{name}", "", None, {"type": "object"}, None, **extra)


def test_a_raw_name_keeps_its_first_owner_for_the_session() -> None:
    """A lazy server connected later (earlier in the configuration) does not take a served name."""
    reported: list[str] = []
    names = naming.ToolNames("raw", None, reported.append)
    first = names.index([_tool("b", "echo"), _tool("b", "add")], ["mcp_status"])
    assert {n: t.server for n, t in first.items()} == {"echo": "b", "add": "b"}
    later = names.index([_tool("a", "echo"), _tool("a", "only_a"), _tool("b", "echo"), _tool("b", "add")], [])
    assert {n: t.server for n, t in later.items()} == {"echo": "b", "only_a": "a", "add": "b"}
    assert reported == [
        "tool 'echo' is served by 'b'; 'a' offers it too and is not served under that name (--names raw)"
    ]
    names.index([_tool("a", "echo"), _tool("b", "echo")], [])
    assert len(reported) == 1  # each clash said once


def test_raw_names_outside_the_mcp_rules_are_not_served() -> None:
    reported: list[str] = []
    names = naming.ToolNames("raw", None, reported.append)
    index = names.index(
        [_tool("s", "ok.name-1"), _tool("s", "evil\x1b]0;x\x07"), _tool("s", "zero\u200bwidth")], []
    )
    assert list(index) == ["ok.name-1"]
    assert len(reported) == 2 and all("outside the MCP name rules" in r for r in reported)
    assert "\x1b" not in "".join(reported)  # repr: the escape is shown, not sent to a terminal
    bridged = naming.ToolNames("bridged", "p").index([_tool("s", "evil\x1b]0;x\x07")], [])
    assert all(naming.valid_name(name) for name in bridged)


def test_app_only_tools_are_not_offered_to_a_model() -> None:
    from orbmcp.core.tooling.registry import ToolRegistry

    class Listed:
        def __init__(self, name: str, meta: object) -> None:
            self.name, self.meta = name, meta
            self.description = self.title = self.annotations = self.output_schema = None
            self.input_schema = {"type": "object"}

    registry = ToolRegistry()
    registry.sync(
        "s",
        [
            Listed("for_app", {"ui": {"visibility": ["app"]}}),
            Listed("for_both", {"ui": {"visibility": ["model", "app"]}}),
            Listed("plain", None),
        ],
        active=True,
    )
    assert [t.name for t in registry.for_server("s") if t.app_only] == ["for_app"]


async def test_prompts_whose_bridged_names_collide_are_reported_and_the_first_keeps_it() -> None:
    """``a`` + ``b__c`` and ``a__b`` + ``c`` are both ``a__b__c``; a name with an escape is not served."""
    from types import SimpleNamespace

    from orbmcp.serve.prompts import _server_prompts

    listings = {"a": [{"name": "b__c"}], "a__b": [{"name": "c"}, {"name": "bad\x1b[2J"}]}
    reported: list[str] = []

    async def listing(server: str, kind: str) -> list[dict[str, Any]]:
        return listings[server]

    gateway = SimpleNamespace(
        served_names=lambda: list(listings),
        hub=SimpleNamespace(listing=listing),
        options=ServeOptions(),
        names=naming.ToolNames("bridged", None, reported.append),
    )
    prompts = await _server_prompts(gateway)  # type: ignore[arg-type]
    assert {name: server for name, (server, _) in prompts.items()} == {"a__b__c": "a"}
    assert len(reported) == 2
    assert reported[0].startswith("prompt 'a__b__c' is served for 'a'; 'a__b' offers")
    assert "outside the MCP name rules" in reported[1]
