"""Every module of orbmcp stays under 500 lines (the project's standard): past it, a module holds
more than one idea and should be split by what it is about."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "orbmcp"
MAX_LINES = 500


def test_every_module_is_under_500_lines() -> None:
    too_long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in sorted(PACKAGE.rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) >= MAX_LINES
    }
    assert too_long == {}, f"split these modules (lines): {too_long}"
