"""The client side of MCP for an agent host: its UI answers elicitations (checked like the
terminal's), its model answers sampling, slash lines in the agent ask through it, and capabilities
are advertised only when the host can honour them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
from orbmcp.core.tooling.results import TextBlock, ToolResult
from orbmcp.host import Elicits, McpExtension, Samples
from tests.core.live import stdio_entry
from tests.host.example_host import ExampleHost
from tests.servers.asks import MARKER_ENV
from tests.timeouts import HANG_GUARD_S, generous_servers

BOUND_S = HANG_GUARD_S


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class AgentUI(ExampleHost):
    """An example host whose UI answers forms from a script and whose model says "sure"."""

    def __init__(self, answers: list[ElicitationAnswer], **kwargs: Any) -> None:
        super().__init__(interactive=True, **kwargs)
        self.answers = list(answers)  # type: ignore[assignment]
        self.asked: list[ElicitationRequest] = []
        self.sampled: list[SamplingRequest] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else ElicitationAnswer("cancel")  # type: ignore[attr-defined]

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        self.sampled.append(request)
        return SamplingAnswer("result", {"content": {"type": "text", "text": "sure"}, "model": "agent-model"})


def write(path: Path, servers: Mapping[str, Any], **settings: Any) -> Path:
    body: dict[str, Any] = {"mcpServers": generous_servers(servers)}
    if settings:
        body["settings"] = settings
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def text(result: ToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextBlock))


def tool(host: ExampleHost, name: str) -> Any:
    return next(t for t in host.tools.values() if t.tool_name == name)


async def test_the_hosts_ui_answers_and_its_answers_are_checked(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    cfg = write(tmp_path / "mcp.json", {"asks": stdio_entry("asks", env={MARKER_ENV: str(markers)})})
    host = AgentUI(
        [
            ElicitationAnswer("accept", {"name": "Ada", "agree": "yes"}),  # invalid: asked again
            ElicitationAnswer("accept", {"name": "Ada", "agree": True, "color": "red"}),
        ]
    )
    assert isinstance(host, Elicits) and isinstance(host, Samples)
    with anyio.fail_after(BOUND_S):
        async with McpExtension(host, config_file=cfg) as ext:
            got = json.loads(text(await tool(host, "form").call({})))
            assert got == {"action": "accept", "content": {"agree": True, "color": "red", "name": "Ada"}}
            first, second = host.asked
            assert first.errors == () and second.errors == ("agree: not true or false",)
            assert text(await tool(host, "sample").call({})) == "agent-model: sure"
            assert host.sampled[0].system_prompt == "You are a test."
            assert ext.instructions()["asks"].startswith("Use the form tool")
            sup = ext._manager.supervisors["asks"]  # type: ignore[union-attr]
            # No project named by the agent and no roots configured: no roots capability.
            assert sup.snap.advertised == {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
            # A slash line inside the agent asks through the same UI.
            host.answers = [ElicitationAnswer("decline")]  # type: ignore[assignment]
            reply = await ext.slash_reply("/mcp call asks form")
            assert reply.exit_code == 0 and '"action": "decline"' in reply.text
            assert len(host.asked) == 3


async def test_a_host_that_cannot_ask_advertises_nothing_it_cannot_honour(tmp_path: Path) -> None:
    cfg = write(tmp_path / "mcp.json", {"asks": stdio_entry("asks")})
    host = ExampleHost(interactive=True)
    assert not isinstance(host, Elicits)
    with anyio.fail_after(BOUND_S):
        async with McpExtension(host, config_file=cfg) as ext:
            sup = ext._manager.supervisors["asks"]  # type: ignore[union-attr]
            assert sup.snap.advertised == {}
            assert "asks" in ext.instructions()


async def test_moving_to_another_project_tells_servers_their_roots_changed(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    cfg = write(tmp_path / "mcp.json", {"asks": stdio_entry("asks", env={MARKER_ENV: str(markers)})})
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    host = AgentUI([])
    with anyio.fail_after(BOUND_S):
        async with McpExtension(host, project=first, config_file=cfg) as ext:
            assert text(await tool(host, "roots").call({})) == first.as_uri()
            await ext.set_project(second)
            with anyio.fail_after(BOUND_S):
                while not (markers / "roots-changed-1").exists():
                    await anyio.sleep(0.02)
            assert text(await tool(host, "roots").call({})) == second.as_uri()
            assert ext.project == second


class Faulty(ExampleHost):
    """A host whose callbacks raise or answer nonsense."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        raise RuntimeError("the UI crashed")

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        return "not an answer"  # type: ignore[return-value]


class Wrong(ExampleHost):
    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        return {"action": "accept"}  # type: ignore[return-value]

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        raise RuntimeError("the model is down")


async def test_a_faulty_host_never_breaks_orbmcp(tmp_path: Path) -> None:
    from orbmcp.core.capabilities.elicitation import parse_form
    from orbmcp.host.ui import HostUI
    from tests.servers.asks import FORM_SCHEMA

    form = ElicitationRequest("s", "form", "m", parse_form(FORM_SCHEMA))
    sampling = SamplingRequest("s", {"messages": []})
    faulty, wrong = HostUI(Faulty()), HostUI(Wrong())
    assert (await faulty.elicit(form)) == ElicitationAnswer("cancel", reason="the agent host failed to ask")
    assert (await wrong.elicit(form)).reason == "the agent host gave no answer"
    assert (await faulty.sample(sampling)).reason == "the agent host gave no sampling answer"
    assert (await wrong.sample(sampling)).reason == "the agent host failed to sample"
    always_wrong = AgentUI([ElicitationAnswer("accept", {"agree": 1})] * 3)
    answer = await HostUI(always_wrong).elicit(form)
    assert answer.action == "cancel" and answer.reason is not None and "name: required" in answer.reason
    assert len(always_wrong.asked) == 3
    plain = HostUI(ExampleHost(interactive=True))
    assert (await plain.elicit(form)).reason == "the agent host cannot ask its user (no Elicits)"
    assert (await plain.sample(sampling)).reason == "no sampling command is configured"
    plain.server_log("s", None)  # type: ignore[arg-type]  # a host reads logs in the status view


async def test_a_host_without_a_model_uses_the_sampling_command(tmp_path: Path) -> None:
    import sys

    from orbmcp.host.ui import HostUI

    script = tmp_path / "m.py"
    script.write_text('print(\'{"content": {"type": "text", "text": "ok"}, "model": "cmd"}\')')
    host = ExampleHost(interactive=False)
    answer = await HostUI(host).sample(
        SamplingRequest("srv", {"messages": []}, (sys.executable, str(script)))
    )
    assert answer.action == "result" and answer.result is not None and answer.result["model"] == "cmd"
    assert host.notifications == [
        ("info", "MCP server 'srv' asked for a model's answer: running the sampling command")
    ]
