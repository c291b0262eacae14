"""Start-up time of the commands people and shells run most, against ``import typer, rich.console``.

Budgets (issue 25): the fast paths (``orbmcp complete "/mcp:start "``, ``--help``, ``--version``)
take at most 1.3x the time of ``python -c "import typer, rich.console"``; the config-only commands
(``config show``/``validate``/``paths``, an empty ``status``, ``add``), which validate the config
with pydantic(-settings), at most 3x. Each command runs many times, interleaved so
that machine noise hits every command alike; the verdict uses the median, the minimum is shown too.

    python -m bench.bench_startup [--repeat N]
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


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def measure(repeat: int) -> dict[str, list[float]]:
    import compileall

    # An installed orbmcp has its bytecode compiled (pip does it); an editable checkout under
    # PYTHONDONTWRITEBYTECODE=1 would recompile every module on every run and measure that instead.
    compileall.compile_dir(str(ROOT / "orbmcp"), quiet=1)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env.update(
            {
                "ORB_AGENT_DIR": str(Path(tmp) / "agent"),
                "ORBMCP_CONFIG": str(_config(Path(tmp))),
                "PYTHONPATH": str(ROOT),
                "NO_COLOR": "1",
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
            "orbmcp status (no enabled server)": [py, "-m", "orbmcp", "status"],
            "orbmcp add --overwrite": [py, "-m", "orbmcp", "add", "x", "--lazy", "--overwrite", "--", "true"],
        }
        for argv in commands.values():  # warm the file cache and .pyc files
            _time(argv, env)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repeat):
            for name, argv in commands.items():
                samples[name].append(_time(argv, env))
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_startup")
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "40")))
    args, _ = parser.parse_known_args(argv)
    samples = measure(args.repeat)
    names = list(samples)
    base_med = statistics.median(samples[names[0]])
    base_min = min(samples[names[0]])
    print(f"{'command':<40} {'median ms':>10} {'min ms':>8} {'x median':>9} {'x min':>7}")
    over = []
    for name in names:
        med, low = statistics.median(samples[name]), min(samples[name])
        ratio = med / base_med
        print(f"{name:<40} {med * 1000:>10.1f} {low * 1000:>8.1f} {ratio:>9.2f} {low / base_min:>7.2f}")
        budget = BUDGET if name.startswith(FAST) else CONFIG_BUDGET
        if name.startswith("orbmcp ") and ratio > budget:
            over.append(name)
    budgets = f"fast paths <= {BUDGET}x baseline, config-only <= {CONFIG_BUDGET}x"
    print(f"budget: {budgets} (median of {args.repeat} runs)")
    for name in over:
        print(f"OVER BUDGET: {name}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
