"""The client side against the real ``@modelcontextprotocol/server-everything`` from npm.

It hides tools from a client that advertises too little (sampling, elicitation, roots) and runs
``simulate-research-query`` only as a task, asking a question when the topic is ambiguous: what
orbmcp advertises and answers must make all of it work. Installed into the npm cache as the docs
examples' server is (``tests/servers/npm.py``); skipped, saying why, without npm or its registry.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.servers.npm import npm_server
from tests.timeouts import generous_servers

pytestmark = pytest.mark.slow

# Answers a sampling request the way a model bridge would: the result JSON on stdout.
BRIDGE = """\
import json, sys
request = json.load(sys.stdin)
print(json.dumps({"role": "assistant", "content": {"type": "text", "text": "answer for " + request["server"]},
                  "model": "bridge", "stopReason": "endTurn"}))
"""


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment whose global config runs server-everything with a sampling command."""
    server, why = npm_server()
    if server is None:
        pytest.skip(f"server-everything from npm is not available: {why}")
    bridge = tmp_path / "bridge.py"
    bridge.write_text(BRIDGE, encoding="utf-8")
    agent = tmp_path / "agent"
    agent.mkdir()
    config = {
        "settings": {
            "sampling": {"command": [sys.executable, str(bridge)]},
            "roots": [str(tmp_path / "project")],  # roots are offered only where configured
        },
        "mcpServers": generous_servers({"everything": server.entry()}),
    }
    (agent / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ORB_AGENT_DIR": str(agent), "CI": "true"}


def test_everything_it_hides_from_lesser_clients_works(home: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    listed = run_cli("--no-daemon", "tools", "everything", "--json", env=home, cwd=project)
    assert listed.code == 0, listed.stderr
    names = {tool["name"] for tool in json.loads(listed.stdout)}
    # 13 without client capabilities; sampling, elicitation (form and URL) and roots add four.
    assert len(names) == 17
    assert {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} <= names

    status = json.loads(
        run_cli("--no-daemon", "status", "everything", "--json", env=home, cwd=project).stdout
    )
    assert set(status["capabilities"]["advertised"]) == {"elicitation", "roots", "sampling"}
    assert "tasks" in status["capabilities"]["server"]
    assert "Everything Server" in status["instructions"]

    sampled = run_cli("--no-daemon", "call", "everything", "trigger-sampling-request", "prompt=hi", env=home)
    assert sampled.code == 0 and "answer for everything" in sampled.stdout, sampled.stderr

    roots = run_cli("--no-daemon", "call", "everything", "get-roots-list", env=home, cwd=project)
    assert roots.code == 0 and project.as_uri() in roots.stdout, roots.stderr


def test_simulate_research_query_runs_as_a_task_and_its_question_is_declined_without_a_person(
    home: dict[str, str],
) -> None:
    plain = run_cli("--no-daemon", "call", "everything", "simulate-research-query", "topic=mcp", env=home)
    assert plain.code == 0 and "Research Report: mcp" in plain.stdout, plain.stderr

    asked = run_cli(
        "--no-daemon",
        "--json",
        "call",
        "everything",
        "simulate-research-query",
        "topic=mcp",
        "ambiguous=true",
        env=home,
    )
    assert asked.code == 0, asked.stderr
    result = json.loads(asked.stdout)
    assert "User declined" in result["content"][0]["text"]
    assert [(i["kind"], i["action"]) for i in result["interactions"]] == [("elicitation", "decline")]


def test_completable_prompt_values_come_from_the_server(home: dict[str, str]) -> None:
    done = run_cli(
        "--no-daemon", "complete", "orbmcp prompt everything completable-prompt department=E", env=home
    )
    assert done.code == 0 and done.stdout.split() == ["department=Engineering"], done.stderr


def test_a_person_answers_the_research_querys_question_on_a_terminal(home: dict[str, str]) -> None:
    from tests.frontends import PY, Pty, env_for

    env = env_for(None, **{k: v for k, v in home.items() if k != "CI"})
    env.pop("CI", None)
    argv = [PY, "-m", "orbmcp", "--no-daemon", "call", "everything", "simulate-research-query", "topic=mcp"]
    pty = Pty([*argv, "ambiguous=true"], env)
    try:
        pty.read_until(b"[Y]es, [d]ecline, [c]ancel: ", timeout=60)
        pty.send(b"y\n")
        pty.read_until(b"> ", timeout=30)
        pty.send(b"1\n")  # the first interpretation the server offers
        pty.read_until(b"Send? [Y/n]: ", timeout=30)
        pty.send(b"\n")
        code = pty.wait(60)
    finally:
        pty.close()
    assert code == 0
    assert b"Clarification**: technical" in pty.buffer  # the task went on with the person's answer
