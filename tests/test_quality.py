"""Lint and strict type checks are part of the test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_ruff_lint() -> None:
    r = _run(str(BIN / "ruff"), "check", "orbmcp", "tests", "bench")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format() -> None:
    r = _run(str(BIN / "ruff"), "format", "--check", "orbmcp")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict() -> None:
    r = _run(str(BIN / "mypy"), "--cache-dir=/tmp/orbmcp-mypy-cache", "orbmcp")
    assert r.returncode == 0, r.stdout + r.stderr


def test_layers_do_not_import_front_end_libraries() -> None:
    offenders = []
    for layer in ("core", "config", "auth", "commands"):
        for path in (ROOT / "orbmcp" / layer).rglob("*.py"):
            for line in path.read_text().splitlines():
                s = line.strip()
                if s.startswith(("import typer", "from typer", "import rich", "from rich")):
                    offenders.append(f"{path.relative_to(ROOT)}: {s}")
    assert offenders == []
