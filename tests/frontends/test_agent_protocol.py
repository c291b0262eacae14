"""The agent protocol over a real ``orbmcp slash --stdio`` process and real test servers: one
transcript per message kind, hostile input, and what closing stdin leaves behind."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli import run_cli
from tests.core.test_lifecycle import gone
from tests.daemon import wait_for
from tests.frontends import PY, SERVERS, env_for, everything_entry
from tests.timeouts import HANG_GUARD_S, generous_servers


class Agent:
    """An agent at the other end of ``orbmcp slash --stdio``: writes requests, reads messages."""

    def __init__(
        self,
        config: Path | None,
        *,
        environ: dict[str, str] | None = None,
        cwd: Path | None = None,
        **env: str,
    ) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "orbmcp", "slash", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**environ, **env} if environ is not None else env_for(config, **env),
            cwd=cwd,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.messages.put(json.loads(line))  # every line orbmcp writes is one JSON object
        self.messages.put(None)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def expect(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message not taken yet that matches (the others stay for a later expect)."""
        for message in self.seen:
            if predicate(message):
                self.seen.remove(message)
                return message
        deadline = time.monotonic() + HANG_GUARD_S
        while True:
            message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            assert message is not None, f"orbmcp closed stdout; not taken: {self.seen}"
            if predicate(message):
                return message
            self.seen.append(message)

    def reply(self, rid: str) -> dict[str, Any]:
        return self.expect(lambda m: m.get("id") == rid and m["type"] != "ask")

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=HANG_GUARD_S)

    def finish(self) -> None:
        """Close stdin and let it exit (its coverage is written on the way out); kill it only
        when it does not."""
        if self.proc.poll() is None:
            try:
                self.close()
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=HANG_GUARD_S)


def write_config(directory: Path) -> Path:
    sampler = "import json,sys; json.load(sys.stdin); print(json.dumps({'role':'assistant','model':'m1','content':{'type':'text','text':'hi'}}))"
    servers = {
        "everything": everything_entry(),
        "asks": {"command": PY, "args": [str(SERVERS / "asks.py")]},
        "choices": {"command": PY, "args": [str(SERVERS / "choices.py")]},
        "modern": {"command": PY, "args": [str(SERVERS / "asks.py"), "--modern"], "timeoutMs": 30_000},
    }
    path = directory / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "settings": {"sampling": {"command": [PY, "-c", sampler]}},
                "mcpServers": generous_servers(servers),
            }
        )
    )
    return path


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path)


def start_agent(directory: Path) -> Agent:
    """``orbmcp slash --stdio`` on the config in ``directory``, its ready message taken."""
    markers = directory / "markers"
    markers.mkdir()
    a = Agent(write_config(directory), ORB_TEST_MARKER_DIR=str(markers))
    a.markers = markers  # type: ignore[attr-defined]
    ready = a.expect(lambda m: True)
    assert ready == {"type": "ready", "protocol": 1, "orbmcp": ready["orbmcp"], "daemon": None}
    return a


@pytest.fixture(scope="module")
def shared_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Agent]]:
    """One process (and its servers) for the tests whose subject is a message exchange, not the
    process: starting ``orbmcp slash --stdio`` and four servers per test was most of this file's
    CPU. Held in a list so that a test that fails replaces it: what a failed test left in flight
    (a question, a run) must not reach the next test."""
    held: list[Agent] = []
    yield held
    for a in held:
        a.finish()


@pytest.fixture
def agent(
    shared_agent: list[Agent], tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Agent]:
    if not shared_agent or shared_agent[-1].proc.poll() is not None:
        shared_agent.append(start_agent(tmp_path_factory.mktemp("agent")))
    current = shared_agent[-1]
    current.seen.clear()  # what earlier tests left untaken (e.g. later progress steps) is theirs
    failed = request.session.testsfailed
    yield current
    if request.session.testsfailed != failed:
        current.finish()
        shared_agent.remove(current)


@pytest.fixture
def fresh_agent(tmp_path: Path) -> Iterator[Agent]:
    """A process of the test's own, for tests whose subject is a run's cancel or the end of stdin."""
    a = start_agent(tmp_path)
    yield a
    a.finish()


def wait_for_file(path: Path) -> None:
    wait_for(path.exists, HANG_GUARD_S, f"{path} to appear")


# -- run / result ---------------------------------------------------------------------------------


def test_run_answers_with_the_result_envelope(agent: Agent) -> None:
    agent.send({"type": "run", "id": "r1", "line": "/mcp call everything add a=2 b=3"})
    result = agent.reply("r1")
    assert result["type"] == "result" and result["exit"] == 0 and result["error"] is None
    assert result["text"] == "5" and result["content"] == [{"type": "text", "text": "5"}]
    assert result["json"]["structuredContent"] == {"result": 5}


def test_images_come_as_content_blocks_and_errors_as_the_error_tree(agent: Agent) -> None:
    # two runs in flight at once; each result comes with its own id
    agent.send({"type": "run", "id": "img", "line": "/mcp:call everything image"})
    agent.send({"type": "run", "id": "bad", "line": "/mcp:start nope"})
    image = agent.reply("img")
    assert image["text"].startswith("[image image/png,") and "iVBOR" not in image["text"]
    assert image["content"][0]["type"] == "image" and image["content"][0]["data"].startswith("iVBOR")
    bad = agent.reply("bad")
    assert bad["exit"] == 2 and bad["json"] is None
    assert bad["error"] == {
        "code": "usage",
        "reason": "unknown_server",
        "message": "unknown server 'nope'",
        "hint": "known servers: asks, choices, everything, modern",
        "server": None,
    }
    agent.send({"type": "run", "id": "fail", "line": "/mcp call everything fail message=broken"})
    fail = agent.reply("fail")
    assert fail["exit"] == 1 and fail["error"]["code"] == "tool" and "broken" in fail["error"]["message"]


def test_a_read_and_a_prompt_carry_their_content(agent: Agent) -> None:
    agent.send({"type": "run", "id": "read", "line": "/mcp read everything mem://hello"})
    read = agent.reply("read")
    assert read["exit"] == 0, read
    assert read["content"][0]["type"] == "resource" and read["content"][0]["resource"]["uri"] == "mem://hello"
    agent.send({"type": "run", "id": "get", "line": "/mcp prompt everything greet name=Ann"})
    prompt = agent.reply("get")
    assert prompt["exit"] == 0, prompt
    assert prompt["content"][0]["type"] == "text" and "Ann" in prompt["content"][0]["text"]


def test_cancel_ends_a_run_with_130_and_cancels_the_servers_call(fresh_agent: Agent) -> None:
    agent = fresh_agent
    markers: Path = agent.markers  # type: ignore[attr-defined]
    agent.send({"type": "run", "id": "long", "line": "/mcp call everything sleep seconds=120"})
    wait_for_file(markers / "sleep-started")
    agent.send({"type": "cancel", "id": "long"})
    result = agent.reply("long")
    assert result["exit"] == 130 and result["error"]["code"] == "interrupted"
    wait_for_file(markers / "sleep-cancelled")
    # the process goes on serving
    agent.send({"type": "run", "id": "after", "line": "/mcp call everything add a=1 b=1"})
    assert agent.reply("after")["text"] == "2"


def test_progress_of_a_call_goes_to_the_agent(agent: Agent) -> None:
    agent.send({"type": "run", "id": "p", "line": "/mcp call everything slow steps=3 delay=0"})
    step = agent.expect(lambda m: m["type"] == "progress")
    assert step["run"] == "p" and step["server"] == "everything" and step["tool"] == "slow"
    assert agent.reply("p")["exit"] == 0


# -- asks -----------------------------------------------------------------------------------------


def test_a_form_is_asked_and_the_answer_reaches_the_server(agent: Agent) -> None:
    agent.send({"type": "run", "id": "f", "line": "/mcp call asks form"})
    ask = agent.expect(lambda m: m["type"] == "ask")
    assert (ask["kind"], ask["run"], ask["server"]) == ("form", "f", "asks")
    assert "\x1b" not in ask["message"] and ask["schema"]["required"] == ["name", "agree"]
    # an invalid answer is asked again with what was wrong
    agent.send({"type": "answer", "id": ask["id"], "action": "accept", "content": {"agree": True}})
    again = agent.expect(lambda m: m["type"] == "ask")
    assert again["errors"] and again["id"] != ask["id"]
    agent.send(
        {"type": "answer", "id": again["id"], "action": "accept", "content": {"name": "Ann", "agree": True}}
    )
    result = agent.reply("f")
    said = json.loads(result["text"])
    assert said["action"] == "accept" and said["content"]["name"] == "Ann"


def test_a_url_is_asked_and_declined(agent: Agent) -> None:
    agent.send({"type": "run", "id": "u", "line": "/mcp call asks open_url"})
    ask = agent.expect(lambda m: m["type"] == "ask")
    assert (ask["kind"], ask["url"]) == ("url", "https://example.com/connect")
    agent.send({"type": "answer", "id": ask["id"], "action": "decline"})
    assert agent.reply("u")["text"].splitlines()[0] == "decline"


def test_sampling_asks_for_consent_then_the_command_answers(agent: Agent) -> None:
    agent.send({"type": "run", "id": "s", "line": "/mcp call asks sample prompt=hello"})
    ask = agent.expect(lambda m: m["type"] == "ask")
    assert ask["kind"] == "confirm" and "user: hello" in ask["detail"]
    agent.send({"type": "answer", "id": ask["id"], "action": "accept"})
    assert agent.reply("s")["text"] == "m1: hi"
    agent.send({"type": "run", "id": "s2", "line": "/mcp call asks sample"})
    ask = agent.expect(lambda m: m["type"] == "ask")
    agent.send({"type": "answer", "id": ask["id"], "action": "decline"})
    assert "declined" in agent.reply("s2")["text"]


def test_cancelling_a_run_withdraws_its_question(agent: Agent) -> None:
    agent.send({"type": "run", "id": "f", "line": "/mcp call asks form"})
    ask = agent.expect(lambda m: m["type"] == "ask")
    agent.send({"type": "cancel", "id": "f"})
    agent.expect(lambda m: m == {"type": "ask_cancelled", "id": ask["id"]})
    assert agent.reply("f")["exit"] == 130
    agent.send({"type": "answer", "id": ask["id"], "action": "accept", "content": {}})
    late = agent.reply(ask["id"])
    assert late["type"] == "error" and late["error"]["reason"] == "unknown-id"


def test_a_question_carries_the_run_that_caused_it(agent: Agent) -> None:
    """Two runs wait on one server; the first one's next question arrives after the second began
    waiting. A 2026-07-28 server's question is asked from the calling run itself: it is that
    run's. A 2025-era server's question over stdio names no request: it is said to be one of the
    runs waiting, never labelled as the other run's."""
    yes = {"action": "accept", "content": {"ok": True}}
    agent.send({"type": "run", "id": "m1", "line": "/mcp call modern modern_two_forms"})
    first = agent.expect(lambda m: m["type"] == "ask")
    assert (first["run"], first["message"]) == ("m1", "Modern first?")
    agent.send({"type": "run", "id": "m2", "line": "/mcp call modern modern_form"})
    other = agent.expect(lambda m: m["type"] == "ask")
    assert (other["run"], other["message"]) == ("m2", "Modern?")
    agent.send({"type": "answer", "id": first["id"], **yes})
    second = agent.expect(lambda m: m["type"] == "ask")
    assert (second["run"], second["message"]) == ("m1", "Modern second?")
    agent.send({"type": "answer", "id": second["id"], **yes})
    assert agent.reply("m1")["text"] == "done"
    agent.send({"type": "answer", "id": other["id"], **yes})
    assert agent.reply("m2")["exit"] == 0

    agent.send({"type": "run", "id": "l1", "line": "/mcp call asks two_forms"})
    first = agent.expect(lambda m: m["type"] == "ask")
    assert (first["run"], first["message"]) == ("l1", "First?")
    agent.send({"type": "run", "id": "l2", "line": "/mcp call asks form"})
    other = agent.expect(lambda m: m["type"] == "ask")
    assert other["run"] is None and sorted(other["runs"]) == ["l1", "l2"]
    agent.send({"type": "answer", "id": first["id"], **yes})
    second = agent.expect(lambda m: m["type"] == "ask")
    assert second["message"] == "Second?" and second["run"] != "l2"
    assert second["run"] is None and sorted(second["runs"]) == ["l1", "l2"]
    agent.send({"type": "answer", "id": second["id"], **yes})
    assert agent.reply("l1")["text"] == "accept accept"
    agent.send({"type": "cancel", "id": "l2"})
    assert agent.reply("l2")["exit"] == 130


# -- complete / commands --------------------------------------------------------------------------


def test_complete_and_commands(agent: Agent) -> None:
    line = "/mcp call choices paint color=r"
    agent.send({"type": "complete", "id": "c1", "line": line})
    items = agent.reply("c1")["items"]
    assert items == [{"value": "color=red", "description": "", "kind": "value", "replace_from": 24}]
    assert line[: items[0]["replace_from"]] + items[0]["value"] == "/mcp call choices paint color=red"
    agent.send({"type": "complete", "id": "c2", "line": "/mcp call choices paint color=red "})
    names = {i["value"]: i for i in agent.reply("c2")["items"]}
    assert set(names) == {"glossy=", "coats="} and names["glossy="]["kind"] == "argument"
    agent.send({"type": "commands", "id": "l1"})
    commands = {c["name"]: c for c in agent.reply("l1")["commands"]}
    assert commands["mcp:start"]["args"] == [
        {"name": "server", "kind": "server", "required": True, "multiple": False}
    ]
    assert commands["mcp:start"]["usage"].startswith("/mcp:start <server>") and "mcp" in commands


# -- hostile input --------------------------------------------------------------------------------


def test_hostile_lines_get_errors_and_the_process_keeps_serving(agent: Agent) -> None:
    def error_for(data: dict[str, Any] | bytes) -> dict[str, Any]:
        agent.send(data)
        found = agent.expect(lambda m: m["type"] == "error")
        assert found["error"]["code"] == "usage"
        return found

    assert error_for(b"{not json\n")["error"]["reason"] == "bad-json"
    assert error_for(b"[1, 2]\n")["error"]["reason"] == "bad-json"
    assert (
        error_for(b'{"type": "run", "id": "big", "line": "' + b"x" * (2 << 20) + b'"}\n')["error"]["reason"]
        == "too-long"
    )
    unknown = error_for({"type": "frobnicate", "id": "z1"})
    assert (unknown["id"], unknown["error"]["reason"]) == ("z1", "unknown-type")
    assert error_for({"type": "run", "id": "m1"})["error"]["reason"] == "missing-field"
    assert error_for({"type": "run", "line": "/mcp"})["error"]["reason"] == "missing-field"
    assert error_for({"type": "answer", "id": "q999", "action": "accept"})["error"]["reason"] == "unknown-id"
    assert error_for({"type": "cancel", "id": "nothing"})["error"]["reason"] == "unknown-id"
    assert error_for(b"\xff\xfe\n")["error"]["reason"] == "bad-json"
    agent.send({"type": "run", "id": "ok", "line": "/mcp call everything add a=20 b=22"})
    assert agent.reply("ok")["text"] == "42"


def test_closing_stdin_cancels_runs_and_leaves_no_server_behind(fresh_agent: Agent) -> None:
    agent = fresh_agent
    markers: Path = agent.markers  # type: ignore[attr-defined]
    agent.send({"type": "run", "id": "long", "line": "/mcp call everything sleep seconds=120"})
    wait_for_file(markers / "sleep-started")
    server_pid = int((markers / "sleep-started").read_text())
    assert agent.close() == 0
    assert agent.reply("long")["exit"] == 130
    wait_for(lambda: gone(server_pid), HANG_GUARD_S, "the server to end with orbmcp slash --stdio")


# -- one-shot equivalents (in-process: their subject is the answer, not the process) ---------------


def test_slash_list_json_is_the_commands_answer(config: Path) -> None:
    r = run_cli("slash", "--list", "--json", env=env_for(config))
    assert r.code == 0, r.stderr
    names = [c["name"] for c in r.json()["commands"]]
    assert names[0] == "mcp" and {"mcp:start", "mcp:stop", "mcp:call", "mcp:config"} <= set(names)
    assert "mcp:trust" not in names and "mcp:serve" not in names  # never slash commands


def test_complete_json_completes_tool_arguments(config: Path) -> None:
    def complete(line: str) -> list[dict[str, Any]]:
        r = run_cli("complete", "--json", line, env=env_for(config))
        assert r.code == 0, r.stderr
        items: list[dict[str, Any]] = r.json()["items"]
        return items

    names = complete("/mcp call everything add ")
    assert [(i["value"], i["kind"], i["description"]) for i in names] == [
        ("a=", "argument", "integer (required)"),
        ("b=", "argument", "integer (required)"),
    ]
    assert [i["value"] for i in complete("/mcp call everything add a=1 ")] == ["b="]
    assert [i["value"] for i in complete("orbmcp call choices paint glossy=")] == [
        "glossy=false",
        "glossy=true",
    ]
    assert [i["value"] for i in complete("/mcp call choices paint color=")] == [
        "color=blue",
        "color=green",
        "color=red",
    ]
    assert complete("/mcp call choices paint coats=") == []  # a number names no values
