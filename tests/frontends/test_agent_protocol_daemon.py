"""``orbmcp slash --stdio`` with a session daemon running: its lines run in the daemon (the
daemon's counters and its server processes say so), the daemon's questions reach the agent as
``ask``, cancelling and leaving cancel the daemon's side, and without the daemon the agent's own
session takes over, said once."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.core.live import stdio_entry
from tests.daemon import Scoped, alive, daemon, scope_in, wait_for
from tests.frontends.test_agent_protocol import HANG_GUARD_S, Agent
from tests.servers.launch import NOT_FORKED

HANG_GUARD_MS = int(HANG_GUARD_S * 1000)
pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        return int(f.read().rpartition(")")[2].split()[1])


def ancestors(pid: int) -> set[int]:
    found = set()
    while pid > 1:
        pid = parent_of(pid)
        found.add(pid)
    return found


def configured(base: Path) -> Scoped:
    """A scope under ``base`` whose config runs server-everything and asks.py (their markers in
    ``base / "markers"``) and answers sampling with a fixed reply."""
    markers = base / "markers"
    markers.mkdir()
    s = scope_in(base)
    sampler = (
        "import json,sys; json.load(sys.stdin); "
        "print(json.dumps({'role':'assistant','model':'m1','content':{'type':'text','text':'hi'}}))"
    )
    s.write(
        {
            # a generous connect timeout: the first line starts these under the daemon, whatever the load
            "everything": stdio_entry(
                # its own process, not a fork: the test follows its ancestry to the daemon
                "everything",
                env={"ORB_TEST_MARKER_DIR": str(markers), **NOT_FORKED},
                timeoutMs=HANG_GUARD_MS,
            ),
            "asks": stdio_entry("asks", timeoutMs=HANG_GUARD_MS),
        },
        settings={"sampling": {"command": [sys.executable, "-c", sampler]}},
    )
    return s


@pytest.fixture
def scoped(tmp_path: Path) -> Scoped:
    """A scope of the test's own, for the tests whose subject is the daemon going away."""
    return configured(tmp_path)


@dataclass
class Shared:
    scoped: Scoped
    pid: int
    markers: Path

    def agent_requests(self) -> int:
        count: int = self.scoped.run("daemon", "status", "--json").json()["agentRequests"]
        return count


@pytest.fixture(scope="module")
def _shared_daemons() -> Iterator[list[Shared]]:
    held: list[Shared] = []
    yield held
    for shared in held:
        shared.scoped.stop()


@pytest.fixture
def running(
    _shared_daemons: list[Shared], tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Shared]:
    """A running daemon on ``configured``'s servers, shared by this module's tests whose subject
    is what the daemon serves an agent (not its start or stop): a daemon start and its SDK
    servers per test were most of this file's CPU. Counters are read as deltas. A test that fails
    stops it (what it left in flight must not reach the next test), and the next one starts
    another."""
    current = _shared_daemons[-1] if _shared_daemons else None
    if current is None or current.scoped.daemon_pid() != current.pid or not alive(current.pid):
        base = tmp_path_factory.mktemp("shared")
        scoped = configured(base)
        home = base / "home"
        home.mkdir()
        # One home for every client of the shared daemon (the autouse fixture gives each test its own).
        scoped.extra_env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
        current = Shared(scoped, scoped.start()["pid"], base / "markers")
        _shared_daemons.append(current)
    failed = request.session.testsfailed
    yield current
    if request.session.testsfailed != failed:
        current.scoped.stop()
        _shared_daemons.remove(current)


def agent_in(scoped: Scoped) -> Agent:
    return Agent(None, environ=scoped.env(), cwd=scoped.project)


def wait_file(path: Path) -> None:
    wait_for(path.exists, HANG_GUARD_S, f"{path} to appear")


def test_lines_and_questions_go_through_the_daemon(running: Shared) -> None:
    scoped, markers = running.scoped, running.markers
    for left in markers.iterdir():  # an earlier test's, on the shared daemon
        left.unlink()
    before = running.agent_requests()
    agent = agent_in(scoped)
    try:
        ready = agent.expect(lambda m: m["type"] == "ready")
        assert ready["daemon"] == running.pid
        agent.send({"type": "run", "id": "r1", "line": "/mcp call everything add a=2 b=3"})
        result = agent.reply("r1")
        assert (result["exit"], result["text"], result["error"]) == (0, "5", None), result["text"]
        assert result["content"] == [{"type": "text", "text": "5"}]
        status = scoped.run("daemon", "status", "--json").json()
        assert status["agentRequests"] == before + 1
        assert {"name": "everything", "state": "ready"} in status["servers"]

        # a server's form, asked of the agent with the agent's run id; answered through the daemon
        agent.send({"type": "run", "id": "f", "line": "/mcp call asks form"})
        ask = agent.expect(lambda m: m["type"] == "ask")
        assert (ask["kind"], ask["run"], ask["server"]) == ("form", "f", "asks")
        assert "\x1b" not in ask["message"] and ask["schema"]["required"] == ["name", "agree"]
        agent.send({"type": "answer", "id": ask["id"], "action": "accept", "content": {"agree": True}})
        again = agent.expect(lambda m: m["type"] == "ask")
        assert again["errors"] and again["run"] == "f"
        content = {"name": "Ann", "agree": True}
        agent.send({"type": "answer", "id": again["id"], "action": "accept", "content": content})
        assert '"name": "Ann"' in agent.reply("f")["text"]
        agent.send({"type": "run", "id": "u", "line": "/mcp call asks open_url"})
        ask = agent.expect(lambda m: m["type"] == "ask")
        assert (ask["kind"], ask["run"], ask["url"]) == ("url", "u", "https://example.com/connect")
        agent.send({"type": "answer", "id": ask["id"], "action": "decline"})
        assert agent.reply("u")["text"].splitlines()[0] == "decline"
        # sampling consent, then the configured command answers
        agent.send({"type": "run", "id": "s", "line": "/mcp call asks sample prompt=hello"})
        ask = agent.expect(lambda m: m["type"] == "ask")
        assert (ask["kind"], ask["run"]) == ("confirm", "s") and "user: hello" in ask["detail"]
        agent.send({"type": "answer", "id": ask["id"], "action": "accept"})
        assert agent.reply("s")["text"] == "m1: hi"
        # cancelling a run withdraws its question
        agent.send({"type": "run", "id": "f2", "line": "/mcp call asks form"})
        ask = agent.expect(lambda m: m["type"] == "ask")
        agent.send({"type": "cancel", "id": "f2"})
        agent.expect(lambda m: m == {"type": "ask_cancelled", "id": ask["id"]})
        assert agent.reply("f2")["exit"] == 130

        # completion through the daemon's live session
        agent.send({"type": "complete", "id": "c1", "line": "/mcp call everything ad"})
        values = [i["value"] for i in agent.reply("c1")["items"]]
        assert "add" in values

        # an error is the same envelope, spelled for the agent
        agent.send({"type": "run", "id": "bad", "line": "/mcp:start nope"})
        bad = agent.reply("bad")
        assert (bad["exit"], bad["error"]["reason"]) == (2, "unknown_server")

        # cancel: the daemon's call is cancelled (the server is the daemon's child)
        agent.send({"type": "run", "id": "long", "line": "/mcp call everything sleep seconds=120"})
        wait_file(markers / "sleep-started")
        assert running.pid in ancestors(int((markers / "sleep-started").read_text()))
        agent.send({"type": "cancel", "id": "long"})
        cancelled = agent.reply("long")
        assert cancelled["exit"] == 130 and cancelled["error"]["code"] == "interrupted"
        wait_file(markers / "sleep-cancelled")
        assert not [m for m in agent.seen if m["type"] == "notice"]  # never fell back

        # the agent leaving cancels its line in the daemon, and the daemon's servers stay
        for marker in ("sleep-started", "sleep-cancelled"):
            (markers / marker).unlink()
        agent.send({"type": "run", "id": "left", "line": "/mcp call everything sleep seconds=120"})
        wait_file(markers / "sleep-started")
        assert agent.close() == 0
        wait_file(markers / "sleep-cancelled")
    finally:
        agent.finish()
    status = scoped.run("daemon", "status", "--json").json()
    assert status["pid"] == running.pid and status["agentRequests"] == before + 9
    assert {"name": "everything", "state": "ready"} in status["servers"]


def test_without_the_daemon_the_agent_keeps_its_own_session_and_says_so_once(scoped: Scoped) -> None:
    with daemon(scoped) as info:
        agent = agent_in(scoped)
        try:
            assert agent.expect(lambda m: m["type"] == "ready")["daemon"] == info["pid"]
            agent.send({"type": "run", "id": "r1", "line": "/mcp call everything add a=1 b=1"})
            assert agent.reply("r1")["text"] == "2"
            scoped.stop()
            agent.send({"type": "run", "id": "r2", "line": "/mcp call everything add a=2 b=2"})
            notice = agent.expect(lambda m: m["type"] == "notice")
            assert notice["run"] == "r2" and "own session" in notice["message"]
            assert "/mcp daemon start" in notice["message"] and "orbmcp daemon" not in notice["message"]
            assert agent.reply("r2")["text"] == "4"
            agent.send({"type": "run", "id": "r3", "line": "/mcp call everything add a=3 b=3"})
            assert agent.reply("r3")["text"] == "6"
            agent.send({"type": "complete", "id": "c1", "line": "/mcp call everything ad"})
            assert "add" in [i["value"] for i in agent.reply("c1")["items"]]
            assert [m for m in agent.seen if m["type"] == "notice"] == []  # said once: taken above
        finally:
            agent.finish()


def test_no_daemon_keeps_the_protocol_in_its_own_process(running: Shared) -> None:
    scoped, before = running.scoped, running.agent_requests()
    agent = Agent(None, environ=scoped.env(ORBMCP_NO_DAEMON="1"), cwd=scoped.project)
    try:
        assert agent.expect(lambda m: m["type"] == "ready")["daemon"] is None
        agent.send({"type": "run", "id": "r1", "line": "/mcp call everything add a=1 b=1"})
        assert agent.reply("r1")["text"] == "2"
    finally:
        agent.finish()
    assert running.agent_requests() == before


def _frames(kind: str, **body: Any) -> dict[str, Any]:
    return {"t": kind, **body}


def test_frames_from_the_daemon_are_checked() -> None:
    from orbmcp.frontends.agent_via_daemon import ask_fields, envelope_from, items_from

    hostile = envelope_from(
        {
            "exit": 10**30,
            "text": "ok\x1b]52;c;AAAA\x07\x1b[2J",
            "error": {"code": "nope", "message": 5},
            "content": ["x", {"type": "text", "text": "t"}],
        }
    )
    assert hostile["exit"] == 70 and "\x1b" not in hostile["text"] and hostile["text"].startswith("ok")
    assert hostile["error"]["code"] == "internal" and hostile["content"] == [{"type": "text", "text": "t"}]
    assert envelope_from(None) == {"exit": 70, "text": "", "json": None, "error": None, "content": []}
    assert ask_fields("shell", {}) is None and ask_fields("form", {"schema": []}) is None
    assert ask_fields("url", {"url": "https://x/\x1b[2J"}) == {"url": "https://x/"}
    assert ask_fields("input", {}) == {"secret": True}
    assert ask_fields("confirm", {"detail": 3}) == {"detail": None}
    assert items_from([{"value": "a", "kind": "tool", "replace_from": 0}, {"value": 1}, "x"]) == [
        {"value": "a", "description": "", "kind": "tool", "replace_from": 0}
    ]


def test_a_question_of_one_of_two_runs_is_said_to_be_theirs_through_the_daemon(running: Shared) -> None:
    yes = {"action": "accept", "content": {"ok": True}}
    agent = agent_in(running.scoped)
    try:
        agent.expect(lambda m: m["type"] == "ready")
        agent.send({"type": "run", "id": "l1", "line": "/mcp call asks two_forms"})
        first = agent.expect(lambda m: m["type"] == "ask")
        assert (first["run"], first["message"]) == ("l1", "First?")
        agent.send({"type": "run", "id": "l2", "line": "/mcp call asks form"})
        other = agent.expect(lambda m: m["type"] == "ask")
        assert other["run"] is None and sorted(other["runs"]) == ["l1", "l2"]
        agent.send({"type": "answer", "id": first["id"], **yes})
        second = agent.expect(lambda m: m["type"] == "ask")
        assert second["message"] == "Second?" and second["run"] is None
        assert sorted(second["runs"]) == ["l1", "l2"]
        agent.send({"type": "answer", "id": second["id"], **yes})
        assert agent.reply("l1")["text"] == "accept accept"
        agent.send({"type": "cancel", "id": "l2"})
        assert agent.reply("l2")["exit"] == 130
    finally:
        agent.finish()


# -- a hostile daemon (this user's, verified): what its frames can do ------------------------------


def short_dir() -> Path:
    """A runtime dir whose socket paths stay under the OS limit (a worker's tmp_path may not):
    a longer one would put the socket in the shared ``/tmp/orbmcp-<uid>``."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="oad-", dir="/tmp"))
    _made.append(path)
    return path


_made: list[Path] = []


@pytest.fixture(autouse=True)
def _remove_short_dirs() -> Any:
    yield
    import shutil

    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)


class Asks:
    """The agent's side of a run, recorded."""

    agent = "agent-1"

    def __init__(self) -> None:
        self.asked: list[tuple[Any, ...]] = []
        self.posted: list[dict[str, Any]] = []

    async def ask(self, run: Any, kind: str, server: Any, message: str, **fields: Any) -> dict[str, Any]:
        self.asked.append((run, kind, server, message, fields))
        return {"action": "accept", "content": {"ok": True}, "extra": "dropped"}

    def post(self, message: dict[str, Any]) -> None:
        self.posted.append(message)


async def fake_daemon(tmp_path: Path, script: Any) -> tuple[Any, dict[str, str], Any]:
    """A listener where the link looks for this user's daemon, answering with ``script``."""
    import anyio

    from orbmcp.frontends.agent_via_daemon import DaemonLink
    from orbmcp.session import daemon_protocol as protocol
    from orbmcp.session.daemon_frames import FrameReader
    from orbmcp.session.daemon_scope import current_scope, socket_path

    runtime = short_dir()
    (runtime / "orbmcp").mkdir(mode=0o700)
    environ = {"XDG_RUNTIME_DIR": str(runtime), "ORB_AGENT_DIR": str(tmp_path / "agent")}
    path = socket_path(current_scope(project=tmp_path, environ=environ), environ)
    old = os.umask(0o177)
    try:
        listener = await anyio.create_unix_listener(path)
    finally:
        os.umask(old)
    received: list[dict[str, Any]] = []

    async def serve(stream: Any) -> None:
        async with stream:
            reader = FrameReader(stream)
            await reader.receive()  # hello
            await stream.send(
                protocol.encode({"t": "hello", "protocol": protocol.PROTOCOL_VERSION, "pid": 7})
            )
            request = await reader.receive()
            if request is None:
                return
            received.append(request)
            await script(stream, reader, received)

    link = DaemonLink(project=tmp_path, config_file=None, environ=environ)
    return listener, {"serve": serve, "received": received}, link  # type: ignore[return-value]


@pytest.mark.anyio
async def test_a_hostile_daemons_frames_are_checked_and_its_questions_relayed(tmp_path: Path) -> None:
    import anyio

    from orbmcp.session import daemon_protocol as protocol

    async def script(stream: Any, reader: Any, received: list[dict[str, Any]]) -> None:
        async def send(frame: dict[str, Any]) -> None:
            await stream.send(protocol.encode(frame))

        await send({"t": "post", "message": {"type": "notice", "level": "evil", "message": "hi\x1b[2J"}})
        await send({"t": "post", "message": {"type": "progress", "progress": "x"}})
        await send({"t": "post", "message": {"type": "progress", "progress": 1, "total": 2, "tool": "t"}})
        await send({"t": "post", "message": "junk"})
        await send({"t": "ask", "id": 1, "kind": "shell", "fields": {}})  # no such kind: answered cancel
        await send({"t": "ask", "id": "x", "kind": "url", "fields": {"url": "https://a"}})  # bad id: dropped
        await send(
            {"t": "ask", "id": 2, "kind": "form", "server": "s", "message": "m", "fields": {"schema": {}}}
        )
        await send({"t": "ask_cancelled", "id": 99})
        await send({"t": "mystery"})
        answers = [await reader.receive(), await reader.receive()]
        received.extend(a for a in answers if a is not None)
        await send({"t": "result", "envelope": {"exit": -1, "text": 5, "error": "no", "content": {}}})

    listener, fake, link = await fake_daemon(tmp_path, script)
    asks = Asks()
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, fake["serve"])
        assert await link.probe() == 7
        envelope = await link.request("run", "r1", "/mcp", tmp_path, asks)
        tg.cancel_scope.cancel()
    request = fake["received"][0]
    assert (request["t"], request["op"], request["line"], request["run"], request["agent"]) == (
        "agent",
        "run",
        "/mcp",
        "r1",
        "agent-1",
    )
    answers = {a["id"]: a["answer"] for a in fake["received"][1:]}
    assert answers == {1: {"action": "cancel"}, 2: {"action": "accept", "content": {"ok": True}}}
    assert asks.asked == [("r1", "form", "s", "m", {"schema": {}})]
    assert asks.posted[0] == {"type": "notice", "run": "r1", "level": "info", "message": "hi"}
    assert [p["type"] for p in asks.posted] == ["notice", "progress"]
    assert envelope == {"exit": 70, "text": "", "json": None, "error": _error_from_no(), "content": []}


def _error_from_no() -> dict[str, Any]:
    from orbmcp.frontends.agent_via_daemon import _error_from

    return _error_from("no")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("frames", "outcome"),
    [
        ([{"t": "local"}], "another configuration"),
        ([{"t": "error", "message": "unknown request type 'agent'"}], "refused"),
        ([], "closed the connection"),
        ([{"t": "post", "message": {}}], "daemon_gone"),
        ([{"t": "post", "message": {}}, {"t": "error", "message": "bad"}], "daemon_error"),
        ([{"t": "completions", "items": [{"value": "a", "kind": "tool", "replace_from": 1}, 3]}], "items"),
    ],
)
async def test_what_a_daemon_ends_a_line_with(tmp_path: Path, frames: list[Any], outcome: str) -> None:
    import anyio

    from orbmcp.errors import ConnectionFailed
    from orbmcp.frontends.agent_via_daemon import NoDaemon
    from orbmcp.session import daemon_protocol as protocol

    async def script(stream: Any, reader: Any, received: list[dict[str, Any]]) -> None:
        for frame in frames:
            await stream.send(protocol.encode(frame))

    listener, fake, link = await fake_daemon(tmp_path, script)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, fake["serve"])
        try:
            answer: Any = await link.request("complete", "c1", "/mcp ", None, Asks())
        except (NoDaemon, ConnectionFailed) as exc:
            answer = exc
        tg.cancel_scope.cancel()
    if outcome == "items":
        assert answer == {"items": [{"value": "a", "description": "", "kind": "tool", "replace_from": 1}]}
    elif outcome.startswith("daemon_"):
        assert isinstance(answer, ConnectionFailed) and answer.reason == outcome
    else:
        assert isinstance(answer, NoDaemon) and outcome in str(answer)


@pytest.mark.anyio
async def test_an_untrusted_or_absent_daemon_is_not_used(tmp_path: Path) -> None:
    from orbmcp.frontends.agent_via_daemon import DaemonLink, NoDaemon

    runtime = short_dir()
    environ = {"XDG_RUNTIME_DIR": str(runtime), "ORB_AGENT_DIR": str(tmp_path / "agent")}
    link = DaemonLink(project=tmp_path, config_file=None, environ=environ)
    assert await link.probe() is None
    with pytest.raises(NoDaemon, match="no session daemon runs"):
        await link.request("run", "r1", "/mcp", None, Asks())
    (runtime / "orbmcp").mkdir(mode=0o755)
    (runtime / "orbmcp").chmod(0o755)
    with pytest.raises(NoDaemon, match=r"not using the session daemon at .*open to group or others"):
        await link.request("run", "r1", "/mcp", None, Asks())
