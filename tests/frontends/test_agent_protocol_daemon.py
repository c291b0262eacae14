"""``orbmcp slash --stdio`` with a session daemon running: its lines run in the daemon (the
daemon's counters and its server processes say so), the daemon's questions reach the agent as
``ask``, cancelling and leaving cancel the daemon's side, and without the daemon the agent's own
session takes over, said once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.core.live import stdio_entry
from tests.daemon import Scoped, daemon, wait_for
from tests.frontends.test_agent_protocol import HANG_GUARD_S, Agent

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


@pytest.fixture
def scoped(tmp_path: Path) -> Scoped:
    project = tmp_path / "project"
    project.mkdir()
    markers = tmp_path / "markers"
    markers.mkdir()
    s = Scoped(home=tmp_path / "agent", project=project)
    s.write(
        {
            "everything": stdio_entry("everything", env={"ORB_TEST_MARKER_DIR": str(markers)}),
            "asks": stdio_entry("asks"),
        }
    )
    return s


def agent_in(scoped: Scoped) -> Agent:
    return Agent(None, environ=scoped.env(), cwd=scoped.project)


def wait_file(path: Path) -> None:
    wait_for(path.exists, HANG_GUARD_S, f"{path} to appear")


def test_lines_and_questions_go_through_the_daemon(scoped: Scoped, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    with daemon(scoped) as info:
        agent = agent_in(scoped)
        try:
            ready = agent.expect(lambda m: m["type"] == "ready")
            assert ready["daemon"] == info["pid"]
            agent.send({"type": "run", "id": "r1", "line": "/mcp call everything add a=2 b=3"})
            result = agent.reply("r1")
            assert (result["exit"], result["text"], result["error"]) == (0, "5", None)
            assert result["content"] == [{"type": "text", "text": "5"}]
            status = scoped.run("daemon", "status", "--json").json()
            assert status["agentRequests"] == 1
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
            assert info["pid"] in ancestors(int((markers / "sleep-started").read_text()))
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
        assert status["pid"] == info["pid"] and status["agentRequests"] == 8
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


def test_no_daemon_keeps_the_protocol_in_its_own_process(scoped: Scoped) -> None:
    with daemon(scoped):
        agent = Agent(None, environ=scoped.env(ORBMCP_NO_DAEMON="1"), cwd=scoped.project)
        try:
            assert agent.expect(lambda m: m["type"] == "ready")["daemon"] is None
            agent.send({"type": "run", "id": "r1", "line": "/mcp call everything add a=1 b=1"})
            assert agent.reply("r1")["text"] == "2"
        finally:
            agent.finish()
        assert scoped.run("daemon", "status", "--json").json()["agentRequests"] == 0


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


def test_a_question_of_one_of_two_runs_is_said_to_be_theirs_through_the_daemon(scoped: Scoped) -> None:
    yes = {"action": "accept", "content": {"ok": True}}
    with daemon(scoped):
        agent = agent_in(scoped)
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
