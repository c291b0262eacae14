"""Loading a config must not import the connect-time modules (the config commands' budget): the
SDK, the HTTP stack, the terminal fronts. pydantic (and pydantic-settings) carry the config itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.config import write

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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORBMCP_", "ORB_", "PYTHON"))}
    env.update({"ORB_AGENT_DIR": str(agent), "PYTHONPATH": str(REPO)})
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
