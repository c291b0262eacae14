"""``orbmcp serve`` speed: what the gateway adds between an agent and its servers (stdio).

(1) 1,000 sequential ``echo`` calls to ``tests/servers/light.py`` (a stdlib-only server), by the
    SDK's ``Client`` straight to the server, by the same ``Client`` through ``orbmcp serve``
    (its own session) to the same server, and through ``bench/line_relay.py`` (a process that
    only copies lines: the ceiling of any gateway process). The connections stay open; the calls
    run in interleaved blocks so machine noise hits them alike. Budgets: the median call through serve
    takes at most 1 ms longer than the direct median, and serve's throughput is at least 0.8x the
    bare relay's (issue 25: any gateway is one more process; the relay is what one costs).
(2) ``tools/list`` of 10,000 tools (``tests/servers/raw.py --tools 10000``, one page), straight vs
    through serve (whose gateway answers from the session's registry). Median of interleaved runs.
    Budget: at most 1.2x the direct listing.

    python -m bench.bench_serve [--calls N] [--lists N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
ADDED_P50_BUDGET_MS = 1.0
THROUGHPUT_BUDGET = 0.8
LIST_BUDGET = 1.2
TOOLS = 10_000
BLOCK = 50
_SERVE_CPU_START: dict[str, float] = {}
_SERVE_CPU_MS: dict[str, float] = {}


def _serve_params(config: Path, home: Path) -> Any:
    from mcp import StdioServerParameters

    env = {**os.environ, "ORB_AGENT_DIR": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("ORBMCP_DEBUG", None)
    argv = ["-m", "orbmcp", "--no-daemon", "--config", str(config), "serve"]
    return StdioServerParameters(command=sys.executable, args=argv, env=env)


def _config(home: Path, name: str, argv: list[str]) -> Path:
    path = home / f"{name}.json"
    path.write_text(
        json.dumps({"mcpServers": {name: {"command": argv[0], "args": argv[1:]}}}), encoding="utf-8"
    )
    return path


async def _calls(calls: int, home: Path) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    light = [sys.executable, "-S", str(SERVERS / "light.py")]
    direct = Client(StdioServerParameters(command=light[0], args=light[1:]), mode="legacy")
    served = Client(_serve_params(_config(home, "light", light), home), mode="legacy")
    relay = [sys.executable, "-S", str(ROOT / "bench" / "line_relay.py"), *light]
    relayed = Client(StdioServerParameters(command=relay[0], args=relay[1:]), mode="legacy")
    arguments = {"text": "hello"}
    times: dict[str, list[float]] = {"direct": [], "through serve": [], "bare relay": []}
    async with direct, served, relayed:
        bridged = next(t.name for t in (await served.list_tools()).tools if "__echo_" in t.name)
        paths = {
            "direct": (direct, "echo"),
            "through serve": (served, bridged),
            "bare relay": (relayed, "echo"),
        }
        for client, tool in paths.values():  # warm-up
            for _ in range(20):
                await client.call_tool(tool, arguments)
        serve = _serve_process()
        done = 0
        order = list(paths.items())
        while done < calls:
            n = min(BLOCK, calls - done)
            order = order[1:] + order[:1]
            for name, (client, tool) in order:
                for _ in range(n):
                    start = time.perf_counter()
                    await client.call_tool(tool, arguments)
                    times[name].append(time.perf_counter() - start)
            done += n
        if serve is not None:
            used = serve.cpu_times()
            _SERVE_CPU_MS["calls"] = (used.user + used.system - _SERVE_CPU_START["calls"]) * 1000 / calls
    return times


def _serve_process() -> Any:
    """The serve process this benchmark started (psutil), its CPU so far remembered."""
    import psutil

    for child in psutil.Process().children():
        if "serve" in child.cmdline():
            used = child.cpu_times()
            _SERVE_CPU_START["calls"] = used.user + used.system
            return child
    return None


async def _lists(runs: int, home: Path) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    raw = [
        sys.executable,
        str(SERVERS / "raw.py"),
        "--answer-discover-error",
        "-32601",
        "--tools",
        str(TOOLS),
    ]
    direct = Client(StdioServerParameters(command=raw[0], args=raw[1:]), mode="legacy")
    served = Client(_serve_params(_config(home, "raw", raw), home), mode="legacy")
    times: dict[str, list[float]] = {"direct": [], "through serve": []}
    async with direct, served:
        clients = {"direct": direct, "through serve": served}
        for name, client in clients.items():  # warm-up; serve's first listing waits for discovery
            count = len((await client.list_tools()).tools)
            if count < TOOLS:
                raise RuntimeError(f"{name}: listed {count} tools, expected {TOOLS}")
        order = list(clients.items())
        for _ in range(runs):
            order = order[1:] + order[:1]
            for name, client in order:
                start = time.perf_counter()
                await client.list_tools()
                times[name].append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    import anyio

    p = argparse.ArgumentParser(description="orbmcp serve: added latency, throughput, big listings")
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--lists", type=int, default=15)
    args, _rest = p.parse_known_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="orbmcp-bench-serve-") as tmp:
        calls = anyio.run(_calls, args.calls, Path(tmp))
        lists = anyio.run(_lists, args.lists, Path(tmp))
    direct, served = calls["direct"], calls["through serve"]
    added = (statistics.median(served) - statistics.median(direct)) * 1000
    throughput = sum(direct) / sum(served)
    print(f"(1) {args.calls} sequential echo calls, stdio, light.py (interleaved blocks of {BLOCK})")
    for name, times in calls.items():
        per_s = len(times) / sum(times)
        p50 = statistics.median(times) * 1000
        print(f"    {name:<14} p50 {p50:7.3f} ms  p90 {_p90(times):7.3f} ms  {per_s:8.0f} calls/s")
    cpu = _SERVE_CPU_MS.get("calls")
    if cpu is not None:
        print(f"    serve's own CPU: {cpu:.3f} ms per call (user + system)")
    print(f"    added p50 {added:.3f} ms (budget <= {ADDED_P50_BUDGET_MS} ms)")
    floor = sum(direct) / sum(calls["bare relay"])
    print(f"    throughput {throughput:.3f}x direct; a bare line relay (bench/line_relay.py, one more")
    print(f"    process, nothing parsed) {floor:.3f}x direct: serve is {throughput / floor:.3f}x the relay")
    print(f"    (budget >= {THROUGHPUT_BUDGET}x the relay)")
    if added > ADDED_P50_BUDGET_MS or throughput / floor < THROUGHPUT_BUDGET:
        ok = False
        print("    OVER BUDGET")
    list_direct, list_served = statistics.median(lists["direct"]), statistics.median(lists["through serve"])
    ratio = list_served / list_direct
    print(f"(2) tools/list of {TOOLS:,} tools, median of {args.lists} interleaved runs")
    print(f"    direct {list_direct * 1000:.1f} ms, through serve {list_served * 1000:.1f} ms")
    print(f"    {ratio:.3f}x (budget <= {LIST_BUDGET}x)")
    if ratio > LIST_BUDGET:
        ok = False
        print("    OVER BUDGET")
    return 0 if ok else 1


def _p90(times: list[float]) -> float:
    return statistics.quantiles(times, n=10)[-1] * 1000


if __name__ == "__main__":
    raise SystemExit(main())
