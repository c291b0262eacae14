"""Inside an agent every error and hint names the slash form (``/mcp:auth oa``), never the shell
form (``orbmcp auth oa``): lines that fail in many ways, through ``slash --stdio``, ``slash
--json`` and ``orbmcp slash``. Commands an agent cannot run (``trust``, ``add``, ...: the
``NOT_SLASH`` table) keep the shell spelling: that is where they run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from orbmcp.commands.complete import NOT_SLASH
from orbmcp.commands.table import COMMANDS
from tests.cli import run_cli
from tests.frontends import PY, SERVERS, env_for, everything_entry
from tests.frontends.test_agent_protocol import HANG_GUARD_S, Agent

COMMAND_WORDS = {spec.path[0] for spec in COMMANDS}
LINES = [
    "/mcp:start nope",
    "/mcp frobnicate",
    "/mcp call everything",
    "/mcp call everything nosuchtool",
    "/mcp call everything add a=x b=1",
    "/mcp call everything fail message=broken",
    "/mcp read everything mem://nope",
    "/mcp prompt everything nope",
    "/mcp:start silent",
    "/mcp silent",
    "/mcp tools silent",
    "/mcp:start exits",
    "/mcp exits",
    "/mcp:auth web",
    "/mcp:start web",
    "/mcp lock nope",
    "/mcp call everything add --stdio x",
    "/mcp config validate",
    "/mcp daemon stop",
    "/mcp:stop nope",
    "/mcp",
]


def shell_spellings(text: str) -> list[str]:
    """Every ``orbmcp COMMAND ...`` in ``text`` naming a command an agent can run as ``/mcp``."""
    leaks = []
    for match in re.finditer(r"\borbmcp ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)", text):
        words = tuple(match.group(1).split())
        if words[0] not in COMMAND_WORDS:
            continue  # prose: "orbmcp reconnects it"
        if any(words[: len(path)] == path for path in NOT_SLASH):
            continue
        leaks.append(match.group(0))
    return leaks


@pytest.fixture
def config(tmp_path: Path) -> Path:
    servers: dict[str, Any] = {
        "everything": everything_entry(timeoutMs=int(HANG_GUARD_S * 1000)),
        "silent": {"command": PY, "args": ["-c", "import time; time.sleep(120)"], "timeoutMs": 1500},
        "exits": {"command": PY, "args": ["-c", "import sys; sys.exit(3)"]},
        "web": {"url": "http://127.0.0.1:9/mcp", "auth": {"type": "oauth"}},
        "asks": {"command": PY, "args": [str(SERVERS / "asks.py")], "timeoutMs": int(HANG_GUARD_S * 1000)},
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_the_agent_protocol_never_names_a_shell_command(config: Path) -> None:
    agent = Agent(config, ORBMCP_NO_DAEMON="1")
    try:
        agent.expect(lambda m: m["type"] == "ready")
        for n, line in enumerate(LINES):
            agent.send({"type": "run", "id": f"r{n}", "line": line})
        said: dict[str, str] = {}
        for n, line in enumerate(LINES):
            result = agent.reply(f"r{n}")
            error = result["error"] or {}
            said[line] = "\n".join([result["text"], error.get("message") or "", error.get("hint") or ""])
        failed = [line for line in LINES if said[line] and "exit" in said[line]]
        assert failed  # the servers that fail were reached (their hints are among what is checked)
    finally:
        agent.finish()
    notices = " ".join(m.get("message", "") for m in agent.seen if m["type"] == "notice")
    leaks = {line: shell_spellings(text) for line, text in said.items() if shell_spellings(text)}
    assert leaks == {} and shell_spellings(notices) == []
    assert "/mcp" in said["/mcp:start silent"] or "/mcp" in said["/mcp silent"]


@pytest.mark.parametrize("line", ["/mcp:start exits", "/mcp tools silent", "/mcp:auth web"])
def test_slash_json_and_plain_never_name_a_shell_command(config: Path, line: str) -> None:
    # In-process: what the command prints is the subject, not the process.
    for argv in (["slash", "--json", line], ["slash", line]):
        r = run_cli("--no-daemon", *argv, env=env_for(config))
        assert r.code != 0
        assert shell_spellings(r.stdout + r.stderr) == [], (argv, r.stdout, r.stderr)
