"""The client side against real servers in-process: tests/servers/asks.py (a 2025-11-25 SDK server
that asks for everything) and tests/servers/tasks.py (task-augmented tools), over real stdio. Every
call test runs on both call paths (``call_path``: relayed raw, and the SDK's client session)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.views import server_detail
from orbmcp.config.loader import load_config
from orbmcp.core.capabilities import ClientFeatures, Interaction
from orbmcp.core.capabilities.elicitation import ElicitationAnswer, ElicitationRequest
from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
from orbmcp.core.capabilities.server_log import LogMessage
from orbmcp.core.session.manager import Manager
from orbmcp.core.tooling.calls import call_tool
from orbmcp.core.tooling.results import TextBlock, ToolResult
from orbmcp.errors import AuthError, ProtocolError
from orbmcp.render.plain import render_plain
from tests.core.live import FAST_GRACE_S, stdio_entry
from tests.core.paths import PathProbe
from tests.servers.asks import MARKER_ENV
from tests.timeouts import HANG_GUARD_S, generous_servers
from tests.ui import SilentUI

BOUND_S = HANG_GUARD_S


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Scripted(SilentUI):
    """A person who answers from a script, and what they were asked."""

    answers: list[ElicitationAnswer] = field(default_factory=list)
    samples: list[SamplingAnswer] = field(default_factory=list)
    asked: list[ElicitationRequest] = field(default_factory=list)
    sampled: list[SamplingRequest] = field(default_factory=list)
    logs: list[tuple[str, LogMessage]] = field(default_factory=list)
    progress_events: list[str | None] = field(default_factory=list)
    interactive = True

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else ElicitationAnswer("cancel")

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        self.sampled.append(request)
        return self.samples.pop(0) if self.samples else SamplingAnswer("reject", reason="script ran out")

    def server_log(self, server: str, message: LogMessage) -> None:
        self.logs.append((server, message))

    def progress(
        self, server: str, tool: str, progress: float, total: float | None, message: str | None
    ) -> None:
        self.progress_events.append(message)


class Sessions:
    persistent = True
    daemon_pid: int | None = None

    def __init__(self, manager: Manager) -> None:
        self._manager = manager

    async def manager(self, ctx: CommandContext) -> Manager:
        return self._manager


@dataclass
class World:
    home: Path
    project: Path
    markers: Path
    config: Path

    def write(self, servers: dict[str, Any], **settings: Any) -> None:
        body: dict[str, Any] = {"mcpServers": generous_servers(servers)}
        if settings:
            body["settings"] = settings
        self.config.write_text(json.dumps(body), encoding="utf-8")

    def load(self) -> Any:
        return load_config(project=self.project, config_file=self.config, global_dir=self.home / "agent")


@pytest.fixture
def world(tmp_path: Path) -> World:
    project, markers = tmp_path / "project", tmp_path / "markers"
    project.mkdir()
    markers.mkdir()
    w = World(tmp_path, project, markers, tmp_path / "mcp.json")
    w.write({"asks": asks(markers), "asks2": asks(markers), "tasks": stdio_entry("tasks")})
    return w


def asks(markers: Path, **extra: Any) -> dict[str, Any]:
    return stdio_entry("asks", env={MARKER_ENV: str(markers)}, **extra)


@asynccontextmanager
async def session(
    world: World, *, asker: Any = None, features: ClientFeatures | None = None
) -> AsyncIterator[Manager]:
    manager = Manager(world.load(), retries=False, asker=asker, features=features)
    manager.runtime.stdin_grace_s = manager.runtime.term_grace_s = FAST_GRACE_S
    async with manager:
        yield manager


async def wait_for(path: Path) -> None:
    with anyio.fail_after(BOUND_S):
        while not path.exists():
            await anyio.sleep(0.02)


def text_of(result: ToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextBlock))


def ctx_for(manager: Manager, ui: Any, *, emit: Any = None) -> CommandContext:
    ctx = CommandContext(ui=ui, sessions=Sessions(manager), emit=emit)
    ctx.set_config(manager.config)
    return ctx


# -- roots ---------------------------------------------------------------------------------------


async def test_roots_are_offered_only_where_configured_and_follow_the_settings(
    world: World, call_path: PathProbe
) -> None:
    world.write(
        {"asks": asks(world.markers), "own": asks(world.markers, roots=["~/own", "rel"])},
    )
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("asks")
            # Nothing configured: no roots capability at all (never the project or current dir).
            assert "roots" not in (sup.snap.advertised or {})
            assert server_detail(sup.cfg, manager.config, sup).roots is None
            with pytest.raises(ProtocolError):
                await call_tool(sup, "roots", {})
            own = await manager.ready("own")
            listed = text_of(await call_tool(own, "roots", {})).splitlines()
            assert listed == [(Path.home() / "own").as_uri(), (Path.cwd() / "rel").as_uri()]
            # The roots settings change under a live connection made without roots: the server is
            # connected anew (only a new connection offers the capability) and lists them.
            world.write(
                {"asks": asks(world.markers), "own": asks(world.markers, roots=["~/own", "rel"])},
                roots=[str(world.home / "a"), str(world.home / "b")],
            )
            await manager.apply_config(world.load())
            sup = await manager.ready("asks")
            assert text_of(await call_tool(sup, "roots", {})).splitlines() == [
                (world.home / "a").as_uri(),
                (world.home / "b").as_uri(),
            ]
            # A server with roots of its own was not told: its list did not change.
            assert not (world.markers / "roots-changed-1").exists()
            assert sup.snap.advertised == {
                "elicitation": {"form": {}, "url": {}},
                "roots": {"listChanged": True},
            }
            # The settings' roots change again: a connection offered roots is told, not renewed.
            world.write(
                {"asks": asks(world.markers), "own": asks(world.markers, roots=["~/own", "rel"])},
                roots=[str(world.home / "c")],
            )
            await manager.apply_config(world.load())
            await wait_for(world.markers / "roots-changed-1")
            assert manager.get("asks") is sup and sup.connected
            assert text_of(await call_tool(sup, "roots", {})) == (world.home / "c").as_uri()


# -- elicitation -----------------------------------------------------------------------------------


async def test_form_answers_reach_the_server_and_bad_ones_never_do(
    world: World, call_path: PathProbe
) -> None:
    person = Scripted(
        answers=[
            ElicitationAnswer("accept", {"name": "Ada", "agree": True, "count": 4, "tags": ["a"]}),
            ElicitationAnswer("accept", {"name": "Ada", "agree": True, "count": 99}),  # out of range
            ElicitationAnswer("decline"),
        ]
    )
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("asks")
            record: list[Interaction] = []
            got = json.loads(text_of(await call_tool(sup, "form", {}, asker=person, record=record)))
            assert got == {
                "action": "accept",
                "content": {"agree": True, "count": 4, "name": "Ada", "tags": ["a"]},
            }
            request = person.asked[0]
            assert request.server == "asks" and request.mode == "form"
            assert request.message == "Tell us about you\x1b[31m (escaped)"  # raw here; fronts escape
            assert [f.name for f in request.fields][:3] == ["name", "agree", "email"]
            got = json.loads(text_of(await call_tool(sup, "form", {}, asker=person, record=record)))
            assert got == {"action": "decline", "content": None}
            assert record[-1].reason is not None and "count: at most 10" in record[-1].reason
            got = json.loads(text_of(await call_tool(sup, "form", {}, asker=person, record=record)))
            assert got["action"] == "decline" and record[-1].reason is None
            # A form outside the subset is declined without asking anyone.
            assert text_of(await call_tool(sup, "odd_form", {}, asker=person, record=record)) == "decline"
            assert len(person.asked) == 3 and "cannot show this form" in (record[-1].reason or "")


async def test_nobody_waiting_means_the_session_front_or_a_decline(
    world: World, call_path: PathProbe
) -> None:
    with anyio.fail_after(BOUND_S):
        async with session(world, asker=None) as manager:  # a session daemon between commands
            sup = await manager.ready("asks")
            got = json.loads(text_of(await call_tool(sup, "form", {})))
            assert got["action"] == "decline"
        front = Scripted(answers=[ElicitationAnswer("cancel")])
        async with session(world, asker=front) as manager:  # the REPL's own terminal
            sup = await manager.ready("asks")
            assert json.loads(text_of(await call_tool(sup, "form", {})))["action"] == "cancel"
            assert front.asked


async def test_a_url_is_opened_only_with_consent_and_a_32042_call_is_retried_once(
    world: World, call_path: PathProbe
) -> None:
    person = Scripted(
        answers=[ElicitationAnswer("accept"), ElicitationAnswer("accept"), ElicitationAnswer("decline")]
    )
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("asks")
            record: list[Interaction] = []
            assert text_of(await call_tool(sup, "open_url", {}, asker=person, record=record)) == "accept"
            assert (person.asked[0].mode, person.asked[0].url, person.asked[0].retry) == (
                "url",
                "https://example.com/connect",
                False,
            )
            assert text_of(await call_tool(sup, "needs_url", {}, asker=person, record=record)) == "authorized"
            assert person.asked[1].retry and person.asked[1].url == "https://example.com/authorize"
            assert [i.kind for i in record] == ["url", "url"]
            other = await manager.ready("asks2")
            with pytest.raises(AuthError, match=r"needs you to open https://example\.com/authorize") as err:
                await call_tool(other, "needs_url", {}, asker=person, record=record)
            assert err.value.reason == "url_elicitation_required"


# -- sampling ------------------------------------------------------------------------------------


async def test_sampling_goes_to_the_command_the_front_or_nowhere(
    world: World, tmp_path: Path, call_path: PathProbe
) -> None:
    script = tmp_path / "model.py"
    script.write_text(
        "import json, sys\nreq = json.load(sys.stdin)['request']\n"
        "print(json.dumps({'content': {'type': 'text', 'text': 'said ' + req['systemPrompt']},"
        " 'model': 'cmd-model'}))\n",
        encoding="utf-8",
    )
    import sys

    world.write({"asks": asks(world.markers)}, sampling={"command": [sys.executable, str(script)]})
    host = Scripted(
        samples=[SamplingAnswer("result", {"content": {"type": "text", "text": "hi"}, "model": "host"})]
    )
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("asks")
            assert sup.snap.advertised is not None and "sampling" in sup.snap.advertised
            assert text_of(await call_tool(sup, "sample", {})) == "cmd-model: said You are a test."
            record: list[Interaction] = []
            assert text_of(await call_tool(sup, "sample", {}, asker=host, record=record)) == "host: hi"
            sampled = host.sampled[0]
            assert sampled.server == "asks" and sampled.command == (sys.executable, str(script))
            assert sampled.model_preferences == {"hints": [{"name": "tiny"}], "speedPriority": 1.0}
            refused = text_of(await call_tool(sup, "sample", {}, asker=host, record=record))
            assert refused.startswith("error: User rejected sampling request: script ran out")
            assert [(i.kind, i.action) for i in record] == [("sampling", "result"), ("sampling", "reject")]
        world.write({"asks": asks(world.markers)})  # no command, no host model: not even advertised
        async with session(world) as manager:
            sup = await manager.ready("asks")
            assert sup.snap.advertised is not None and "sampling" not in sup.snap.advertised
            assert text_of(await call_tool(sup, "sample", {}, asker=host)) == "error: Sampling not supported"


# -- logging, instructions, capabilities -----------------------------------------------------------------


async def test_log_messages_go_to_the_ring_and_to_verbose_callers(world: World, call_path: PathProbe) -> None:
    # On the raw path the answer comes from the reader straight, the logs sent before it through
    # the SDK's tasks: they must still be heard before the call returns (RawChannel.held).
    person = Scripted()
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("asks")
            await call_tool(sup, "log", {"message": "one"}, logs=lambda m: person.server_log("asks", m))
            assert [m.level for _, m in person.logs] == ["debug", "info", "warning"]
            assert "SECRET42" not in person.logs[2][1].text and "<redacted>" in person.logs[2][1].text
            await call_tool(sup, "log", {"message": "two"})  # nobody listening: the ring only
            assert len(person.logs) == 3
            tail = sup.stderr_tail()
            assert "[log debug] asks: debug one" in tail and '[log info] asks: {"said":"two"}' in tail
            warning = next(line for line in tail if line.startswith("[log warning]") and "two" in line)
            assert "SECRET42" not in warning and "\x1b" not in warning
            await call_tool(sup, "level", {}, log_level="debug")
            assert (world.markers / "level").read_text() == "debug"
            detail = server_detail(sup.cfg, manager.config, sup)
            body = detail.to_json()
            assert body["instructions"].startswith("Use the form tool") and "[log warning]" in str(
                body["recentOutput"]
            )
            assert body["capabilities"]["server"]["resources"] == {"subscribe": True, "listChanged": False}
            assert "roots" not in body["capabilities"]["advertised"] and body["roots"] is None
            text = render_plain(detail)
            assert "Server offers: logging, prompts, resources (subscribe), tools, completions" in text
            assert "orbmcp offers: elicitation (form, url)\n" in text and "Roots: none offered" in text
            assert "Instructions:\n  Use the form tool to test elicitation.\n  Never call touch" in text


async def test_a_host_without_elicitation_advertises_none(world: World, call_path: PathProbe) -> None:
    features = ClientFeatures(elicitation=False, roots=False)
    with anyio.fail_after(BOUND_S):
        async with session(world, features=features) as manager:
            sup = await manager.ready("asks")
            assert sup.snap.advertised == {}
            with pytest.raises(ProtocolError, match="Elicitation not supported"):
                await call_tool(sup, "form", {})


async def test_a_2026_server_asks_through_input_required_results(world: World) -> None:
    world.write({"m": stdio_entry("asks", "--modern")})
    person = Scripted(answers=[ElicitationAnswer("accept", {"ok": True})])
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("m")
            assert sup.snap.protocol_version == "2026-07-28"
            record: list[Interaction] = []
            result = await call_tool(sup, "modern_form", {}, asker=person, record=record)
            assert text_of(result) == 'accept {"ok": true}'
            assert person.asked[0].message == "Modern?" and record[0].action == "accept"


class Broken(Scripted):
    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        raise RuntimeError("the terminal went away")

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        if not self.sampled:
            self.sampled.append(request)
            return SamplingAnswer("result", {"content": {"type": "text", "text": "x"}})  # no model
        raise RuntimeError("the model went away")


async def test_a_failing_front_is_a_cancel_or_a_refusal_never_a_crash(
    world: World, tmp_path: Path, call_path: PathProbe
) -> None:
    import sys

    script = tmp_path / "m.py"
    script.write_text("print('{}')")
    world.write({"asks": asks(world.markers)}, sampling={"command": [sys.executable, str(script)]})
    front = Broken()
    with anyio.fail_after(BOUND_S):
        async with session(world) as manager:
            sup = await manager.ready("asks")
            record: list[Interaction] = []
            got = json.loads(text_of(await call_tool(sup, "form", {}, asker=front, record=record)))
            assert got["action"] == "cancel" and record[-1].reason == "orbmcp could not ask: RuntimeError"
            first = text_of(await call_tool(sup, "sample", {}, asker=front, record=record))
            assert first.startswith(
                "error: User rejected sampling request: the answer is not a sampling result"
            )
            second = text_of(await call_tool(sup, "sample", {}, asker=front, record=record))
            assert second.endswith("orbmcp could not ask: RuntimeError")
