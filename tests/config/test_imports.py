"""Loading a config must not import the connect-time modules (the config commands' budget): the
SDK, the HTTP stack, the terminal fronts. pydantic (and pydantic-settings) carry the config itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.config import write
from tests.core.live import isolated_env

REPO = Path(__file__).resolve().parents[2]
FORBIDDEN = [
    "mcp",
    "mcp_types",
    "httpx2",
    "anyio",
    "typer",
    "rich",
]

SCRIPT = """
import json, sys
from pathlib import Path
import orbmcp.config.loader
from orbmcp.config import trust
project = Path(sys.argv[1])
review = trust.describe_project(project)
trust.approve(Path(sys.argv[2]), project, review.digest)
config = orbmcp.config.loader.load_config(project=project)
loaded = sorted(config.servers)
print(json.dumps({"servers": loaded, "modules": [m for m in FORBIDDEN if m in sys.modules]}))
"""


def test_loading_config_imports_no_heavy_module(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    project = tmp_path / "project"
    write(
        agent / "mcp.json",
        {
            "settings": {"toolPrefix": "mcp"},
            "mcpServers": {
                "http": {"url": "https://h.test/mcp", "auth": {"type": "oauth", "clientId": "x"}},
                "sse": {"transport": "sse", "url": "https://h.test/sse", "headers": {"A": "${A:-b}"}},
            },
        },
    )
    write(agent / "settings.json", {"mcpServers": {"stdio": {"command": "srv", "env": {"K": "v"}}}})
    write(
        project / ".orb" / "mcp.json",
        {"mcpServers": {"local": {"command": "local"}, "stdio": {"enabled": False}}},
    )
    env = isolated_env({"ORB_AGENT_DIR": str(agent), "PYTHONPATH": str(REPO)})
    result = subprocess.run(
        [sys.executable, "-c", f"FORBIDDEN = {FORBIDDEN!r}\n{SCRIPT}", str(project), str(agent)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["servers"] == ["http", "local", "sse", "stdio"]
    assert report["modules"] == []


# A config-only command run through the program's own entry, and what it left imported: asyncio
# (pydantic-settings imports it for a method orbmcp never calls; ``config/deferred_asyncio.py``),
# the event loop, the SDK and the HTTP stack stay out; and of the entry models only those of the
# transports the config uses are built (``defer_build``).
COMMAND_SCRIPT = """
import json, sys
from orbmcp.__main__ import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
from orbmcp.config.sse_entry import SseEntry
from orbmcp.config.stdio_entry import StdioEntry
loaded = sorted({m.split(".")[0] for m in sys.modules})
built = {"stdio": StdioEntry.__pydantic_complete__, "sse": SseEntry.__pydantic_complete__}
print(json.dumps({"modules": loaded, "built": built}), file=sys.stderr)
"""
KEPT_OUT = ["asyncio", "anyio", "mcp", "httpx2", "psutil"]


@pytest.mark.parametrize(
    "argv",
    [
        ["config", "show"],
        ["config", "validate"],
        ["config", "paths"],
        ["add", "other", "--lazy", "--overwrite", "--", "true"],
        ["status"],  # one-shot, only a lazy server: nothing to connect, so no session either
        ["status", "--project", "."],  # through the Typer app, not the bare-status fast path
    ],
)
def test_config_only_commands_import_no_event_loop_and_build_only_the_models_they_use(
    tmp_path: Path, argv: list[str]
) -> None:
    config = write(tmp_path / "mcp.json", {"mcpServers": {"files": {"command": "true", "lifecycle": "lazy"}}})
    env = isolated_env(
        {"ORB_AGENT_DIR": str(tmp_path / "agent"), "ORBMCP_CONFIG": str(config)}
        | {"PYTHONPATH": str(REPO), "NO_COLOR": "1", "ORBMCP_NO_DAEMON": "1"}
    )
    result = subprocess.run(
        [sys.executable, "-c", COMMAND_SCRIPT, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    report = json.loads(result.stderr.strip().splitlines()[-1])
    assert [m for m in KEPT_OUT if m in report["modules"]] == []
    assert "pydantic_settings" in report["modules"]  # the settings are still pydantic-settings'
    assert report["built"] == {"stdio": True, "sse": False}


def test_pydantic_settings_reference_to_asyncio_reads_through_to_the_real_module() -> None:
    script = (
        "import sys, orbmcp.config.settings, pydantic_settings.main as m\n"
        "assert 'asyncio' not in sys.modules\n"
        "run = m.asyncio.run\n"
        "import asyncio\n"
        "assert run is asyncio.run and sys.modules['asyncio'] is asyncio\n"
        "assert type(asyncio).__name__ == 'module'\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(REPO)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
