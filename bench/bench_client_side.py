"""The client side of MCP must not slow the one-shot path: ``orbmcp call`` on a server that asks
for nothing (``tests/servers/raw.py``, stdlib, no probe wait), this tree against a base revision.

The base is exported with ``git archive`` into a temporary directory and run with the same
interpreter and dependencies (``PYTHONPATH`` puts it first). Runs are interleaved so machine noise
hits both alike; medians are compared. Budget: <= 1.02x the base, on the CPU time the command's
process used (user + system, from ``wait4``): on a shared machine wall time swings by tens of
per cent with other people's work, CPU time measures the work orbmcp itself does. Wall time is
printed too.

    python -m bench.bench_client_side [--base REF] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 1.02


def export(ref: str, into: Path) -> Path:
    """The tree of ``ref`` under ``into`` (no worktree, no change to the repository)."""
    archive = into / "base.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref], stdout=f, check=True)
    base = into / "base"
    base.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(base, filter="data")
    return base


def one_run(tree: Path, config: Path, home: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the orbmcp process) of one ``orbmcp call``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORBMCP_")}
    env.update({"PYTHONPATH": str(tree), "ORB_AGENT_DIR": str(home)})
    argv = [sys.executable, "-m", "orbmcp", "--config", str(config), "call", "r", "echo", "text=hi"]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tree)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or out != b"hi\n":
        raise SystemExit(f"run failed in {tree}: {proc.returncode} {out!r} {err[-500:]!r}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--base", default="main", help="git revision to compare with (default: main)")
    p.add_argument("--runs", type=int, default=30)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="orbmcp-bench-") as tmp:
        work = Path(tmp)
        base = export(args.base, work)
        raw = ROOT / "tests" / "servers" / "raw.py"
        entry = {"command": sys.executable, "args": [str(raw), "--answer-discover-error", "-32601"]}
        config = work / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"r": entry}}), encoding="utf-8")
        trees = {"base": base, "this": ROOT}
        wall: dict[str, list[float]] = {name: [] for name in trees}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        for name, tree in trees.items():  # warm the page cache and the era cache once each
            one_run(tree, config, work / f"home-{name}")
        for _ in range(args.runs):
            for name, tree in trees.items():
                w, c = one_run(tree, config, work / f"home-{name}")
                wall[name].append(w)
                cpu[name].append(c)
    print(f"one-shot `orbmcp call` on a server that asks for nothing ({args.runs} interleaved runs each)")
    for name in trees:
        print(
            f"  {name:<5} CPU median {statistics.median(cpu[name]) * 1000:7.1f} ms"
            f"  wall median {statistics.median(wall[name]) * 1000:7.1f} ms"
            f" (min {min(wall[name]) * 1000:.1f})"
        )
    ratio = statistics.median(cpu["this"]) / statistics.median(cpu["base"])
    wall_ratio = statistics.median(wall["this"]) / statistics.median(wall["base"])
    ok = ratio <= BUDGET
    verdict = "within budget" if ok else "OVER BUDGET"
    print(f"  CPU ratio {ratio:.3f}x (budget <= {BUDGET}x): {verdict}; wall ratio {wall_ratio:.3f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
