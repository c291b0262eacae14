"""The CLI's client-only SDK import: real connections still work, and the SDK's shape it relies
on is pinned (a new SDK that takes more names from its server side fails here, not for users)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

from orbmcp.frontends import sdk_trim
from tests.servers.launch import http_server_process, server_cmd
from tests.timeouts import generous_servers

ROOT = Path(__file__).resolve().parents[2]


def _sdk_dir() -> Path:
    spec = find_spec("mcp")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def test_the_client_takes_only_the_placeholder_names_from_the_server_side() -> None:
    taken: dict[str, set[str]] = {}
    for module in ("client/client.py", "client/_memory.py"):
        tree = ast.parse((_sdk_dir() / module).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mcp.server"):
                taken.setdefault(node.module or "", set()).update(a.name for a in node.names)
    assert taken, "the SDK's client no longer imports its server side: the trim may go"
    for module, names in taken.items():
        assert module in sdk_trim.PLACEHOLDERS, module
        assert names <= set(sdk_trim.PLACEHOLDERS[module]), (module, names)


def test_nothing_is_replaced_once_the_sdk_is_loaded() -> None:
    import mcp  # noqa: F401 - the test process has it loaded, as an embedder would

    assert sdk_trim.install() is False
    assert not sdk_trim.installed()


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # A real `orbmcp` process: the trim happens only where orbmcp owns the process.
    return subprocess.run(
        [sys.executable, "-m", "orbmcp", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def test_stdio_and_streamable_http_calls_work_trimmed(tmp_path: Path) -> None:
    command, *argv = server_cmd("raw", "--answer-discover-error", "-32601")
    with http_server_process() as http:
        config = tmp_path / "mcp.json"
        servers = {"s": {"command": command, "args": argv}, "h": {"url": http.url}}
        config.write_text(json.dumps({"mcpServers": generous_servers(servers)}))
        env = {**os.environ, "ORB_AGENT_DIR": str(tmp_path / "agent"), "ORBMCP_CONFIG": str(config)}
        env["ORBMCP_NO_DAEMON"] = "1"
        probe = [
            "-c",
            "import runpy, sys; sys.argv = ['orbmcp', 'call', 's', 'echo', 'text=trim'];"
            "from orbmcp.fastpath.entry import run;"
            "code = run(sys.argv[1:], own_process=True);"
            "from orbmcp.frontends import sdk_trim;"
            "print('trimmed' if sdk_trim.installed() else 'full', 'mcp.server.lowlevel' in sys.modules);"
            "sys.exit(code)",
        ]
        trimmed = subprocess.run(
            [sys.executable, *probe],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        assert trimmed.returncode == 0, trimmed.stderr
        assert trimmed.stdout.splitlines()[-1] == "trimmed False"
        assert "trim" in trimmed.stdout
        stdio = _cli("call", "s", "echo", "text=over stdio", env=env)
        assert (stdio.returncode, stdio.stdout) == (0, "over stdio\n"), stdio.stderr
        over_http = _cli("call", "h", "echo", "text=over http", env=env)
        assert over_http.returncode == 0 and "over http" in over_http.stdout, over_http.stderr
