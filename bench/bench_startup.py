"""Start-up time of the commands people and shells run most, against ``import typer, rich.console``.

Budgets (issue 25): the fast paths (``orbmcp complete "/mcp:start "``, ``--help``, ``--version``)
take at most 1.3x the time of ``python -c "import typer, rich.console"``; the config-only commands
(``config show``/``validate``/``paths``, an empty ``status``, ``add``), which validate the config
with pydantic(-settings), at most 3x. Each command runs many times, interleaved so
that machine noise hits every command alike; the verdict uses the median of wall time, the minimum
is shown too, and so is the median of CPU time (user + system of the child), which a loaded
machine (other jobs on 2 cores) disturbs much less than wall time.

orbmcp runs as a user has it: installed from this checkout, bytecode compiled (``bench/installed.py``),
the baseline with the same interpreter; ``--checkout`` runs this checkout's source instead (on
``PYTHONPATH``, beside the development venv's editable finder, which every interpreter start of
that venv imports, the baseline's too).

    python -m bench.bench_startup [--repeat N] [--checkout]
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
BUDGET = 1.3
CONFIG_BUDGET = 3.0
FAST = ("orbmcp complete", "orbmcp --help", "orbmcp --version")
BASELINE = "import typer, rich.console"


def _config(directory: Path) -> Path:
    servers = {
        "github": {"url": "https://example.invalid/mcp", "auth": {"type": "oauth"}, "lifecycle": "lazy"},
        "files": {"command": "true", "lifecycle": "lazy"},
        "search": {"command": "true", "enabled": False},
    }
    path = directory / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Wall and CPU seconds of one run (in ``cwd``: not the checkout, whose ``orbmcp`` directory
    ``python -m`` would import instead of the installed one)."""
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, _cpu() - cpu


def _interpreter(checkout: bool) -> tuple[str, dict[str, str]]:
    """The interpreter that runs orbmcp and the baseline, and what its environment adds."""
    if not checkout:
        from bench.installed import installed_python

        return str(installed_python()), {}
    import compileall

    # An installed orbmcp has its bytecode compiled (pip does it); an editable checkout under
    # PYTHONDONTWRITEBYTECODE=1 would recompile every module on every run and measure that instead.
    compileall.compile_dir(str(ROOT / "orbmcp"), quiet=1)
    return sys.executable, {"PYTHONPATH": str(ROOT)}


def measure(repeat: int, *, checkout: bool = False) -> dict[str, list[tuple[float, float]]]:
    py, added = _interpreter(checkout)
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(
            {
                "ORB_AGENT_DIR": str(Path(tmp) / "agent"),
                "ORBMCP_CONFIG": str(_config(Path(tmp))),
                "NO_COLOR": "1",
                **added,
            }
        )
        env.pop("ORBMCP_DEBUG", None)
        commands = {
            "baseline: import typer, rich.console": [py, "-c", BASELINE],
            'orbmcp complete "/mcp:start "': [py, "-m", "orbmcp", "complete", "/mcp:start "],
            "orbmcp --help": [py, "-m", "orbmcp", "--help"],
            "orbmcp --version": [py, "-m", "orbmcp", "--version"],
            "orbmcp config show": [py, "-m", "orbmcp", "config", "show"],
            "orbmcp config validate": [py, "-m", "orbmcp", "config", "validate"],
            "orbmcp config paths": [py, "-m", "orbmcp", "config", "paths"],
            # Two lazy servers and a disabled one: a one-shot status connects nothing.
            "orbmcp status (no eager server)": [py, "-m", "orbmcp", "status"],
            "orbmcp add --overwrite": [py, "-m", "orbmcp", "add", "x", "--lazy", "--overwrite", "--", "true"],
        }
        for argv in commands.values():  # warm the file cache and .pyc files
            _time(argv, env, tmp)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(repeat):
            for name, argv in commands.items():
                samples[name].append(_time(argv, env, tmp))
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_startup")
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "40")))
    parser.add_argument(
        "--checkout", action="store_true", help="run this checkout's source, not an installed orbmcp"
    )
    args, _ = parser.parse_known_args(argv)
    runs = measure(args.repeat, checkout=args.checkout)
    samples = {name: [wall for wall, _ in times] for name, times in runs.items()}
    cpu = {name: statistics.median(c for _, c in times) for name, times in runs.items()}
    names = list(samples)
    base_med = statistics.median(samples[names[0]])
    base_min = min(samples[names[0]])
    header = f"{'command':<40} {'median ms':>10} {'min ms':>8} {'x median':>9} {'x min':>7}"
    print(f"{header} {'cpu ms':>7} {'x cpu':>6}")
    over = []
    for name in names:
        med, low = statistics.median(samples[name]), min(samples[name])
        ratio = med / base_med
        row = f"{name:<40} {med * 1000:>10.1f} {low * 1000:>8.1f} {ratio:>9.2f} {low / base_min:>7.2f}"
        print(f"{row} {cpu[name] * 1000:>7.1f} {cpu[name] / cpu[names[0]]:>6.2f}")
        budget = BUDGET if name.startswith(FAST) else CONFIG_BUDGET
        if name.startswith("orbmcp ") and ratio > budget:
            over.append(name)
    budgets = f"fast paths <= {BUDGET}x baseline, config-only <= {CONFIG_BUDGET}x"
    how = "this checkout's source" if args.checkout else "orbmcp installed from this checkout"
    print(f"budget: {budgets} (median of {args.repeat} runs; {how})")
    for name in over:
        print(f"OVER BUDGET: {name}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
