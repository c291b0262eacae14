"""The fast-path package stays standard-library only: importing any of its modules, and what they
import at their top, loads no third-party package (the paths they serve run on every Tab and on
every command a daemon answers)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "orbmcp" / "fastpath"
THIRD_PARTY = ["mcp", "httpx2", "anyio", "pydantic", "typer", "click", "rich", "psutil", "filelock", "json5"]

PROBE = """
import json, sys
for name in sys.argv[1:]:
    __import__(name)
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def _modules() -> list[str]:
    return sorted(f"orbmcp.fastpath.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def test_the_package_holds_the_entry_the_daemon_client_and_argv() -> None:
    assert _modules() == ["orbmcp.fastpath.argv", "orbmcp.fastpath.daemon_client", "orbmcp.fastpath.entry"]


def test_importing_every_fast_path_module_loads_no_third_party_package() -> None:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, "orbmcp.fastpath", *_modules()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    loaded = set(json.loads(r.stdout))
    assert loaded & set(THIRD_PARTY) == set()


def test_no_fast_path_module_imports_a_third_party_package_at_its_top() -> None:
    # Function-level imports are how a fast path hands over to the rest (the Typer app, the
    # daemon's control); at module top only the standard library and orbmcp itself.
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top == "orbmcp" or top in sys.stdlib_module_names or top == "__future__", (
                    path.name,
                    name,
                )
