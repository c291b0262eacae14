"""Tool-call speed: the bridge against a bare SDK ``Client``, in one process and one-shot.

(a) 1,000 sequential ``echo`` calls on ``tests/servers/everything.py`` over stdio, through the host
    API (``McpExtension`` → ``HostTool.call``) and through ``Manager`` + ``calls.call_tool``,
    against the same calls on a bare ``mcp.Client``. All three connections stay open and the calls
    run in interleaved blocks, so machine noise hits each path alike. Budget: <= 1.10x.
(b) One-shot ``orbmcp call everything echo`` on ``@modelcontextprotocol/server-everything`` (npm,
    installed into a cache dir on first use; skipped with a message if npm fails) against a bare
    SDK script that spawns the same server, connects, calls ``echo`` and exits. Interleaved runs,
    medians compared. Budget: <= 0.8x.

    python -m bench.bench_calls [--calls N] [--runs N] [--skip-oneshot]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.host import McpExtension

ROOT = Path(__file__).resolve().parent.parent
IN_PROCESS_BUDGET = 1.10
ONE_SHOT_BUDGET = 0.8
BLOCK = 20
NPM_PACKAGE = "@modelcontextprotocol/server-everything"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# -- (a) in-process --------------------------------------------------------------------------------


def _everything_argv() -> list[str]:
    return [sys.executable, str(ROOT / "tests" / "servers" / "everything.py")]


async def _in_process(calls: int, home: Path) -> dict[str, list[float]]:
    import anyio
    from mcp import Client, StdioServerParameters

    from orbmcp.config.loader import load_config
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.tooling.calls import call_tool
    from orbmcp.host import McpExtension
    from tests.host.example_host import ExampleHost

    command, *args = _everything_argv()
    config_path = home / "mcp.json"
    config_path.write_text(json.dumps({"mcpServers": {"e": {"command": command, "args": args}}}))
    config = load_config(config_file=config_path, global_dir=home / "agent")
    host = ExampleHost()
    arguments = {"text": "hello"}

    async with (
        Client(StdioServerParameters(command=command, args=args)) as client,
        Manager(config, retries=False) as manager,
        _handed(McpExtension(host, retries=False), config) as ext,
    ):
        sup = await manager.ready("e")
        echo = next(t for t in ext.tools if t.tool_name == "echo")

        async def sdk() -> None:
            await client.call_tool("echo", arguments)

        async def bridge() -> None:
            await call_tool(sup, "echo", arguments)

        async def host_api() -> None:
            await echo.call(arguments)

        paths: dict[str, Callable[[], Awaitable[None]]] = {
            "bare SDK Client": sdk,
            "Manager + call_tool": bridge,
            "host API (HostTool.call)": host_api,
        }
        blocks: dict[str, list[float]] = {name: [] for name in paths}
        for fn in paths.values():  # warm-up: the first call of each path pays one-time costs
            for _ in range(20):
                await fn()
        done = 0
        order = list(paths.items())
        while done < calls:
            n = min(BLOCK, calls - done)
            order = order[1:] + order[:1]  # rotate: no path always runs first
            for name, fn in order:
                start = time.perf_counter()
                for _ in range(n):
                    await fn()
                blocks[name].append(time.perf_counter() - start)
            done += n
        await anyio.lowlevel.checkpoint()
    return blocks


def bench_in_process(calls: int) -> bool:
    import anyio

    with tempfile.TemporaryDirectory(prefix="orbmcp-bench-") as tmp:
        blocks = anyio.run(_in_process, calls, Path(tmp))
    base = blocks["bare SDK Client"]
    print(f"(a) {calls} sequential echo calls, stdio, everything.py (interleaved blocks of {BLOCK})")
    print(f"    {'path':<28} {'total s':>8} {'per call ms':>12} {'x SDK':>7} {'x SDK (median block)':>21}")
    ok = True
    for name, times in blocks.items():
        # Each block of a path ran right beside the same block of the others: comparing block by
        # block cancels most of the machine's drift.
        ratio = statistics.median(t / b for t, b in zip(times, base, strict=True))
        total = sum(times)
        per_call = total / calls * 1000
        print(f"    {name:<28} {total:>8.3f} {per_call:>12.3f} {total / sum(base):>7.3f} {ratio:>21.3f}")
        if name != "bare SDK Client" and ratio > IN_PROCESS_BUDGET:
            ok = False
            print(f"    OVER BUDGET: {name} {ratio:.3f}x > {IN_PROCESS_BUDGET}x")
    print(f"    budget: median block ratio <= {IN_PROCESS_BUDGET}x the bare SDK Client")
    return ok


# -- (b) one-shot ------------------------------------------------------------------------------------

SDK_SCRIPT = """
import sys, anyio
from mcp import Client, StdioServerParameters

async def main():
    async with Client(StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])) as client:
        result = await client.call_tool("echo", {"message": "hi"})
        print(result.content[0].text)

anyio.run(main)
"""


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "orbmcp-bench" / "npm"


def _install_server() -> Path | None:
    """The server's entry point, installed with npm on first use; None (with a message) if impossible."""
    target = _cache_dir()
    entry = target / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if entry.is_file():
        return entry
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("(b) skipped: node/npm not found")
        return None
    target.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error", NPM_PACKAGE],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0 or not entry.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        print(f"(b) skipped: npm install {NPM_PACKAGE} failed: {' / '.join(tail)}")
        return None
    return entry


def _timed(argv: list[str], env: dict[str, str], expect: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or expect not in proc.stdout:
        raise RuntimeError(f"{argv[:4]} failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    return elapsed


def bench_one_shot(runs: int) -> bool | None:
    entry = _install_server()
    if entry is None:
        return None
    node = shutil.which("node")
    assert node is not None
    with tempfile.TemporaryDirectory(prefix="orbmcp-bench-") as tmp:
        config = Path(tmp) / "mcp.json"
        config.write_text(
            json.dumps({"mcpServers": {"everything": {"command": node, "args": [str(entry), "stdio"]}}})
        )
        env = dict(os.environ)
        env.update(
            {
                "ORB_AGENT_DIR": str(Path(tmp) / "agent"),
                "ORBMCP_CONFIG": str(config),
                "NO_COLOR": "1",
                "PYTHONPATH": str(ROOT),
            }
        )
        env.pop("ORBMCP_DEBUG", None)
        commands: dict[str, list[str]] = {
            "bare SDK script": [sys.executable, "-c", SDK_SCRIPT, node, str(entry), "stdio"],
            "orbmcp call": [sys.executable, "-m", "orbmcp", "call", "everything", "echo", "message=hi"],
        }
        for argv in commands.values():  # warm the file cache, .pyc files and orbmcp's era cache
            _timed(argv, env, "Echo: hi")
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, argv in commands.items():
                samples[name].append(_timed(argv, env, "Echo: hi"))
    base = statistics.median(samples["bare SDK script"])
    print(f"(b) one-shot echo on {NPM_PACKAGE} (node), median of {runs} interleaved runs")
    print(f"    {'command':<28} {'median s':>9} {'min s':>7} {'x SDK':>7}")
    for name, values in samples.items():
        med = statistics.median(values)
        print(f"    {name:<28} {med:>9.3f} {min(values):>7.3f} {med / base:>7.3f}")
    ratio = statistics.median(samples["orbmcp call"]) / base
    print(f"    budget: <= {ONE_SHOT_BUDGET}x the bare SDK script")
    if ratio > ONE_SHOT_BUDGET:
        print(f"    OVER BUDGET: orbmcp call {ratio:.3f}x > {ONE_SHOT_BUDGET}x")
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_calls")
    parser.add_argument("--calls", type=int, default=int(os.environ.get("BENCH_CALLS", "1000")))
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_REPEAT", "10")))
    parser.add_argument("--skip-oneshot", action="store_true")
    args, _ = parser.parse_known_args(argv)
    ok = bench_in_process(args.calls)
    if not args.skip_oneshot:
        one_shot = bench_one_shot(args.runs)
        ok = ok and one_shot is not False
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())


def _handed(ext: McpExtension, config: ResolvedConfig) -> McpExtension:
    """The extension on the configuration the Manager above uses (orbmcp's own hook, not API)."""
    ext._config, ext._follows_registry = config, False
    return ext
