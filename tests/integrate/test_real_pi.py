"""The real pi coding agent (``@mariozechner/pi-coding-agent`` 0.73.1 from npm) with the extension
``orbmcp integrate pi`` writes: pi's own RPC mode (JSON lines, no model API key) lists the commands,
runs ``/mcp``, ``/mcp:stop NAME`` and a call whose server asks a question, answered through pi's
``extension_ui_request``/``extension_ui_response`` as a user answers pi's dialogs. Assertions are on
pi's own output events. pi's RPC has no completion request, so completion goes through pi's own
extension loader (``pi_complete.mjs``) to the extension's ``getArgumentCompletions``, which asks
orbmcp over the agent protocol.

Skipped, saying why, only where node/npm or the registry is missing.
"""

from __future__ import annotations

import json
import os
import queue
import select
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from orbmcp import environment
from orbmcp.core.processes.proctree import escaped_descendants, open_pidfd
from tests.cli import run_cli
from tests.servers.launch import server_cmd
from tests.servers.npm import npm_server
from tests.timeouts import LONG_GUARD_S, generous_servers

PI = ("@mariozechner/pi-coding-agent", "0.73.1", "dist/cli.js")
WAIT_S = LONG_GUARD_S  # a hang guard: pi's start, orbmcp's start, a server's start

Event = dict[str, Any]


class PiRpc:
    """``pi --mode rpc``: JSON lines in and out; every event kept, each wait bounded."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, stderr: Path) -> None:
        self._err = stderr.open("wb")
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err
        )
        self.events: list[Event] = []
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if isinstance(event, dict):
                self._queue.put(event)
        self._queue.put(None)

    def send(self, message: Event) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def expect(self, wanted: Callable[[Event], bool], what: str) -> Event:
        while True:
            try:
                event = self._queue.get(timeout=WAIT_S)
            except queue.Empty:
                raise AssertionError(
                    f"pi sent no {what} within {WAIT_S:g} s; events: {self.events[-10:]}"
                ) from None
            if event is None:
                raise AssertionError(f"pi ended before sending {what}; events: {self.events[-10:]}")
            self.events.append(event)
            if wanted(event):
                return event

    def request(self, message: Event) -> Event:
        self.send(message)
        return self.expect(
            lambda e: e.get("type") == "response" and e.get("id") == message["id"], message["id"]
        )

    def output_of(self, line: str) -> str:
        """The text of the orbmcp message pi shows for ``line``."""
        end = self.expect(
            lambda e: (
                e.get("type") == "message_end"
                and e["message"].get("customType") == "orbmcp"
                and e["message"].get("details", {}).get("line") == line
            ),
            f"output of {line}",
        )
        return "".join(b.get("text", "") for b in end["message"]["content"] if b.get("type") == "text")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=WAIT_S)
        self._reader.join(timeout=WAIT_S)
        self._err.close()


@pytest.fixture(scope="module")
def pi_cli() -> Path:
    installed, why = npm_server(PI)
    if installed is None:
        pytest.skip(f"pi from npm is not available: {why}")
    return Path(installed.args[0])


@pytest.fixture
def pi_session(
    pi_cli: Path, tmp_path: Path, _isolated_agent_dir: Path
) -> Iterator[tuple[PiRpc, dict[str, str], Path]]:
    agent_dir = tmp_path / "pi-agent"
    home = Path(os.environ[environment.HOME])
    env = {**os.environ, environment.PI_AGENT_DIR: str(agent_dir)}
    done = run_cli("integrate", "pi", env=env)
    assert done.code == 0, done.stderr
    assert (agent_dir / "extensions" / "orbmcp.ts").is_file()
    _isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    servers = {
        "everything": {"command": server_cmd("everything")[0], "args": server_cmd("everything")[1:]},
        "asks": {"command": server_cmd("asks")[0], "args": server_cmd("asks")[1:]},
    }
    (_isolated_agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": generous_servers(servers)}))
    project = tmp_path / "project"
    project.mkdir()
    env = {**env, "HOME": str(home), environment.NO_DAEMON: "1"}
    pi = PiRpc(
        ["node", str(pi_cli), "--mode", "rpc", "--no-session", "--offline"],
        env,
        project,
        tmp_path / "pi-stderr.log",
    )
    try:
        yield pi, env, agent_dir
    finally:
        pi.close()


def answer_as_a_user(pi: PiRpc, request: Event) -> None:
    """Answer one of pi's dialogs the way a person fills in the asks server's form."""
    title = request.get("title", "")
    method = request["method"]
    if method == "input":
        value = "Ada" if "\nName" in title else ""
        pi.send({"type": "extension_ui_response", "id": request["id"], "value": value})
    elif method == "select":
        options = request["options"]
        choice = "yes" if "\nAgree" in title else ("(skip)" if "(skip)" in options else options[0])
        pi.send({"type": "extension_ui_response", "id": request["id"], "value": choice})
    elif method == "confirm":
        pi.send({"type": "extension_ui_response", "id": request["id"], "confirmed": True})


def test_pi_runs_mcp_commands_through_the_integrated_extension(
    pi_session: tuple[PiRpc, dict[str, str], Path], pi_cli: Path, tmp_path: Path
) -> None:
    pi, env, agent_dir = pi_session

    listed = pi.request({"id": "c", "type": "get_commands"})
    commands = {c["name"]: c for c in listed["data"]["commands"]}
    for name in ("mcp", "mcp:start", "mcp:stop"):
        assert commands[name]["source"] == "extension", name
        assert commands[name]["sourceInfo"]["path"] == str(agent_dir / "extensions" / "orbmcp.ts")
        assert commands[name].get("description")

    pi.send({"id": "p1", "type": "prompt", "message": "/mcp"})
    overview = pi.output_of("/mcp")
    assert "everything" in overview and "asks" in overview

    pi.send({"id": "p2", "type": "prompt", "message": "/mcp:stop everything"})
    stopped = pi.output_of("/mcp:stop everything")
    assert "everything" in stopped and "stopped" in stopped.lower()

    pi.send({"id": "p3", "type": "prompt", "message": "/mcp call asks form"})
    asked: list[Event] = []
    while True:
        event = pi.expect(
            lambda e: (
                (
                    e.get("type") == "extension_ui_request"
                    and e.get("method") in ("input", "select", "confirm")
                )
                or (e.get("type") == "message_end" and e["message"].get("customType") == "orbmcp")
            ),
            "a dialog or the call's output",
        )
        if event["type"] == "message_end":
            break
        asked.append(event)
        answer_as_a_user(pi, event)
    assert asked[0]["method"] == "input" and asked[0]["title"].startswith("asks: Tell us about you")
    assert "\x1b" not in json.dumps(asked)
    text = "".join(b.get("text", "") for b in event["message"]["content"] if b.get("type") == "text")
    assert event["message"]["details"]["line"] == "/mcp call asks form"
    answered = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert answered["action"] == "accept"
    assert answered["content"]["name"] == "Ada" and answered["content"]["agree"] is True

    pi.send({"id": "p3b", "type": "prompt", "message": "/mcp call asks open_url"})
    consent = pi.expect(lambda e: e.get("type") == "extension_ui_request", "the URL consent dialog")
    assert consent["method"] == "confirm" and consent["title"] == "asks: Connect your account"
    assert "https://example.com/connect" in consent["message"]
    pi.send({"type": "extension_ui_response", "id": consent["id"], "confirmed": True})
    assert pi.output_of("/mcp call asks open_url").startswith("accept")

    pi.send({"id": "p4a", "type": "prompt", "message": "/mcp call everything image"})
    refused = pi.expect(
        lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "notify",
        "an error notification",
    )
    assert refused["notifyType"] == "error" and "was stopped" in refused["message"]
    pi.send({"id": "p4b", "type": "prompt", "message": "/mcp:start everything"})
    assert "everything" in pi.output_of("/mcp:start everything")
    pi.send({"id": "p4", "type": "prompt", "message": "/mcp call everything image"})
    end = pi.expect(
        lambda e: (
            e.get("type") == "message_end"
            and e["message"].get("details", {}).get("line") == "/mcp call everything image"
        ),
        "the image call's output",
    )
    images = [b for b in end["message"]["content"] if b.get("type") == "image"]
    assert images and images[0]["mimeType"] == "image/png" and images[0]["data"]

    pi.send({"id": "p5", "type": "prompt", "message": "/mcp call nosuchserver echo"})
    note = pi.expect(
        lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "notify",
        "an error notification",
    )
    assert note["notifyType"] == "error" and "nosuchserver" in note["message"]

    # Completion: pi replaces the whole argument with the value, so the extension rebuilds it.
    script = Path(__file__).with_name("pi_complete.mjs")
    dist = pi_cli.parent
    for command, prefix, expected in (
        ("mcp:stop", "ev", "everything"),
        ("mcp", "call asks fo", "call asks form"),
    ):
        done = subprocess.run(
            ["node", str(script), str(dist), str(agent_dir), command, prefix],
            cwd=tmp_path / "project",
            env=env,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        items = json.loads(done.stdout.strip().splitlines()[-1])["items"]
        assert expected in [i["value"] for i in items], items

    # Everything pi's session started (orbmcp slash --stdio and its servers) ends with pi.
    tree = escaped_descendants(pi.proc.pid, -1)
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ") for pid, _ in tree]
    assert any(b"orbmcp slash --stdio" in c for c in commands), commands
    assert any(b"asks.py" in c for c in commands), commands
    watched = [(pid, fd) for pid, _ in tree if (fd := open_pidfd(pid)) >= 0]  # -1: already gone
    pi.close()
    try:
        for pid, fd in watched:
            ready, _, _ = select.select([fd], [], [], WAIT_S)
            assert ready, f"process {pid} outlived pi by {WAIT_S:g} s"
    finally:
        for _, fd in watched:
            os.close(fd)
