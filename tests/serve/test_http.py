"""orbmcp serve over Streamable HTTP, end to end: the SDK's Client as the agent, real servers behind.

The gateway runs in the test's event loop on 127.0.0.1:0 with a session of its own; the servers
behind it are real processes (``tests/servers``). Proofs are what the agent receives (results,
notifications, refusals) and what the servers saw (marker files, their own answers).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import MCPError

from orbmcp.core.wire.era import unwrap_exception
from orbmcp.serve.options import ServeOptions
from tests.core.live import raw_entry, write_config
from tests.serve import (
    Notices,
    Served,
    agent,
    everything_entry,
    http_gateway,
    names,
    reference_entry,
    tool_named,
)
from tests.timeouts import HANG_GUARD_S

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

OWN_TOOLS = [
    "mcp_status",
    "mcp_connect",
    "mcp",
    "mcp_server",
    "mcp_start",
    "mcp_stop",
    "mcp_auth",
    "mcp_reconnect",
]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # uvicorn serves on asyncio; module-wide, for the shared gateway below


@pytest.fixture(scope="module")
async def everything_served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    """One gateway over everything.py for the tests that list, call and read through it and change
    nothing on it (no tool added, no server stopped): a gateway and a server per test was most of
    this file's CPU. Its global dir and home are its own (the per-test ones come later)."""
    base = tmp_path_factory.mktemp("served")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ORB_AGENT_DIR", str(base / "agent"))
        env.setenv("HOME", str(base / "home"))
        path = config(base, everything=everything_entry())
        async with http_gateway(path) as served:
            yield served


def config(tmp_path: Path, **servers: dict[str, Any]) -> Path:
    return write_config(tmp_path / "mcp.json", servers)


async def test_tools_are_listed_under_bridged_names_with_everything_passed_through(
    everything_served: Served,
) -> None:
    async with agent(everything_served) as client:
        assert client.protocol_version == "2025-11-25"  # the handshake era, after server/discover was refused
        caps = client.server_capabilities
        assert caps.tools and caps.tools.list_changed and caps.prompts and caps.prompts.list_changed
        assert caps.resources and caps.resources.subscribe and caps.completions is not None
        listing = await client.list_tools()
        assert names(listing)[: len(OWN_TOOLS)] == OWN_TOOLS
        add = tool_named(listing, "add")
        assert (
            add.name == everything_served.gateway.manager.tools.get("everything", "add").bridged_name
        )  # the host API's name
        assert add.name.startswith("mcp__everything__add_") and len(add.name) <= 64
        assert add.description == "Add two integers."  # the server's own text, no hint line appended
        assert (
            add.annotations is not None and add.annotations.read_only_hint and add.annotations.idempotent_hint
        )
        assert add.input_schema["required"] == ["a", "b"]
        structured = tool_named(listing, "structured")
        assert structured.output_schema is not None and "temperature" in json.dumps(structured.output_schema)


async def test_calls_pass_every_content_kind_structured_content_and_errors_through(
    everything_served: Served,
) -> None:
    async with agent(everything_served) as client:
        listing = await client.list_tools()

        mixed = await client.call_tool(tool_named(listing, "mixed").name, {})
        kinds = [block.type for block in mixed.content]
        assert kinds == ["text", "image", "resource_link", "resource", "resource"]
        link = mixed.content[2]
        assert (
            isinstance(link, types.ResourceLink)
            and link.uri == "mem://hello"
            and link.mime_type == "text/plain"
        )
        blob = mixed.content[4]
        assert isinstance(blob, types.EmbeddedResource) and isinstance(
            blob.resource, types.BlobResourceContents
        )
        assert blob.resource.blob == "AAEC"

        audio = await client.call_tool(tool_named(listing, "audio").name, {})
        assert isinstance(audio.content[0], types.AudioContent) and audio.content[0].mime_type == "audio/wav"

        weather = await client.call_tool(tool_named(listing, "structured").name, {})
        assert weather.structured_content == {
            "city": "Paris",
            "temperature": 21.5,
            "conditions": ["sunny", "dry"],
        }
        assert not weather.is_error

        failed = await client.call_tool(tool_named(listing, "fail").name, {"message": "no luck"})
        assert failed.is_error and failed.content[0].text.endswith("no luck")  # the server's own text


async def test_progress_is_relayed_in_order(everything_served: Served) -> None:
    async with agent(everything_served) as client:
        slow = tool_named(await client.list_tools(), "slow")
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append((value, total, message))

        result = await client.call_tool(slow.name, {"steps": 3, "delay": 0}, progress_callback=progress)
        assert result.content[0].text == "done 3 steps"
        assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]


async def test_cancelling_a_call_cancels_it_on_the_server(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    entry = everything_entry(env={"ORB_TEST_MARKER_DIR": str(markers)})
    async with http_gateway(config(tmp_path, everything=entry)) as served, agent(served) as client:
        sleep = tool_named(await client.list_tools(), "sleep")
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, sleep.name, {"seconds": 600})
            with anyio.fail_after(HANG_GUARD_S):
                while not (markers / "sleep-started").exists():
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()  # the agent gives up: notifications/cancelled reaches serve
        with anyio.fail_after(HANG_GUARD_S):
            while not (markers / "sleep-cancelled").exists():
                await anyio.sleep(0.02)  # ... and serve cancels the call on the server


async def test_tool_lists_follow_the_servers(tmp_path: Path) -> None:
    notices = Notices()
    async with http_gateway(config(tmp_path, everything=everything_entry())) as served:
        # The agent comes once the server's first connection is made: a list_changed for that
        # connection, reaching an agent already there, is not one of the changes counted below.
        with anyio.fail_after(HANG_GUARD_S):
            await served.gateway.ready()
        async with agent(served, message_handler=notices) as client:
            await tool_lists_follow(served, client, notices)


async def tool_lists_follow(served: Served, client: Any, notices: Notices) -> None:
    listing = await client.list_tools()
    changed = "notifications/tools/list_changed"

    await client.call_tool(tool_named(listing, "add_tool").name, {"name": "fresh"})
    await notices.wait_count(changed, 1)
    assert any("__fresh_" in n for n in names(await client.list_tools()))

    stop = await client.call_tool("mcp_stop", {"server": "everything"})
    assert not stop.is_error and "stopped 'everything'" in stop.content[0].text
    await notices.wait_count(changed, 2)
    assert names(await client.list_tools()) == OWN_TOOLS  # disconnect: its tools are gone

    connected = await client.call_tool("mcp_connect", {"server": "everything"})
    assert not connected.is_error and connected.structured_content["allToolsActive"]
    await notices.wait_count(changed, 3)
    listing = await client.list_tools()
    assert len(names(listing)) > len(OWN_TOOLS)

    crashed = await client.call_tool(tool_named(listing, "crash").name, {})
    assert crashed.is_error and "everything" in crashed.content[0].text  # a dead server says so
    await notices.wait_for(lambda: served.gateway.tool_listing()[len(OWN_TOOLS) :] == [], "its tools gone")
    await notices.wait_count(changed, 4)


async def test_a_call_to_a_server_that_stopped_is_a_tool_error_naming_it(tmp_path: Path) -> None:
    async with (
        http_gateway(config(tmp_path, everything=raw_entry())) as served,  # only its echo is called
        agent(served) as client,
    ):
        echo = tool_named(await client.list_tools(), "echo")
        await served.gateway.manager.stop("everything")
        result = await client.call_tool(echo.name, {"text": "hi"})
        assert result.is_error
        text = result.content[0].text
        assert "everything" in text and "/mcp:start everything" in text  # spelled for the agent's user
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("no_such_tool", {})


async def test_own_prompts_run_the_slash_commands_and_complete_server_names(tmp_path: Path) -> None:
    servers = {"everything": everything_entry(), "lazy": everything_entry(lifecycle="lazy")}
    async with http_gateway(config(tmp_path, **servers)) as served, agent(served) as client:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        assert list(listed)[:6] == ["mcp", "mcp_server", "mcp_start", "mcp_stop", "mcp_auth", "mcp_reconnect"]
        assert [a.name for a in listed["mcp_auth"].arguments or []] == ["server", "reset"]
        assert "everything__greet" in listed

        status = await client.get_prompt("mcp", {})
        text = status.messages[0].content.text
        assert "everything" in text and "lazy" in text and "ready" in text

        done = await client.complete(
            types.PromptReference(name="mcp_start"), {"name": "server", "value": "la"}
        )
        assert done.completion.values == ["lazy"]  # servers not running: lazy only

        started = await client.get_prompt("mcp_start", {"server": "lazy"})
        assert "State:  ready" in started.messages[0].content.text
        assert served.gateway.manager.get("lazy").connected

        detail = await client.get_prompt("mcp_server", {"server": "lazy"})
        assert "lazy" in detail.messages[0].content.text

        missing = await client.get_prompt("mcp_start", {})
        assert "mcp_start needs 'server'" in missing.messages[0].content.text

        unknown = await client.get_prompt("mcp_stop", {"server": "nope"})
        assert "unknown server 'nope'" in unknown.messages[0].content.text

        stop = await client.complete(types.PromptReference(name="mcp_stop"), {"name": "server", "value": ""})
        assert stop.completion.values == ["everything", "lazy"]  # both run now
        reset = await client.complete(types.PromptReference(name="mcp_auth"), {"name": "reset", "value": "t"})
        assert reset.completion.values == ["true"]

        greet = await client.get_prompt("everything__greet", {"name": "Ada"})
        assert "Please greet Ada warmly." in greet.messages[0].content.text


async def test_slash_tool_forms_return_the_command_output(everything_served: Served) -> None:
    async with agent(everything_served) as client:
        listing = await client.list_tools()
        start = tool_named(listing, "mcp_start")
        assert start.input_schema["properties"]["server"]["enum"] == ["everything"]
        status = await client.call_tool("mcp", {})
        assert not status.is_error and "everything" in status.content[0].text
        unknown = await client.call_tool("mcp_start", {"server": "nope"})
        assert unknown.is_error and "unknown server 'nope'" in unknown.content[0].text
        rows = json.loads((await client.call_tool("mcp_status", {})).content[0].text)
        assert [row["name"] for row in rows] == ["everything"] and rows[0]["state"] == "ready"


async def test_resources_templates_reading_and_subscriptions_are_relayed(tmp_path: Path) -> None:
    notices = Notices()
    async with (
        http_gateway(config(tmp_path, ref=reference_entry(), everything=everything_entry())) as served,
        agent(served, message_handler=notices) as client,
    ):
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert (
            "orbmcp://ref/test%3A%2F%2Fstatic-text" in uris
            and "orbmcp://everything/mem%3A%2F%2Fhello" in uris
        )
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        assert "orbmcp://ref/test%3A%2F%2Ftemplate%2F{id}%2Fdata" in templates

        text = await client.read_resource("orbmcp://ref/test%3A%2F%2Fstatic-text")
        assert text.contents[0].uri == "orbmcp://ref/test%3A%2F%2Fstatic-text"
        assert text.contents[0].text == "This is the static text resource."
        binary = await client.read_resource("orbmcp://ref/test%3A%2F%2Fstatic-binary")
        assert isinstance(binary.contents[0], types.BlobResourceContents)
        expanded = await client.read_resource("orbmcp://ref/test%3A%2F%2Ftemplate%2F42%2Fdata")
        assert json.loads(expanded.contents[0].text)["id"] == "42"
        with pytest.raises(MCPError, match="Unknown resource"):
            await client.read_resource("orbmcp://nope/x")

        watched = "orbmcp://ref/test%3A%2F%2Fwatched-resource"
        await client.session.subscribe_resource(watched)
        listing = await client.list_tools()
        subscribed = await client.call_tool(tool_named(listing, "test_subscriptions").name, {})
        assert json.loads(subscribed.content[0].text) == ["test://watched-resource"]
        await client.call_tool(
            tool_named(listing, "test_update_resource").name, {"uri": "test://watched-resource"}
        )
        updated = "notifications/resources/updated"
        await notices.wait_count(updated, 1)
        assert [str(m.params.uri) for m in notices.seen if m.method == updated] == [watched]

        await client.session.unsubscribe_resource(watched)
        after = await client.call_tool(tool_named(listing, "test_subscriptions").name, {})
        assert json.loads(after.content[0].text) == []

        argument = {"name": "arg1", "value": "test"}
        done = await client.complete(types.PromptReference(name="ref__test_prompt_with_arguments"), argument)
        assert done.completion.values == ["testValue1", "testValue2"]  # answered by the server


async def test_elicitation_sampling_and_roots_are_forwarded_to_the_agent(tmp_path: Path) -> None:
    asked: list[Any] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"response": "from the agent"})

    async def sample(context: Any, params: Any) -> types.CreateMessageResult:
        asked.append(params)
        reply = types.TextContent(text="a sampled reply")
        return types.CreateMessageResult(role="assistant", content=reply, model="agent-model")

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])

    callbacks = {"elicitation_callback": elicit, "sampling_callback": sample, "list_roots_callback": roots}
    async with (
        http_gateway(config(tmp_path, ref=reference_entry())) as served,
        agent(served, **callbacks) as client,
    ):
        listing = await client.list_tools()
        answer = await client.call_tool(tool_named(listing, "test_elicitation").name, {"message": "Who?"})
        assert (
            answer.content[0].text == 'User response: action=accept, content={"response": "from the agent"}'
        )
        assert asked[0].message == "[ref] Who?"  # the person sees which server asks

        enums = await client.call_tool(tool_named(listing, "test_elicitation_sep1330_enums").name, {})
        assert not enums.is_error
        assert asked[1].requested_schema["properties"]["legacyEnum"]["enumNames"][0] == "Option one"

        sampled = await client.call_tool(tool_named(listing, "test_sampling").name, {"prompt": "hi"})
        assert sampled.content[0].text == "LLM response: a sampled reply (model agent-model)"

        listed = await client.call_tool(tool_named(listing, "test_roots").name, {})
        assert json.loads(listed.content[0].text) == ["file:///work/project"]


async def test_a_server_that_gives_up_its_question_cancels_it_at_the_agent(tmp_path: Path) -> None:
    asked, cancelled = anyio.Event(), anyio.Event()

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.set()
        try:
            await anyio.sleep_forever()  # the person never answers
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    async with (
        http_gateway(config(tmp_path, ref=reference_entry())) as served,
        agent(served, elicitation_callback=elicit) as client,
    ):
        tool = tool_named(await client.list_tools(), "test_elicitation_abandoned")
        result = await client.call_tool(tool.name, {"seconds": 3})
        assert result.content[0].text.startswith("gave up")
        assert asked.is_set(), result.content[0].text
        with anyio.fail_after(HANG_GUARD_S):
            await cancelled.wait()  # serve passed the server's notifications/cancelled on


async def test_without_the_capability_the_request_is_answered_as_the_other_fronts_would(
    tmp_path: Path,
) -> None:
    async with http_gateway(config(tmp_path, ref=reference_entry())) as served, agent(served) as client:
        listing = await client.list_tools()
        answer = await client.call_tool(tool_named(listing, "test_elicitation").name, {"message": "Who?"})
        assert answer.content[0].text.startswith("User response: action=decline")
        sampled = await client.call_tool(tool_named(listing, "test_sampling").name, {"prompt": "hi"})
        assert sampled.is_error and "no sampling command is configured" in sampled.content[0].text
        roots = await client.call_tool(tool_named(listing, "test_roots").name, {})
        assert json.loads(roots.content[0].text) == []  # none given, none configured: never the cwd


async def test_a_servers_log_messages_reach_the_agent_at_the_level_it_asked(tmp_path: Path) -> None:
    notices = Notices()
    async with (
        http_gateway(config(tmp_path, ref=reference_entry())) as served,
        agent(served, message_handler=notices) as client,
    ):
        tool = tool_named(await client.list_tools(), "test_tool_with_logging")
        await client.set_logging_level("debug")
        await client.call_tool(tool.name, {})
        await notices.wait_count("notifications/message", 3)
        logs = [m.params.data for m in notices.seen if m.method == "notifications/message"]
        assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]
        await client.set_logging_level("error")
        await client.call_tool(tool.name, {})
        done = await client.call_tool(tool_named(await client.list_tools(), "test_simple_text").name, {})
        assert done.content[0].text.startswith("This is a simple")
        assert notices.count("notifications/message") == 3  # info is below error: filtered


async def test_raw_names_are_the_servers_own_and_a_clash_is_an_error_at_start(tmp_path: Path) -> None:
    path = config(tmp_path, ref=reference_entry())
    async with http_gateway(path, ServeOptions(names="raw")) as served, agent(served) as client:
        listing = await client.list_tools()
        assert "test_simple_text" in names(listing)
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert "test://static-text" in uris
        read = await client.read_resource("test://template/7/data")
        assert json.loads(read.contents[0].text)["id"] == "7"
        assert "test_simple_prompt" in [p.name for p in (await client.list_prompts()).prompts]

    from orbmcp.errors import UsageError

    clash = config(tmp_path, a=reference_entry(), b=reference_entry())
    with pytest.raises(UsageError, match=r"tool 'test_simple_text' is offered by 'a' and 'b'"):
        async with http_gateway(clash, ServeOptions(names="raw")):
            pass
    only_a = ServeOptions(names="raw", servers=("a",))
    async with http_gateway(clash, only_a) as served, agent(served) as client:
        assert "test_simple_text" in names(await client.list_tools())
        assert [
            row["name"] for row in json.loads((await client.call_tool("mcp_status", {})).content[0].text)
        ] == ["a"]


async def test_a_lazy_server_connected_later_does_not_take_a_served_raw_name(tmp_path: Path) -> None:
    """``a`` comes first in the configuration but is lazy: ``b`` serves the name first, and keeps it
    after the agent connects ``a``; the clash is reported once, naming both."""
    path = config(tmp_path, a=reference_entry(lifecycle="lazy"), b=reference_entry())
    async with http_gateway(path, ServeOptions(names="raw")) as served, agent(served) as client:
        assert "test_simple_text" in names(await client.list_tools())
        assert served.gateway.tool("test_simple_text").server == "b"  # type: ignore[union-attr]
        connected = await client.call_tool("mcp_connect", {"server": "a"})
        assert not connected.is_error, connected.content
        assert "test_simple_text" in names(await client.list_tools())
        assert served.gateway.tool("test_simple_text").server == "b"  # type: ignore[union-attr]
        clashes = [m for level, m in served.notices if "test_simple_text" in m]
        assert clashes == [
            "tool 'test_simple_text' is served by 'b'; 'a' offers it too and is not served under that "
            "name (--names raw)"
        ]


async def test_a_prefix_gives_other_stable_names(tmp_path: Path) -> None:
    async with (
        http_gateway(config(tmp_path, everything=raw_entry()), ServeOptions(prefix="gw")) as served,
        agent(served) as client,
    ):
        echo = tool_named(await client.list_tools(), "echo")
        assert echo.name.startswith("gw__everything__echo_")
        assert (await client.call_tool(echo.name, {"text": "x"})).content[0].text == "x"


async def test_requests_without_the_token_or_from_a_web_page_are_refused(everything_served: Served) -> None:
    served = everything_served
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient() as http:
        bare = await http.post(served.url, json=body)
        assert bare.status_code == 401 and bare.headers["www-authenticate"].startswith("Bearer")
        wrong = await http.post(served.url, json=body, headers={"Authorization": "Bearer wrong-token-0000"})
        assert wrong.status_code == 401
        auth = {"Authorization": f"Bearer {served.token}"}
        evil = await http.post(served.url, json=body, headers={**auth, "Origin": "http://evil.example"})
        assert evil.status_code == 403
        rebound = await http.post(served.url, json=body, headers={**auth, "Host": "evil.example:80"})
        assert rebound.status_code == 421
        elsewhere = await http.post(served.url.replace("/mcp", "/other"), json=body, headers=auth)
        assert elsewhere.status_code == 404
    with pytest.raises((MCPError, BaseExceptionGroup)) as refused:  # no session without the token
        async with agent(served, token="not-the-token"):
            pass
    assert isinstance(unwrap_exception(refused.value), MCPError)


async def test_two_agents_at_once_each_get_their_own_session(tmp_path: Path) -> None:
    first, second = Notices(), Notices()
    async with (
        http_gateway(config(tmp_path, everything=everything_entry())) as served,
        agent(served, message_handler=first) as one,
        agent(served, message_handler=second) as two,
    ):
        listing = await one.list_tools()
        await two.list_tools()
        assert len(served.gateway.peers) == 2
        echo = tool_named(listing, "echo")
        async with anyio.create_task_group() as tg:
            results: dict[str, str] = {}

            async def call(client: Any, text: str) -> None:
                results[text] = (await client.call_tool(echo.name, {"text": text})).content[0].text

            tg.start_soon(call, one, "from one")
            tg.start_soon(call, two, "from two")
        assert results == {"from one": "from one", "from two": "from two"}
        await two.call_tool(tool_named(listing, "add_tool").name, {"name": "shared"})
        await first.wait_count("notifications/tools/list_changed", 1)  # both hear the change
        await second.wait_count("notifications/tools/list_changed", 1)
    assert served.gateway.peers == []
