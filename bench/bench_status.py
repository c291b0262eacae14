"""Connection-core speed: concurrent start-up, paged discovery, hung servers.

(1) ``orbmcp status --json`` of 10 light stdio servers (``tests/servers/light.py`` under ``python -S``:
    ``sys`` and ``json`` only, each sleeping 0.5 s before every answer) against the status of one.
    Budget: <= 1.15x. The server must be light for the figure to measure orbmcp: ``raw.py`` (argparse,
    subprocess, socket, site-packages) costs ~40 ms of CPU to boot, and ten of those booting on two
    cores at once slow the SDK import beside them by ~0.1 s whatever the client does.
(2) Discovery of 10,000 tools over 100 pages (``tests/servers/paged.py``): orbmcp's cursor walk
    plus tool-registry sync on a live connection (what a list_changed re-discovery runs), against
    a bare SDK ``Client`` collecting ``page.tools`` until ``next_cursor`` is empty, on the same
    server in the same process. Interleaved rounds (alternating which side goes first: the
    second of a pair runs warmer), medians. Budget: <= 1.15x.
(3) ``orbmcp status`` with one hung server (``timeoutMs`` 2000) next to a light one returns when
    that timeout ends: the overshoot past ``timeoutMs`` stays within the cost of a normal status
    of the light server alone.

Every CLI run is a fresh interpreter; runs are interleaved so machine noise hits each side alike.
The era cache is warmed first (raw.py, in (3), ignores ``server/discover``; only a first contact
pays the bounded probe).

    python -m bench.bench_status [--runs N] [--rounds N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
BUDGET = 1.15
HUNG_TIMEOUT_MS = 2000
TOOLS, PAGE = 10_000, 100

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _raw(*args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "raw.py"), *args], **extra}


def _light(delay: float) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-S", str(SERVERS / "light.py"), str(delay)]}


def _write(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def _status(config: Path, env: dict[str, str]) -> tuple[float, list[dict[str, Any]]]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "orbmcp", "--config", str(config), "status", "--json"],
        env=env,
        cwd=config.parent,
        capture_output=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"orbmcp status failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    rows: list[dict[str, Any]] = json.loads(proc.stdout)
    return took, rows


def _states(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {r["name"]: r["state"] for r in rows}


def _report(label: str, samples: list[float]) -> float:
    med = statistics.median(samples)
    print(f"  {label:<44} median {med * 1000:7.0f} ms   min {min(samples) * 1000:7.0f} ms")
    return med


def bench_concurrent_status(tmp: Path, env: dict[str, str], runs: int) -> bool:
    print("(1) status: 10 light stdio servers vs 1 (each sleeps 0.5 s before every answer)")
    light = _light(0.5)
    one = _write(tmp / "one.json", {"s0": light})
    ten = _write(tmp / "ten.json", {f"s{i}": light for i in range(10)})
    for config in (one, ten):  # warm the era cache, the page cache and .pyc files
        _, rows = _status(config, env)
        if set(_states(rows).values()) != {"ready"}:
            raise RuntimeError(f"not every server became ready: {_states(rows)}")
    samples: dict[str, list[float]] = {"one": [], "ten": []}
    for _ in range(runs):
        for name, config in (("one", one), ("ten", ten)):
            samples[name].append(_status(config, env)[0])
    t_one = _report("status of 1 server", samples["one"])
    t_ten = _report("status of 10 servers", samples["ten"])
    ratio = t_ten / t_one
    ok = ratio <= BUDGET
    print(f"  ratio {ratio:.2f}x (budget <= {BUDGET}x) {'ok' if ok else 'OVER BUDGET'}")
    return ok


async def _discovery(rounds: int) -> tuple[list[float], list[float], float]:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from orbmcp.config.loader import load_config
    from orbmcp.core.session.discovery import list_tools
    from orbmcp.core.session.manager import Manager

    argv = [str(SERVERS / "paged.py"), "--tools", str(TOOLS), "--page-size", str(PAGE)]
    with tempfile.TemporaryDirectory() as d:
        config = _write(Path(d) / "mcp.json", {"paged": {"command": sys.executable, "args": argv}})
        manager = Manager(load_config(config_file=config), retries=False)
        params = StdioServerParameters(command=sys.executable, args=argv)
        with open(os.devnull, "w") as devnull:
            async with manager, Client(stdio_client(params, errlog=devnull)) as bare:
                began = time.perf_counter()
                sup = await manager.ready("paged")
                first_connect = time.perf_counter() - began
                if manager.tools.counts("paged") != (TOOLS, TOOLS):
                    raise RuntimeError(f"orbmcp discovered {manager.tools.counts('paged')}")

                async def through_orbmcp() -> int:
                    tools = await list_tools(sup.client, server="paged", warn=print)
                    manager.tools.sync("paged", tools, active=True)
                    return len(tools)

                async def bare_sdk() -> int:
                    # The SDK notes' loop: collect every page's tools until there is no cursor.
                    tools: list[Any] = []
                    cursor = None
                    while True:
                        page = await bare.list_tools(cursor=cursor)
                        tools += page.tools
                        cursor = page.next_cursor
                        if not cursor:
                            return len(tools)

                ours: list[float] = []
                sdk: list[float] = []
                sides = [(ours, through_orbmcp), (sdk, bare_sdk)]
                for _ in range(rounds):
                    sides.reverse()  # alternate who goes first: the second of a pair runs warmer
                    for samples, fn in sides:
                        # A full collection costs ~50 ms with the SDK loaded: start each sample
                        # from the same GC state so one does not land on the other's bill.
                        gc.collect()
                        start = time.perf_counter()
                        with anyio.fail_after(60):
                            count = await fn()
                        samples.append(time.perf_counter() - start)
                        if count != TOOLS:
                            raise RuntimeError(f"listed {count} tools, expected {TOOLS}")
    return ours, sdk, first_connect


def bench_discovery(rounds: int) -> bool:
    import anyio

    print(f"(2) discovery: {TOOLS:,} tools over {TOOLS // PAGE} pages, orbmcp vs a bare SDK cursor loop")
    ours, sdk, first = anyio.run(_discovery, rounds)
    print(f"  first connect + initial discovery through orbmcp: {first * 1000:.0f} ms")
    t_ours = _report("orbmcp (cursor walk + registry sync)", ours)
    t_sdk = _report("bare SDK loop", sdk)
    ratio = t_ours / t_sdk
    ok = ratio <= BUDGET
    print(f"  ratio {ratio:.2f}x (budget <= {BUDGET}x) {'ok' if ok else 'OVER BUDGET'}")
    return ok


def bench_hung(tmp: Path, env: dict[str, str], runs: int) -> bool:
    print(f"(3) status with one hung server (timeoutMs {HUNG_TIMEOUT_MS}) next to a light one")
    light = _write(tmp / "light.json", {"light": _raw()})
    hung = _write(tmp / "hung.json", {"light": _raw(), "hung": _raw("--hang", timeoutMs=HUNG_TIMEOUT_MS)})
    _status(light, env)
    samples: dict[str, list[float]] = {"light": [], "hung": []}
    for _ in range(runs):
        for name, config in (("light", light), ("hung", hung)):
            took, rows = _status(config, env)
            samples[name].append(took)
            if name == "hung" and _states(rows) != {"light": "ready", "hung": "failed"}:
                raise RuntimeError(f"unexpected states {_states(rows)}")
    t_light = _report("status of the light server alone", samples["light"])
    t_hung = _report("status with the hung server", samples["hung"])
    overshoot = t_hung - HUNG_TIMEOUT_MS / 1000
    ok = overshoot <= t_light
    print(
        f"  returned {overshoot * 1000:.0f} ms after timeoutMs (budget: <= the light status, "
        f"{t_light * 1000:.0f} ms) {'ok' if ok else 'OVER BUDGET'}"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_status")
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", "7")))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "31")))
    args, _ = parser.parse_known_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        env = dict(os.environ)
        env.update({"ORB_AGENT_DIR": str(tmp / "agent"), "NO_COLOR": "1", "CI": "1", "PYTHONPATH": str(ROOT)})
        for key in ("ORBMCP_CONFIG", "ORBMCP_DEBUG"):
            env.pop(key, None)
        os.environ["ORB_AGENT_DIR"] = env["ORB_AGENT_DIR"]  # the in-process Manager of (2) too
        results = [
            bench_concurrent_status(tmp, env, args.runs),
            bench_discovery(args.rounds),
            bench_hung(tmp, env, args.runs),
        ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
