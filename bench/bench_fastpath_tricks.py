"""Do the two start-up tricks outside ``orbmcp/fastpath`` still pay? Each is measured on and off,
alternately, in one run (the package docstring of ``orbmcp.fastpath`` keeps the verdict).

(a) ``frontends/sdk_trim.py``: the SDK's client-side import (``core.wire.sdk``'s modules), in a fresh
    interpreter, with the trim installed and without; time and modules loaded.
(b) ``core/processes/detached_stop.py``: a one-shot ``orbmcp tools`` on a stdio server, as the program runs
    it (its servers' stop handed to a detached child once the output is printed) and with the
    hand-off off (the command waits for the stop): once on a server that exits at stdin EOF, once
    on one whose process group outlives EOF (stopped by SIGTERM after the stdin grace period).

    python -m bench.bench_fastpath_tricks [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIGHT = ROOT / "tests" / "servers" / "light.py"

SDK_IMPORT = """
import sys
if sys.argv[1] == "trim":
    from orbmcp.frontends import sdk_trim
    sdk_trim.install()
from orbmcp.core.wire import sdk
sdk._import_all()
print(len(sys.modules))
"""

ONE_SHOT = """
import sys
from orbmcp.fastpath import entry
from orbmcp.frontends import process_tuning
if sys.argv[1] == "wait":
    process_tuning.owns_process = lambda: False  # no hand-off: the command waits for the stop
sys.exit(entry.run(sys.argv[2:], own_process=True))
"""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall time, CPU time of the process (what a loaded machine disturbs least), its output."""
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[3:]} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return elapsed, _cpu() - cpu, done.stdout


def measure(repeat: int) -> dict[str, list[tuple[float, float]]]:
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ORBMCP_")}
        env.update({"ORB_AGENT_DIR": str(Path(tmp) / "agent"), "ORBMCP_NO_DAEMON": "1", "NO_COLOR": "1"})
        env["PYTHONPATH"] = str(ROOT)
        (Path(tmp) / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
        env["ORBMCP_CONFIG"] = str(Path(tmp) / "mcp.json")
        exits = f"{py} -S {LIGHT}"
        lingers = f"sh -c '{py} -S {LIGHT}; sleep 30'"  # the group outlives stdin EOF
        runs: dict[str, list[str]] = {
            "SDK client import, trimmed": [py, "-c", SDK_IMPORT, "trim"],
            "SDK client import, whole": [py, "-c", SDK_IMPORT, "whole"],
        }
        for label, server in (("exits at EOF", exits), ("outlives EOF", lingers)):
            for mode in ("handoff", "wait"):
                runs[f"tools, server {label}, {mode}"] = [
                    py,
                    "-c",
                    ONE_SHOT,
                    mode,
                    "tools",
                    "--stdio",
                    server,
                ]
        modules: dict[str, str] = {}
        for name, argv in runs.items():  # warm caches; record the module counts
            modules[name] = _run(argv, env)[2].strip()
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
        for _ in range(repeat):
            for name, argv in runs.items():
                wall, cpu, _ = _run(argv, env)
                samples[name].append((wall, cpu))
    for name in ("SDK client import, trimmed", "SDK client import, whole"):
        print(f"{name}: {modules[name]} modules")
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_fastpath_tricks")
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "10")))
    args, _ = parser.parse_known_args(argv)
    samples = measure(args.repeat)
    print(f"{'run':<45} {'wall median ms':>15} {'wall min ms':>12} {'cpu median ms':>14}")
    for name, values in samples.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        wall_med, wall_min, cpu_med = statistics.median(walls), min(walls), statistics.median(cpus)
        print(f"{name:<45} {wall_med * 1000:>15.1f} {wall_min * 1000:>12.1f} {cpu_med * 1000:>14.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
