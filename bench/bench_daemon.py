"""Warm commands through the session daemon, side by side with mcporter's warm daemon.

(a) ``orbmcp call everything echo message=hi`` through a running ``orbmcp daemon`` against
    ``mcporter call everything.echo message=hi`` through mcporter's keep-alive daemon, on the npm
    ``@modelcontextprotocol/server-everything`` (both installed into a cache dir on first use; the
    comparison is skipped with a message when npm is missing). Interleaved runs, medians. Budgets:
    orbmcp <= 100 ms, and <= 0.10x mcporter.
(b) warm ``orbmcp status`` with 3 ready servers: <= 100 ms; ``orbmcp complete "/mcp:stop "``
    through the daemon: <= 60 ms.
(c) 1,000 sequential warm calls from one shell loop: calls/s, and the daemon's resident memory
    before and after (growth must stay within noise: <= 10 % or 8 MiB).

orbmcp runs as installed from this checkout (``bench/installed.py``), not through the editable
development install, whose import finder alone costs ~15 ms per start.

    python -m bench.bench_daemon [--runs N] [--loop N]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WARM_CALL_BUDGET_S = 0.100
MCPORTER_RATIO_BUDGET = 0.10
STATUS_BUDGET_S = 0.100
COMPLETE_BUDGET_S = 0.060
MEMORY_GROWTH_LIMIT = (0.10, 8 * 1024 * 1024)
MCPORTER = "mcporter@0.12.3"
EVERYTHING = "@modelcontextprotocol/server-everything"


def _cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "orbmcp-bench" / "mcporter"


def _install() -> tuple[Path, Path] | None:
    """(mcporter's CLI, server-everything's CLI), installed with npm on first use."""
    target = _cache()
    bin_dir = target / "node_modules" / ".bin"
    mcporter, everything = bin_dir / "mcporter", bin_dir / "mcp-server-everything"
    if mcporter.exists() and everything.exists():
        return mcporter, everything
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("(a) mcporter side skipped: node/npm not found")
        return None
    target.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(target),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            MCPORTER,
            EVERYTHING,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0 or not mcporter.exists():
        print(f"(a) mcporter side skipped: npm install failed: {proc.stderr.strip()[-300:]}")
        return None
    return mcporter, everything


_ORBMCP: list[str] = []


def _orbmcp() -> str:
    """orbmcp as a user has it installed (see bench/installed.py), set up once per run."""
    if not _ORBMCP:
        from bench.installed import installed_orbmcp

        _ORBMCP.append(str(installed_orbmcp()))
    return _ORBMCP[0]


def _timed(argv: list[str], env: dict[str, str], cwd: Path, expect: str = "") -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or expect not in proc.stdout:
        raise RuntimeError(
            f"{argv[:4]} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-300:]}"
        )
    return elapsed


def _daemon_info(env: dict[str, str], cwd: Path) -> dict[str, object]:
    out = subprocess.run(
        [_orbmcp(), "daemon", "status", "--json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout))


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--loop", type=int, default=1000)
    args, _ = parser.parse_known_args(argv)
    ok = True
    installed = _install()
    with tempfile.TemporaryDirectory(prefix="orbmcp-bench-daemon-") as tmp_name:
        tmp = Path(tmp_name)
        project, home = tmp / "project", tmp / "home"
        (project / "config").mkdir(parents=True)
        home.mkdir()
        light = [sys.executable, "-S", str(ROOT / "tests" / "servers" / "light.py")]
        servers: dict[str, object] = {f"light{i}": {"command": light[0], "args": light[1:]} for i in range(3)}
        if installed is not None:
            servers["everything"] = {"command": str(installed[1]), "args": ["stdio"]}
        agent = tmp / "agent"
        agent.mkdir()
        (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        env = {**os.environ, "ORB_AGENT_DIR": str(agent), "NO_COLOR": "1", "HOME": str(home)}
        env.pop("ORBMCP_NO_DAEMON", None)
        orb = _orbmcp()
        subprocess.run(
            [orb, "daemon", "start", "--idle-timeout", "0"],
            env=env,
            cwd=project,
            check=True,
            capture_output=True,
        )
        try:
            subprocess.run(
                [orb, "status"], env=env, cwd=project, check=True, capture_output=True
            )  # warm every server
            ok &= _bench_calls(args.runs, env, project, installed)
            ok &= _bench_fast(args.runs, env, project)
            ok &= _bench_loop(args.loop, env, project)
        finally:
            subprocess.run([orb, "daemon", "stop"], env=env, cwd=project, capture_output=True, check=False)
            if installed is not None:
                subprocess.run(
                    [str(installed[0]), "daemon", "stop"],
                    env=env,
                    cwd=project,
                    capture_output=True,
                    check=False,
                )
    return 0 if ok else 1


def _bench_calls(runs: int, env: dict[str, str], project: Path, installed: tuple[Path, Path] | None) -> bool:
    orb = _orbmcp()
    if installed is None:
        warm = [_timed([orb, "call", "light0", "echo", "text=hi"], env, project, "hi") for _ in range(runs)]
        print(f"(a) warm orbmcp call (light server; no npm): median {_median_ms(warm):.1f} ms")
        return statistics.median(warm) <= WARM_CALL_BUDGET_S
    mcporter, everything = installed
    (project / "config" / "mcporter.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {"command": str(everything), "args": ["stdio"], "lifecycle": "keep-alive"}
                }
            }
        )
    )
    mcp_argv = [str(mcporter), "call", "everything.echo", "message=hi"]
    _timed(mcp_argv, env, project, "hi")  # starts mcporter's daemon and its server
    orb_argv = [orb, "call", "everything", "echo", "message=hi"]
    orbs: list[float] = []
    mcps: list[float] = []
    for i in range(runs):
        pair = [(orbs, orb_argv), (mcps, mcp_argv)]
        for sink, argv in pair if i % 2 == 0 else reversed(pair):  # alternate who goes first
            sink.append(_timed(argv, env, project, "hi"))
    o, m = _median_ms(orbs), _median_ms(mcps)
    ratio = o / m
    good = statistics.median(orbs) <= WARM_CALL_BUDGET_S and ratio <= MCPORTER_RATIO_BUDGET
    print(
        f"(a) warm call on server-everything, median of {runs}: orbmcp {o:.1f} ms, mcporter {m:.1f} ms, "
        f"ratio {ratio:.3f}x (budgets: <= {WARM_CALL_BUDGET_S * 1000:.0f} ms, <= {MCPORTER_RATIO_BUDGET}x)"
        + ("" if good else "  OVER BUDGET")
    )
    return good


def _bench_fast(runs: int, env: dict[str, str], project: Path) -> bool:
    orb = _orbmcp()
    status = [_timed([orb, "status"], env, project, "light2") for _ in range(runs)]
    complete = [_timed([orb, "complete", "/mcp:stop "], env, project, "light0") for _ in range(runs)]
    s, c = _median_ms(status), _median_ms(complete)
    good = s / 1000 <= STATUS_BUDGET_S and c / 1000 <= COMPLETE_BUDGET_S
    print(
        f"(b) warm status (3+ ready servers) median {s:.1f} ms (<= {STATUS_BUDGET_S * 1000:.0f}); "
        f'complete "/mcp:stop " median {c:.1f} ms (<= {COMPLETE_BUDGET_S * 1000:.0f})'
        + ("" if good else "  OVER BUDGET")
    )
    return good


def _bench_loop(count: int, env: dict[str, str], project: Path) -> bool:
    orb = _orbmcp()
    before = _daemon_info(env, project).get("residentMemoryBytes")
    script = f'for i in $(seq {count}); do "{orb}" call light0 echo text=$i >/dev/null || exit 1; done'
    start = time.perf_counter()
    subprocess.run(["sh", "-c", script], env=env, cwd=project, check=True)
    elapsed = time.perf_counter() - start
    after = _daemon_info(env, project).get("residentMemoryBytes")
    assert isinstance(before, int) and isinstance(after, int)
    growth = after - before
    good = growth <= max(before * MEMORY_GROWTH_LIMIT[0], MEMORY_GROWTH_LIMIT[1])
    print(
        f"(c) {count} sequential warm calls from a shell loop: {count / elapsed:.1f} calls/s; daemon memory "
        f"{before / 2**20:.1f} -> {after / 2**20:.1f} MiB ({growth / 2**20:+.1f})"
        + ("" if good else "  GROWTH")
    )
    return good


if __name__ == "__main__":
    raise SystemExit(main())
