"""Requests that cross serve toward a person: the commands' questions as elicitations, a server's
requests when no agent can answer them, and authorizing an OAuth server through ``mcp_auth``."""

from __future__ import annotations

import json
import sys
import webbrowser
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from orbmcp.config.loader import load_config
from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
from orbmcp.core.session.manager import Manager
from orbmcp.core.tooling.calls import call_tool
from orbmcp.serve.hub import Hub
from orbmcp.serve.ui import ServeUI
from tests.auth.oauth_server import running_server
from tests.core.live import FAST_GRACE_S, wait_until, write_config
from tests.memory import memory_agent, memory_entry
from tests.serve import Notices, agent, http_gateway, memory_gateway, names
from tests.timeouts import HANG_GUARD_S

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_commands_questions_are_asked_as_form_elicitations(tmp_path: Path) -> None:
    asked: list[Any] = []
    answers = iter(
        [{"answer": True}, {"answer": "b"}, {"answer": "http://127.0.0.1:1/callback?code=x"}, None]
    )

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="accept")
        answer = next(answers)
        return (
            types.ElicitResult(action="accept", content=answer)
            if answer
            else types.ElicitResult(action="decline")
        )

    config = write_config(tmp_path / "mcp.json", {})
    async with http_gateway(config) as served, agent(served, elicitation_callback=elicit) as client:
        await client.list_tools()
        gateway = served.gateway
        ui = ServeUI(gateway.peers[0], None, gateway.spawn, gateway.hub.asker)
        assert ui.interactive
        assert await anyio.to_thread.run_sync(ui.confirm, "Proceed?") is True
        assert await anyio.to_thread.run_sync(ui.choose, "Which?", ["a", "b"]) == "b"
        pasted = await anyio.to_thread.run_sync(ui.prompt_paste, "Paste the redirect URL")
        assert pasted == "http://127.0.0.1:1/callback?code=x"
        assert await anyio.to_thread.run_sync(ui.choose, "Again?", ["a"]) is None  # declined
        assert [a.message for a in asked] == ["Proceed?", "Which?", "Paste the redirect URL", "Again?"]
        assert asked[0].requested_schema["properties"]["answer"]["type"] == "boolean"
        assert ui.confirm("On the loop?", default=True) is True  # nobody can be waited for there
        assert len(asked) == 4

        ui.show_url("https://as.example/authorize?x=1")
        with anyio.fail_after(HANG_GUARD_S):
            while len(asked) < 5:
                await anyio.sleep(0.01)
        assert (
            isinstance(asked[4], types.ElicitRequestURLParams)
            and asked[4].url == "https://as.example/authorize?x=1"
        )
        ui.notify("plain")
        ui.notify("careful", level="warning")
        assert ui.notices == [
            "Open this URL to authorize: https://as.example/authorize?x=1",
            "plain",
            "warning: careful",
        ]


async def test_without_elicitation_a_url_reaches_the_agent_as_a_log_message(tmp_path: Path) -> None:
    notices = Notices()
    config = write_config(tmp_path / "mcp.json", {})
    async with http_gateway(config) as served, agent(served, message_handler=notices) as client:
        await client.list_tools()
        gateway = served.gateway
        ui = ServeUI(gateway.peers[0], None, gateway.spawn, gateway.hub.asker)
        assert await anyio.to_thread.run_sync(ui.confirm, "Proceed?") is False  # nobody to ask
        ui.show_url("https://as.example/authorize")
        await notices.wait_count("notifications/message", 1)
        message = next(m for m in notices.seen if m.method == "notifications/message")
        assert message.params.level == "notice" and "https://as.example/authorize" in message.params.data


@pytest.mark.usefixtures("in_memory")
async def test_with_no_capable_agent_a_servers_request_goes_to_what_answered_before(tmp_path: Path) -> None:
    config = load_config(
        config_file=write_config(tmp_path / "mcp.json", {"ref": memory_entry("reference")}), cwd=tmp_path
    )
    manager = Manager(config, retries=False)
    manager.runtime.stdin_grace_s = manager.runtime.term_grace_s = FAST_GRACE_S

    class Shell:
        """The front of the session before serve attached (a REPL, an agent host)."""

        interactive = True

        async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
            return ElicitationAnswer("accept", {"response": f"from the shell to {request.server}"})

        async def sample(self, request: SamplingRequest) -> SamplingAnswer:
            return SamplingAnswer("reject", reason="the shell has no model")

    manager.runtime.asker = Shell()
    async with manager:
        hub = Hub.of(manager)
        assert Hub.of(manager) is hub  # one per session
        assert manager.runtime.asker is hub.asker and manager.runtime.features.sampling
        sup = await manager.ready("ref")
        asked = await call_tool(sup, "test_elicitation", {"message": "who?"})
        assert asked.text() == 'User response: action=accept, content={"response": "from the shell to ref"}'
        sampled = await call_tool(sup, "test_sampling", {"prompt": "x"})
        assert sampled.is_error and "the shell has no model" in sampled.text()
        roots = await call_tool(sup, "test_roots", {})
        # No agent gave roots and none are configured: an empty list, never the current directory.
        assert json.loads(roots.text()) == []


async def test_an_agents_roots_are_the_servers_roots_while_it_is_connected(tmp_path: Path) -> None:
    """Roots come from the agent that declared them (servers are told when they change), and go
    back to none when it leaves (never the bare project directory)."""
    current = ["file:///agent/one"]
    notices = Notices()

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in current])

    config = write_config(tmp_path / "mcp.json", {"ref": memory_entry("reference")})
    async with memory_gateway(config) as served:
        async with memory_agent(served.gateway, list_roots_callback=roots, message_handler=notices) as client:
            tool = next(n for n in names(await client.list_tools()) if "__test_roots_" in n)
            assert json.loads((await client.call_tool(tool, {})).content[0].text) == ["file:///agent/one"]
            current[:] = ["file:///agent/two", "file:///agent/three"]
            await client.session.send_roots_list_changed()
            runtime = served.gateway.manager.runtime
            await wait_until(lambda: len(runtime.agent_roots or ()) == 2, what="the agent's new roots")
            listed = json.loads((await client.call_tool(tool, {})).content[0].text)
            assert listed == ["file:///agent/two", "file:///agent/three"]
        await wait_until(lambda: runtime.agent_roots is None, what="the agent's roots gone")
        sup = served.gateway.manager.get("ref")
        assert served.gateway.manager.runtime.roots_for(sup.cfg) == ()


async def test_prompt_and_resource_changes_and_reconnects_reach_the_agent(tmp_path: Path) -> None:
    notices = Notices()
    config = write_config(tmp_path / "mcp.json", {"ref": memory_entry("reference")})
    async with (
        memory_gateway(config) as served,
        memory_agent(served.gateway, message_handler=notices) as client,
    ):
        before = [p.name for p in (await client.list_prompts()).prompts]
        assert "ref__test_simple_prompt" in before
        watched = "orbmcp://ref/test%3A%2F%2Fwatched-resource"
        await client.session.subscribe_resource(watched)
        await client.call_tool("mcp_reconnect", {"server": "ref"})
        await notices.wait_count("notifications/prompts/list_changed", 1)
        await notices.wait_count("notifications/resources/list_changed", 1)
        listing = await client.list_tools()
        subscriptions = next(n for n in names(listing) if "__test_subscriptions_" in n)
        with anyio.fail_after(HANG_GUARD_S):  # the new connection knows the subscription again
            while json.loads((await client.call_tool(subscriptions, {})).content[0].text) != [
                "test://watched-resource"
            ]:
                await anyio.sleep(0.05)
        hub = served.gateway.hub
        hub._notified("ref", types.PromptListChangedNotification())
        await notices.wait_count("notifications/prompts/list_changed", 2)
        hub._notified("ref", types.ResourceListChangedNotification())
        await notices.wait_count("notifications/resources/list_changed", 2)


async def test_authorizing_an_oauth_server_through_the_mcp_auth_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The "browser" answers at once and, in the background, follows the authorization server's
    # redirect to the loopback callback, as a person's browser would.
    browser = tmp_path / "browser"
    browser.write_text(
        f"#!{sys.executable}\n"
        "import os, sys, urllib.error, urllib.request\n"
        "if os.fork():\n    sys.exit(0)\n"
        "class Stop(urllib.request.HTTPRedirectHandler):\n"
        "    def redirect_request(self, *a, **k):\n        return None\n"
        "try:\n    urllib.request.build_opener(Stop).open(sys.argv[1])\n"
        "except urllib.error.HTTPError as e:\n    urllib.request.urlopen(e.headers['Location']).read()\n"
    )
    browser.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(browser))
    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})
    shown: list[Any] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        shown.append(params)
        return types.ElicitResult(action="accept")

    async with running_server() as auth_server:
        entry = {"url": auth_server.mcp_url, "auth": {"type": "oauth"}, "timeoutMs": 8000}
        config = write_config(tmp_path / "mcp.json", {"gh": entry})
        async with http_gateway(config) as served, agent(served, elicitation_callback=elicit) as client:
            assert served.gateway.manager.get("gh").state == "needs-auth"
            reply = await client.get_prompt("mcp_auth", {"server": "gh"})
            text = reply.messages[0].content.text
            assert "gh" in text and "ready" in text, text
            assert any(isinstance(p, types.ElicitRequestURLParams) and "/authorize" in p.url for p in shown)
            listing = await client.list_tools()
            whoami = next(n for n in names(listing) if n.startswith("mcp__gh__whoami_"))
            assert (await client.call_tool(whoami, {})).content[0].text == "you are authorized"
