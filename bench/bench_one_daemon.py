"""One daemon per user: three directories with a global-only config share one daemon.

With ``"daemon": "auto"`` in the global settings and SERVERS eager light stdio servers
(``tests/servers/light.py`` under ``python -S``), ``orbmcp status`` runs in three directories
that add no configuration. Then psutil counts, among the live processes, the session daemons of
that global dir and the processes of each server. Budget: one daemon, one process per server (a
daemon per directory, as before, gave three daemons and three processes per server). It also
prints the daemon's resident memory and the warm ``status`` time in each directory (reported,
not budgeted: the subject is the count).

    python -m bench.bench_one_daemon [--servers N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
DIRECTORIES = 3


def _daemons(agent: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "environ", "status"]):
        cmdline = proc.info["cmdline"] or []
        environ = proc.info["environ"] or {}
        if (
            "--foreground" in cmdline
            and "daemon" in cmdline
            and environ.get("ORB_AGENT_DIR") == str(agent)
            and proc.info["status"] != psutil.STATUS_ZOMBIE
        ):
            found.append(proc)
    return found


def _server_processes(marker: str) -> int:
    count = 0
    for proc in psutil.process_iter(["cmdline", "status"]):
        if marker in (proc.info["cmdline"] or []) and proc.info["status"] != psutil.STATUS_ZOMBIE:
            count += 1
    return count


def _orbmcp(env: dict[str, str], cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "orbmcp", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return proc, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_one_daemon")
    parser.add_argument("--servers", type=int, default=3)
    args, _ = parser.parse_known_args(argv)
    with tempfile.TemporaryDirectory(prefix="orbmcp-bench-one-daemon-") as tmp_name:
        tmp = Path(tmp_name)
        agent = tmp / "agent"
        agent.mkdir()
        markers = {f"s{n}": f"bench-one-daemon-s{n}" for n in range(args.servers)}
        servers = {
            name: {"command": sys.executable, "args": ["-S", str(SERVERS / "light.py"), "0", marker]}
            for name, marker in markers.items()
        }
        (agent / "mcp.json").write_text(
            json.dumps({"mcpServers": servers, "settings": {"daemon": "auto"}}), encoding="utf-8"
        )
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ORBMCP_")},
            "ORB_AGENT_DIR": str(agent),
            "NO_COLOR": "1",
            "PYTHONPATH": str(ROOT),
        }
        dirs = [tmp / f"dir{n}" for n in range(DIRECTORIES)]
        try:
            for directory in dirs:
                directory.mkdir()
                first, _ = _orbmcp(env, directory, "status", "--json")
                if first.returncode != 0:
                    print(f"orbmcp status failed in {directory}: {first.stderr.strip()[-300:]}")
                    return 1
            warm = [_orbmcp(env, directory, "status", "--json")[1] for directory in dirs]
            daemons = _daemons(agent)
            counts = {name: _server_processes(marker) for name, marker in markers.items()}
            rss = sum(p.memory_info().rss for p in daemons) / (1024 * 1024)
            per_server = max(counts.values(), default=0)
            print(
                f"{DIRECTORIES} directories, {args.servers} servers (global-only config, daemon auto): "
                f"{len(daemons)} daemon(s), {sum(counts.values())} server process(es) "
                f"(at most {per_server} per server; budget 1 daemon, 1 per server)"
            )
            print(
                f"daemon memory {rss:.1f} MiB; warm `status` per directory: "
                + ", ".join(f"{t * 1000:.0f} ms" for t in warm)
            )
            ok = len(daemons) == 1 and all(c == 1 for c in counts.values())
            print("ok" if ok else "OVER BUDGET")
            return 0 if ok else 1
        finally:
            _orbmcp(env, dirs[0], "daemon", "stop")
            for proc in _daemons(agent):
                proc.terminate()


if __name__ == "__main__":
    raise SystemExit(main())
