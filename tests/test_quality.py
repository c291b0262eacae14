"""Lint and strict type checks are part of the test command.

They run in the background from the start of the session (``tests/quality.py``); these tests
wait for their results, so they add little to the suite's wall time.
"""

from __future__ import annotations

from pathlib import Path

from tests import quality

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_lint() -> None:
    code, output = quality.result("ruff-lint")
    assert code == 0, output


def test_ruff_format() -> None:
    code, output = quality.result("ruff-format")
    assert code == 0, output


def test_mypy_strict() -> None:
    code, output = quality.result("mypy")
    assert code == 0, output


def test_layers_do_not_import_front_end_libraries() -> None:
    offenders = []
    for layer in ("core", "config", "auth", "commands"):
        for path in (ROOT / "orbmcp" / layer).rglob("*.py"):
            for line in path.read_text().splitlines():
                s = line.strip()
                if s.startswith(("import typer", "from typer", "import rich", "from rich")):
                    offenders.append(f"{path.relative_to(ROOT)}: {s}")
    assert offenders == []
