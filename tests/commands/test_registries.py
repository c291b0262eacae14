"""Commands find their handlers, and results their renderers, through code mypy and an editor can
follow: no handler or renderer is named by a "module:function" string anywhere in orbmcp/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from orbmcp import front_handlers
from orbmcp.commands.table import COMMANDS
from orbmcp.session import handler_refs

PACKAGE = Path(__file__).resolve().parents[2] / "orbmcp"
# "pkg.module:function", ".module:function" (an f-string's tail) or "module:function".
MODULE_FUNCTION = re.compile(r"(?:[\w.]*\.)?(\w+):([A-Za-z_]\w*)")


def _string_parts(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string literal, and every literal part of an f-string, with its line."""
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def module_function_strings(root: Path) -> list[str]:
    stems = {p.stem for p in root.rglob("*.py")} - {"__init__"}
    found = []
    for path in sorted(root.rglob("*.py")):
        for line, text in _string_parts(ast.parse(path.read_text(encoding="utf-8"))):
            match = MODULE_FUNCTION.fullmatch(text.strip())
            if match and match.group(1) in stems:
                found.append(f"{path.relative_to(root.parent)}:{line}: {text!r}")
    return found


def test_no_module_function_string_names_a_handler_or_a_renderer() -> None:
    assert module_function_strings(PACKAGE) == []


def test_the_check_finds_such_strings(tmp_path: Path) -> None:
    (tmp_path / "status.py").write_text("")
    (tmp_path / "table.py").write_text(
        'H = "orbmcp.commands.handlers"\nA = f"{H}.status:status"\nB = "status:status_report"\n'
        'C = "servers:stopped"\nD = "import:cursor"\n'
    )
    assert [s.rsplit(": ", 1)[1] for s in module_function_strings(tmp_path)] == [
        "'.status:status'",
        "'status:status_report'",
    ]


def test_every_command_has_one_handler_and_every_handler_names_a_command() -> None:
    paths = [spec.path for spec in COMMANDS]
    assert not set(handler_refs.HANDLERS) & set(front_handlers.FRONT_HANDLERS)
    assert sorted(handler_refs.HANDLERS | front_handlers.FRONT_HANDLERS) == sorted(paths)
    front_handlers.bind()
    for spec in COMMANDS:
        assert callable(handler_refs.handler_of(spec)), spec.name


def test_an_unbound_command_is_a_clear_error() -> None:
    from orbmcp.commands.spec import CommandSpec

    with pytest.raises(LookupError, match="no handler bound for 'nowhere'"):
        handler_refs.handler_of(CommandSpec(("nowhere",), "unbound"))


HANDLER_PROBE = """
import contextlib, io, json, sys
sys.argv = ["orbmcp", *json.loads(sys.argv[1])]
from orbmcp.fastpath.entry import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""
# what running a command imports: its handler, the renderers, the SDK and the event loop
HANDLER_MODULES = ("orbmcp.commands.handlers.", "orbmcp.frontends.handlers", "orbmcp.serve.command")
HEAVY = {"mcp", "anyio", "pydantic", "httpx2"}


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["complete", "/mcp:start "], ["call", "--help"]])
def test_help_version_and_complete_import_no_handler(args: list[str]) -> None:
    import json
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-c", HANDLER_PROBE, json.dumps(args)],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    loaded = json.loads(r.stdout.splitlines()[-1])
    assert [m for m in loaded if m.startswith(HANDLER_MODULES) or m == "orbmcp.daemon.control"] == []
    assert {m.split(".")[0] for m in loaded} & HEAVY == set()


def test_a_renderer_module_is_imported_when_a_result_of_its_kind_is_first_shown() -> None:
    import json
    import subprocess
    import sys

    probe = (
        "import json, sys\n"
        "from orbmcp.commands.results.config import PathsView, TrustRevoked\n"
        "from orbmcp.render.plain import renderer_for\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('orbmcp.render.plain.'))\n"
        "first = renderer_for(PathsView).__name__, loaded()\n"
        "print(json.dumps([first, (renderer_for(TrustRevoked).__name__, loaded())]))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    (paths, after_paths), (revoked, after_revoked) = json.loads(r.stdout)
    assert (paths, after_paths) == (
        "paths_view",
        ["orbmcp.render.plain.config", "orbmcp.render.plain.dispatch"],
    )
    # a sentence of the config family: its family has no renderer for it, its base's (basic) has
    assert revoked == "statement" and "orbmcp.render.plain.basic" in after_revoked
