"""What ``orbmcp serve`` relays between an agent and its servers, over the SDK's in-memory streams.

The gateway runs in the test's event loop with a session of its own, the agent's SDK ``Client`` on
it as ``serve --stdio`` serves one (``serve_stream``), and the servers behind it are SDK servers in
the same loop (``tests.memory``): the subject is what serve does with tools, calls, resources,
prompts, questions and logs, not a process or HTTP (``test_http.py`` and ``test_stdio.py`` keep
those). Proofs are what the agent receives and what the servers answered.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import MCPError

from orbmcp.serve.options import ServeOptions
from tests.memory import memory_agent, memory_entry
from tests.serve import OWN_TOOL_NAMES as OWN_TOOLS
from tests.serve import Gatewayed, Notices, config, memory_gateway, names, tool_named
from tests.timeouts import HANG_GUARD_S

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

EVERYTHING = memory_entry("everything", "--list-changed")
REFERENCE = memory_entry("reference")


@pytest.fixture
async def everything_gw(tmp_path: Path) -> AsyncIterator[Gatewayed]:
    async with memory_gateway(config(tmp_path, everything=EVERYTHING)) as gatewayed:
        yield gatewayed


async def test_tools_are_listed_under_bridged_names_with_everything_passed_through(
    everything_gw: Gatewayed,
) -> None:
    async with memory_agent(everything_gw.gateway) as client:
        assert client.protocol_version == "2025-11-25"  # the handshake era, after server/discover was refused
        caps = client.server_capabilities
        assert caps.tools and caps.tools.list_changed and caps.prompts and caps.prompts.list_changed
        assert caps.resources and caps.resources.subscribe and caps.completions is not None
        listing = await client.list_tools()
        assert names(listing)[: len(OWN_TOOLS)] == OWN_TOOLS
        add = tool_named(listing, "add")
        assert (
            add.name == everything_gw.gateway.manager.tools.get("everything", "add").bridged_name
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
    everything_gw: Gatewayed,
) -> None:
    async with memory_agent(everything_gw.gateway) as client:
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


async def test_progress_is_relayed_in_order(everything_gw: Gatewayed) -> None:
    async with memory_agent(everything_gw.gateway) as client:
        slow = tool_named(await client.list_tools(), "slow")
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append((value, total, message))

        result = await client.call_tool(slow.name, {"steps": 3, "delay": 0}, progress_callback=progress)
        assert result.content[0].text == "done 3 steps"
        assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]


async def test_own_prompts_run_the_slash_commands_and_complete_server_names(tmp_path: Path) -> None:
    servers = {
        "everything": EVERYTHING,
        "lazy": memory_entry("everything", "--list-changed", lifecycle="lazy"),
    }
    async with memory_gateway(config(tmp_path, **servers)) as served, memory_agent(served.gateway) as client:
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


async def test_slash_tool_forms_return_the_command_output(everything_gw: Gatewayed) -> None:
    async with memory_agent(everything_gw.gateway) as client:
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
        memory_gateway(config(tmp_path, ref=REFERENCE, everything=EVERYTHING)) as served,
        memory_agent(served.gateway, message_handler=notices) as client,
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
        memory_gateway(config(tmp_path, ref=REFERENCE)) as served,
        memory_agent(served.gateway, **callbacks) as client,
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
        memory_gateway(config(tmp_path, ref=REFERENCE)) as served,
        memory_agent(served.gateway, elicitation_callback=elicit) as client,
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
    async with (
        memory_gateway(config(tmp_path, ref=REFERENCE)) as served,
        memory_agent(served.gateway) as client,
    ):
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
        memory_gateway(config(tmp_path, ref=REFERENCE)) as served,
        memory_agent(served.gateway, message_handler=notices) as client,
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
    path = config(tmp_path, ref=REFERENCE)
    async with (
        memory_gateway(path, ServeOptions(names="raw")) as served,
        memory_agent(served.gateway) as client,
    ):
        listing = await client.list_tools()
        assert "test_simple_text" in names(listing)
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert "test://static-text" in uris
        read = await client.read_resource("test://template/7/data")
        assert json.loads(read.contents[0].text)["id"] == "7"
        assert "test_simple_prompt" in [p.name for p in (await client.list_prompts()).prompts]

    from orbmcp.errors import UsageError

    clash = config(tmp_path, a=REFERENCE, b=REFERENCE)
    with pytest.raises(UsageError, match=r"tool 'test_simple_text' is offered by 'a' and 'b'"):
        async with memory_gateway(clash, ServeOptions(names="raw")):
            pass
    only_a = ServeOptions(names="raw", servers=("a",))
    async with memory_gateway(clash, only_a) as served, memory_agent(served.gateway) as client:
        assert "test_simple_text" in names(await client.list_tools())
        assert [
            row["name"] for row in json.loads((await client.call_tool("mcp_status", {})).content[0].text)
        ] == ["a"]


async def test_a_lazy_server_connected_later_does_not_take_a_served_raw_name(tmp_path: Path) -> None:
    """``a`` comes first in the configuration but is lazy: ``b`` serves the name first, and keeps it
    after the agent connects ``a``; the clash is reported once, naming both."""
    path = config(tmp_path, a=memory_entry("reference", lifecycle="lazy"), b=REFERENCE)
    async with (
        memory_gateway(path, ServeOptions(names="raw")) as served,
        memory_agent(served.gateway) as client,
    ):
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
        memory_gateway(config(tmp_path, everything=EVERYTHING), ServeOptions(prefix="gw")) as served,
        memory_agent(served.gateway) as client,
    ):
        echo = tool_named(await client.list_tools(), "echo")
        assert echo.name.startswith("gw__everything__echo_")
        assert (await client.call_tool(echo.name, {"text": "x"})).content[0].text == "x"
