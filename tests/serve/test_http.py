"""orbmcp serve over Streamable HTTP, end to end: the SDK's Client as the agent, real servers behind.

The gateway runs in the test's event loop on 127.0.0.1:0 with a session of its own; the servers
behind it are real processes (``tests/servers``). Proofs are what the agent receives (results,
notifications, refusals) and what the servers saw (marker files, their own answers). What serve
relays (tools, calls, resources, prompts, questions, logs) is ``test_relaying.py``'s, over
in-memory streams; here is what is about HTTP (the token, the origin, two agents' sessions) or
about the servers' processes (a cancel reaching one, a crash).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import MCPError

from orbmcp.core.wire.era import unwrap_exception
from tests.core.live import raw_entry
from tests.serve import OWN_TOOL_NAMES as OWN_TOOLS
from tests.serve import (
    Notices,
    Served,
    agent,
    config,
    everything_entry,
    http_gateway,
    names,
    tool_named,
)
from tests.timeouts import HANG_GUARD_S

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


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


async def test_requests_without_the_token_or_from_a_web_page_are_refused(tmp_path: Path) -> None:
    async with http_gateway(config(tmp_path, everything=raw_entry())) as served:
        await refusals(served)


async def refusals(served: Served) -> None:
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
