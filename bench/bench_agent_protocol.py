"""The agent protocol: a ``/mcp`` round trip through ``orbmcp slash --stdio`` with 13 servers.

An agent (pi's extension, ``orbmcp integrate pi``) keeps one ``orbmcp slash --stdio`` process
for its session and sends each ``/mcp`` line as a ``run`` request. With 13 eager light stdio
servers configured (``tests/servers/light.py`` under ``python -S``), the first ``run`` connects
them; the figure is the median of the warm round trips after it (request written to ``result``
read). Budget: median <= 30 ms. Beside it, the same line as one process per command
(``orbmcp slash /mcp``, what an agent without the protocol and without a daemon pays), and the
protocol again with a session daemon running (``orbmcp daemon start``): each line then goes
through the daemon (``ready`` names its pid), warm after the daemon's first ``/mcp``.

    python -m bench.bench_agent_protocol [--servers N] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
BUDGET_MS = 30.0


def _read_message(proc: subprocess.Popen[str], kind: str, timeout: float = 120.0) -> dict[str, object]:
    assert proc.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not selector.select(deadline - time.monotonic()):
            break
        line = proc.stdout.readline()
        if not line:
            break
        message = json.loads(line)
        if message.get("type") == kind:
            return dict(message)
    raise RuntimeError(f"no {kind} message from orbmcp slash --stdio")


def _run(proc: subprocess.Popen[str], request_id: str, line: str) -> tuple[dict[str, object], float]:
    assert proc.stdin is not None
    started = time.perf_counter()
    proc.stdin.write(json.dumps({"type": "run", "id": request_id, "line": line}) + "\n")
    proc.stdin.flush()
    result = _read_message(proc, "result")
    return result, (time.perf_counter() - started) * 1000


def _round_trips(env: dict[str, str], cwd: Path, runs: int) -> tuple[dict[str, object], float, list[float]]:
    """One ``slash --stdio`` process: its ready message, the first ``/mcp``, then warm ones."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "orbmcp", "slash", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    try:
        ready = _read_message(proc, "ready")
        first, first_ms = _run(proc, "warm-up", "/mcp")
        assert first.get("exit") == 0, first
        times = []
        for n in range(runs):
            result, ms = _run(proc, f"r{n}", "/mcp")
            assert result.get("exit") == 0, result
            times.append(ms)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    return ready, first_ms, times


def _p90(times: list[float]) -> float:
    return sorted(times)[int(len(times) * 0.9)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_agent_protocol")
    parser.add_argument("--servers", type=int, default=13)
    parser.add_argument("--runs", type=int, default=40)
    args, _ = parser.parse_known_args(argv)
    with tempfile.TemporaryDirectory(prefix="orbmcp-bench-agent-") as tmp_name:
        tmp = Path(tmp_name)
        agent = tmp / "agent"
        agent.mkdir()
        servers = {
            f"s{n}": {
                "command": sys.executable,
                "args": ["-S", str(SERVERS / "light.py"), "0", f"bench-agent-s{n}"],
            }
            for n in range(args.servers)
        }
        (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        env = {**os.environ, "ORB_AGENT_DIR": str(agent), "HOME": str(tmp), "ORBMCP_NO_DAEMON": "1"}
        _ready, first_ms, times = _round_trips(env, tmp, args.runs)
        one_shot = []
        for _ in range(3):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "orbmcp", "slash", "/mcp"],
                env=env,
                cwd=tmp,
                capture_output=True,
                timeout=300,
                check=True,
            )
            one_shot.append((time.perf_counter() - started) * 1000)
        # The same agent with a session daemon running: each line goes through the daemon.
        with_daemon = {k: v for k, v in env.items() if k != "ORBMCP_NO_DAEMON"}
        orbmcp = [sys.executable, "-m", "orbmcp"]
        subprocess.run(
            [*orbmcp, "daemon", "start"], env=with_daemon, cwd=tmp, capture_output=True, check=True
        )
        try:
            ready, daemon_first_ms, daemon_times = _round_trips(with_daemon, tmp, args.runs)
        finally:
            stop = [*orbmcp, "daemon", "stop"]
            subprocess.run(stop, env=with_daemon, cwd=tmp, capture_output=True, timeout=120, check=False)
        assert ready.get("daemon"), f"no daemon answered slash --stdio: {ready}"
    median = statistics.median(times)
    one = statistics.median(one_shot)
    through = statistics.median(daemon_times)
    print(f"servers: {args.servers}; first /mcp (connects them): {first_ms:.0f} ms")
    print(f"/mcp through slash --stdio, warm: median {median:.1f} ms, p90 {_p90(times):.1f} ms")
    print(
        f"/mcp through slash --stdio with the session daemon (pid {ready['daemon']}): first "
        f"{daemon_first_ms:.0f} ms, then median {through:.1f} ms, p90 {_p90(daemon_times):.1f} ms"
    )
    print(f"/mcp as one process per command (orbmcp slash /mcp): median {one:.0f} ms ({one / median:.0f}x)")
    within = median <= BUDGET_MS and through <= BUDGET_MS
    print(f"budget: median <= {BUDGET_MS:.0f} ms (both): {'within' if within else 'OVER'}")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
