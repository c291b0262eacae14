"""Cold one-shot commands, side by side in one run: orbmcp, a bare ``mcp`` SDK script, mcporter.

(a) One-shot ``echo`` with no daemon: orbmcp ``call`` (installed, not editable: bench/installed.py),
    a bare SDK script (spawn, connect, list, call, exit) and mcporter's cold ``call`` (npm
    ``mcporter``, no keep-alive), alternately, on ``@modelcontextprotocol/server-everything``
    (npm; skipped with a note where npm is missing) and on the repo's Python test server.
    Targets: orbmcp <= 0.9x mcporter and <= 0.8x the bare SDK.
(b) The start-up paths against ``python -c "import typer, rich.console"``: ``--help``,
    ``--version`` and ``complete`` <= 1.3x; the config-only ones (an empty ``status``,
    ``config show``, which load the config's models) <= 3x (bench/bench_startup.py's budgets).

    python -m bench.bench_cold [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench.bench_daemon import _timed
from bench.bench_startup import BUDGET as FAST_BUDGET
from bench.bench_startup import CONFIG_BUDGET

ROOT = Path(__file__).resolve().parent.parent
MCPORTER_BUDGET = 0.9
SDK_BUDGET = 0.8
CONFIG_ONLY = ("status (no servers)", "config show")

SDK_SCRIPT = """
import json, sys, anyio
from mcp import Client, StdioServerParameters

async def main():
    params = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
    async with Client(params) as client:
        await client.list_tools()
        result = await client.call_tool(sys.argv[1], json.loads(sys.argv[2]))
        print(result.content[0].text)

anyio.run(main)
"""


def _env(agent: Path, home: Path) -> dict[str, str]:
    env = {**os.environ, "ORB_AGENT_DIR": str(agent), "HOME": str(home), "NO_COLOR": "1"}
    env["ORBMCP_NO_DAEMON"] = "1"
    for key in ("ORBMCP_DEBUG", "ORBMCP_CONFIG"):
        env.pop(key, None)
    return env


def _alternate(
    commands: dict[str, list[str]], runs: int, env: dict[str, str], cwd: Path, expect: str
) -> dict[str, float]:
    for argv in commands.values():  # warm the file cache, bytecode and orbmcp's era cache
        _timed(argv, env, cwd, expect)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    order = list(commands.items())
    for _ in range(runs):
        order = order[1:] + order[:1]  # rotate: nobody always goes first
        for name, argv in order:
            samples[name].append(_timed(argv, env, cwd, expect))
    return {name: statistics.median(values) for name, values in samples.items()}


def _one_shot(runs: int, python: str, orbmcp: str, tmp: Path) -> bool:
    from bench.bench_daemon import _install

    installed = _install()
    light = ROOT / "tests" / "servers" / "everything.py"
    servers: dict[str, tuple[list[str], str, str]] = {
        # name: (server command, the echo argument, the expected output)
        "py": ([sys.executable, str(light)], "text", "hi"),
    }
    if installed is not None:
        servers["everything"] = ([str(installed[1]), "stdio"], "message", "Echo: hi")
    else:
        print("(a) server-everything and mcporter skipped: npm is not available")
    project, agent, home = tmp / "project", tmp / "agent", tmp / "home"
    for d in (project / "config", agent, home):
        d.mkdir(parents=True, exist_ok=True)
    entries = {name: {"command": cmd[0], "args": cmd[1:]} for name, (cmd, _, _) in servers.items()}
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
    (project / "config" / "mcporter.json").write_text(json.dumps({"mcpServers": entries}))
    env = {
        **os.environ,
        "ORB_AGENT_DIR": str(agent),
        "HOME": str(home),
        "NO_COLOR": "1",
        "ORBMCP_NO_DAEMON": "1",
    }
    for key in ("ORBMCP_DEBUG", "ORBMCP_CONFIG"):
        env.pop(key, None)
    ok = True
    for name, (cmd, key, expect) in servers.items():
        commands = {
            "orbmcp call": [orbmcp, "call", name, "echo", f"{key}=hi"],
            "bare SDK script": [python, "-c", SDK_SCRIPT, "echo", json.dumps({key: "hi"}), *cmd],
        }
        if installed is not None:
            commands["mcporter call"] = [str(installed[0]), "call", f"{name}.echo", f"{key}=hi"]
        medians = _alternate(commands, runs, env, project, expect)
        orb = medians["orbmcp call"]
        print(f"(a) one-shot echo on {name} ({' '.join(Path(c).name for c in cmd[:2])}), median of {runs}:")
        for label, value in medians.items():
            print(f"    {label:<18} {value * 1000:8.1f} ms   orbmcp/this {orb / value:6.3f}x")
        ok &= orb / medians["bare SDK script"] <= SDK_BUDGET
        if "mcporter call" in medians:
            ok &= orb / medians["mcporter call"] <= MCPORTER_BUDGET
    print(f"    targets: orbmcp <= {MCPORTER_BUDGET}x mcporter, <= {SDK_BUDGET}x the bare SDK")
    return ok


def _fast_paths(runs: int, python: str, orbmcp: str, tmp: Path) -> bool:
    agent, home = tmp / "empty-agent", tmp / "empty-home"
    agent.mkdir()
    home.mkdir()
    env = {
        **os.environ,
        "ORB_AGENT_DIR": str(agent),
        "HOME": str(home),
        "NO_COLOR": "1",
        "ORBMCP_NO_DAEMON": "1",
    }
    commands = {
        "import typer, rich.console": [python, "-c", "import typer, rich.console"],
        "status (no servers)": [orbmcp, "status"],
        "config show": [orbmcp, "config", "show"],
        "--help": [orbmcp, "--help"],
        "--version": [orbmcp, "--version"],
        "complete /mcp:st": [orbmcp, "complete", "/mcp:st"],
    }
    medians = _alternate(commands, runs, env, tmp, "")
    base = medians["import typer, rich.console"]
    print(f"(b) start-up paths against `import typer, rich.console`, median of {runs}:")
    ok = True
    for label, value in medians.items():
        print(f"    {label:<28} {value * 1000:8.1f} ms   {value / base:6.3f}x")
        ok &= value / base <= (CONFIG_BUDGET if label in CONFIG_ONLY else FAST_BUDGET)
    print(f"    targets: config-only <= {CONFIG_BUDGET}x, the rest <= {FAST_BUDGET}x")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    args, _ = parser.parse_known_args(argv)
    from bench.installed import installed_orbmcp, installed_python

    orbmcp = str(installed_orbmcp())
    python = str(installed_python())
    with tempfile.TemporaryDirectory(prefix="orbmcp-bench-cold-") as name:
        tmp = Path(name)
        ok = _one_shot(args.runs, python, orbmcp, tmp)
        ok &= _fast_paths(args.runs * 2, python, orbmcp, tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
