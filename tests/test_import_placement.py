"""Imports sit at module top, like ordinary Python (issue 25, item 4): a function-local import is
allowed only in a module on ``ALLOWED``, each entry with its reason. The reasons are the start-up
budgets (``--help``, ``--version``, completion and the daemon client import no SDK; the config
commands load no connection module: ``tests/fastpath/test_import_sets.py``,
``tests/config/test_imports.py``, ``bench/bench_startup.py``), an optional extra, and the registries'
lazy bindings. The fast-path package (``orbmcp/fastpath/``) hands over to the rest by
function-level imports by design and is not checked here.

A module that no longer imports inside a function must leave the list.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "orbmcp"
HAND_OVER_PACKAGE = "orbmcp/fastpath/"  # the fast paths: stdlib at top, the rest when handed over

BUDGET_HELP = "budget: every command (--help included) imports it"
ALLOWED: dict[str, str] = {
    # -- each local import has a comment, or the module's docstring says why
    "orbmcp/__init__.py": "the lazy public facade: `import orbmcp` loads no error or config module",
    "orbmcp/__main__.py": "budget: every command starts here; serve's request handler loads the SDK",
    "orbmcp/front_handlers.py": "the fronts' handler registry: typed lazy references, no handler imported",
    "orbmcp/auth/flow.py": "budget: `status` imports it and never loads mcp/httpx2 (tests/auth)",
    "orbmcp/auth/storage.py": "budget: `status` reads these files without the SDK's models",
    "orbmcp/auth/keyring_store.py": "keyring is an optional extra; its absence is a message",
    "orbmcp/commands/adhoc.py": "budget: every command line passes through place_server; pydantic on use",
    "orbmcp/commands/complete.py": "budget: completion runs on every Tab",
    "orbmcp/commands/context.py": "budget: --help and completion never load the config's models",
    "orbmcp/commands/pipe_notes.py": "budget: the config commands import it and load no anyio",
    "orbmcp/commands/views.py": "budget: `config show` loads no connection module",
    "orbmcp/core/capabilities/client_side.py": "budget: an empty `status` builds supervisors without the SDK",
    "orbmcp/core/wire/connect.py": "budget: the SDK import overlaps a server's start; empty `status`",
    "orbmcp/core/wire/sdk.py": BUDGET_HELP,
    "orbmcp/daemon/control.py": "budget: `daemon status` asks over the socket only (no anyio/psutil)",
    "orbmcp/frontends/handlers.py": "budget: `complete` through Typer loads no REPL or connection",
    "orbmcp/frontends/path_hint.py": "budget: every start runs it; fs (pathlib) only to write the marker once",
    "orbmcp/frontends/process_tuning.py": "budget: commands that never connect pay nothing",
    "orbmcp/frontends/shell.py": "readline may be missing from the Python build",
    "orbmcp/fs.py": "budget: filelock only when a lock is first taken (completion writes none)",
    "orbmcp/processes.py": "budget: psutil on first use; the daemon client asks about no process",
    "orbmcp/render/__init__.py": "budget: rich only for a terminal (tests/render)",
    "orbmcp/render/plain/__init__.py": "the renderer registry: a family's module on its first result",
    "orbmcp/render/plain/status.py": "budget: check_formats (xml, urllib) only for --format github",
    # -- config: the config-only start-up budget, optional file formats
    "orbmcp/config/client_documents.py": "tomllib (~12 ms) only for Codex's file, and only when it changed",
    "orbmcp/config/jsonc.py": "json5 (~6 ms) only for a file plain JSON cannot read",
    "orbmcp/config/jsonc_edit.py": "json5 only for an edit that needs JSON5 quoting or escapes",
    "orbmcp/config/model.py": "budget: hashlib (~2 ms) is never needed by the config commands",
    "orbmcp/config/names_cache.py": "budget: completion starts the refreshing child only when stale",
    "orbmcp/config/trust.py": "budget: hashlib only for a project with config files",
    "orbmcp/config/transports.py": "budget: stdlib kinds (daemon client); entry models on first use",
    "orbmcp/environment.py": "budget: the daemon client (every invocation) reads only text",
    # -- the tools/call paths
    "orbmcp/core/tooling/call_paths.py": "budget: the SDK loads once, through core/wire/sdk.py's tuned import",
    "orbmcp/core/tooling/calls.py": "budget: the SDK loads once, through core/wire/sdk.py's tuned import",
    "orbmcp/core/tooling/results.py": "budget: the SDK loads once, through core/wire/sdk.py's tuned import",
    "orbmcp/core/tooling/toolcache.py": "budget: completion reads the cache; the writer only on a write",
    "orbmcp/core/wire/raw_channel.py": "budget: the SDK loads once, through core/wire/sdk.py's tuned import",
    # -- the session layer and the pytest plugin
    "orbmcp/session/command_line.py": "budget: --help parses here; the speller only on a usage error",
    "orbmcp/session/console.py": "budget: --help and --version make a console; input helpers on use",
    "orbmcp/session/daemon_scope.py": "budget: the daemon client computes a scope: no pathlib, fs",
    "orbmcp/session/holder.py": "budget: an empty `status` holds a one-shot session without anyio",
    "orbmcp/session/handler_refs.py": "the command handlers' registry: typed lazy references",
    "orbmcp/session/one_shot.py": "budget: an empty `status` runs without an event loop (no anyio)",
    "orbmcp/session/runner.py": "budget: every shell command runs here; each loads what it needs",
    "orbmcp/session/slash.py": "budget: completion (every Tab) imports it; Click's parser on a run",
    "orbmcp/session/terminal.py": "budget: an empty `status` makes the terminal UI without anyio",
    "orbmcp/testing/__init__.py": "the plugin loads in every pytest session: the rest on first use",
    "orbmcp/testing/plugin.py": "the plugin loads in every pytest session: the rest on first use",
}


def function_local_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, statement) of every import whose nearest enclosing scope is a function."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                found.append((child.lineno, ast.unparse(child)))
            visit(
                child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            )

    visit(tree, False)
    return found


def local_imports_by_module() -> dict[str, list[tuple[int, str]]]:
    by_module: dict[str, list[tuple[int, str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(HAND_OVER_PACKAGE):
            continue
        found = function_local_imports(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            by_module[rel] = found
    return by_module


def test_function_local_imports_only_where_a_reason_is_recorded() -> None:
    unexplained = {rel: found for rel, found in local_imports_by_module().items() if rel not in ALLOWED}
    assert unexplained == {}, (
        "move these imports to the module's top (or, where a start-up budget or a real cycle needs "
        "one, add the module to ALLOWED with the reason and a comment at the import):\n"
        + "\n".join(f"{rel}:{line}: {text}" for rel, found in unexplained.items() for line, text in found)
    )


def test_every_allowed_module_still_imports_inside_a_function() -> None:
    stale = sorted(set(ALLOWED) - set(local_imports_by_module()))
    assert stale == [], f"no function-local import left: remove from ALLOWED: {stale}"


def test_every_reason_is_one_short_line() -> None:
    for rel, reason in ALLOWED.items():
        assert (ROOT / rel).is_file(), rel
        assert reason and "\n" not in reason and len(reason) <= 80, rel


def test_the_walk_finds_imports_in_functions_methods_and_nested_blocks_only() -> None:
    tree = ast.parse(
        "import os\n"
        "if os:\n    import sys\n"
        "class C:\n    import json\n"
        "    def m(self):\n        if self:\n            from a import b\n"
        "async def f():\n    try:\n        import c\n    except ImportError:\n        pass\n"
    )
    assert function_local_imports(tree) == [(8, "from a import b"), (11, "import c")]
