"""What reading other clients' configs costs the fast paths: completion and ``config show``.

A home with the usual files (Cursor, Claude Desktop, VS Code, Codex) and a ``~/.claude.json`` of
Claude Code's size (several MB of project history around a few servers), timed with imports on
(the default) and with ``"imports": []``. Budget: imports add at most 25 % to ``orbmcp complete``.

    python -m bench.bench_imports [--repeat N] [--claude-mb MB]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 1.25


def _home(home: Path, claude_mb: float) -> None:
    def put(relative: str, data: object, text: str | None = None) -> None:
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text is not None else json.dumps(data))

    server = {"command": "npx", "args": ["-y", "some-mcp-server"], "env": {"TOKEN": "${TOKEN:-x}"}}
    put(".cursor/mcp.json", {"mcpServers": {f"cursor-{i}": server for i in range(5)}})
    put(".config/Claude/claude_desktop_config.json", {"mcpServers": {f"desk-{i}": server for i in range(5)}})
    vscode = {f"code-{i}": {"type": "stdio", **server} for i in range(3)}
    put(".config/Code/User/mcp.json", {"servers": vscode})
    put(".codex/config.toml", None, '[mcp_servers.docs]\ncommand = "uvx"\nargs = ["mcp-docs"]\n')
    entries = int(claude_mb * 1024 * 1024 / 230)  # ~230 bytes of JSON each
    history = [{"display": "x" * 200, "pastedContents": {}} for _ in range(entries)]
    projects = {f"/home/u/p{i}": {"history": history[i::50], "mcpServers": {}} for i in range(50)}
    put(".claude.json", {"numStartups": 1, "projects": projects, "mcpServers": {"shell": server}})


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_imports")
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "20")))
    parser.add_argument("--claude-mb", type=float, default=8.0)
    args, _ = parser.parse_known_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home, project = base / "home", base / "project"
        project.mkdir()
        _home(home, args.claude_mb)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ORBMCP_", "XDG_", "PI_", "CODEX_"))}
        env.update({"HOME": str(home), "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
        on = {**env, "ORB_AGENT_DIR": str(base / "on")}
        off = {**env, "ORB_AGENT_DIR": str(base / "off")}
        (base / "off").mkdir()
        (base / "off" / "mcp.json").write_text(json.dumps({"settings": {"imports": []}, "mcpServers": {}}))
        runs = {
            "complete, imports off": ([py, "-m", "orbmcp", "complete", "/mcp:start "], off),
            "complete, imports on": ([py, "-m", "orbmcp", "complete", "/mcp:start "], on),
            "config show, imports off": ([py, "-m", "orbmcp", "config", "show"], off),
            "config show, imports on": ([py, "-m", "orbmcp", "config", "show"], on),
        }
        for command, environ in runs.values():
            _time(command, environ, project)
        samples: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeat):
            for name, (command, environ) in runs.items():
                samples[name].append(_time(command, environ, project))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(f"~/.claude.json of {args.claude_mb:g} MB; median of {args.repeat} runs")
    for name, value in medians.items():
        print(f"{name:<28} {value * 1000:>8.1f} ms")
    ratio = medians["complete, imports on"] / medians["complete, imports off"]
    print(f"imports on / off (complete): {ratio:.2f}x (budget {BUDGET}x)")
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
