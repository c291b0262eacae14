"""ruff and mypy as part of the test command, overlapping the tests instead of adding to them.

The process that runs the session (the pytest-xdist controller, or pytest itself without workers)
starts every check as a background process when the session starts; the tests in
``tests/test_quality.py`` wait for a check's exit status and judge its output, whichever process
runs them. Each check writes ``<name>.out``, then ``<name>.rc`` (renamed into place, so a reader
never sees half of it) into a directory named by ``ORBMCP_QUALITY_DIR``.

mypy keeps its incremental cache in the checkout's ``.mypy_cache`` (the checkout's own: two
checkouts never share one), so a warm run takes seconds and a cold one about a minute.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DIR_ENV = "ORBMCP_QUALITY_DIR"
# A cold mypy run takes about a minute on a loaded machine; this only stops a wedged check.
WAIT_S = 600.0

CHECKS: dict[str, list[str]] = {
    "ruff-lint": [str(BIN / "ruff"), "check", "orbmcp", "tests", "bench", "scripts"],
    "ruff-format": [str(BIN / "ruff"), "format", "--check", "orbmcp", "tests"],
    "mypy": [str(BIN / "mypy"), f"--cache-dir={ROOT / '.mypy_cache'}", "orbmcp"],
}


def start(directory: Path) -> list[subprocess.Popen[bytes]]:
    """Start every check in the background; ``ORBMCP_QUALITY_DIR`` tells the tests where to look."""
    directory.mkdir(parents=True, exist_ok=True)
    os.environ[DIR_ENV] = str(directory)
    # Coverage measures orbmcp, not its linters: no coverage start-up in mypy's interpreter.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "COVERAGE_"))}
    procs = []
    for name, argv in CHECKS.items():
        out, rc = directory / f"{name}.out", directory / f"{name}.rc"
        script = f'{shlex.join(argv)} >{shlex.quote(str(out))} 2>&1; echo $? >"$0.tmp" && mv "$0.tmp" "$0"'
        procs.append(
            subprocess.Popen(
                ["sh", "-c", script, str(rc)],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
    return procs


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """At the end of the session: a check still running (the session was cut short) is stopped."""
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
        proc.wait()


def result(name: str) -> tuple[int, str]:
    """The exit status and output of check ``name``: waits for the background run to finish, or
    runs it here when no session started it (e.g. ``pytest tests/test_quality.py -p no:...``)."""
    directory = os.environ.get(DIR_ENV)
    if not directory:
        done = subprocess.run(
            CHECKS[name], cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S, check=False
        )
        return done.returncode, done.stdout + done.stderr
    rc = Path(directory) / f"{name}.rc"
    deadline = time.monotonic() + WAIT_S
    while not rc.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} did not finish within {WAIT_S:.0f} s")
        time.sleep(0.1)  # another process runs the check; its exit status arrives as this file
    return int(rc.read_text()), (Path(directory) / f"{name}.out").read_text(errors="replace")
