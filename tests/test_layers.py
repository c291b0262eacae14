"""The import order of orbmcp's layers, enforced: every import (function-level ones included,
``if TYPE_CHECKING:`` blocks aside) goes to the same layer or one below; no chain of imports
between modules comes back to where it started, ``if TYPE_CHECKING:`` imports counted too (a lower
module that needs a higher type takes a small Protocol instead); and no front imports another.

The order is the one ARCHITECTURE.md draws; keep the two in step.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "orbmcp"

# Lowest first. A module belongs to the longest entry that is its name or a prefix of it (the fast
# paths are one package across layers: ``fastpath.argv`` sits with the commands, ``fastpath.entry``
# above the fronts).
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "orbmcp.errors",
        "orbmcp._version",
        "orbmcp.text",
        "orbmcp.fs",
        "orbmcp.processes",
        "orbmcp.suggest",
        "orbmcp.environment",
    ),
    ("orbmcp.redact", "orbmcp.log"),
    ("orbmcp.config", "orbmcp.integrate"),
    ("orbmcp.net",),
    ("orbmcp.auth",),
    ("orbmcp.core",),
    ("orbmcp.commands", "orbmcp.fastpath.argv"),
    ("orbmcp.render",),
    ("orbmcp.session",),
    ("orbmcp.frontends", "orbmcp.host", "orbmcp.daemon", "orbmcp.serve", "orbmcp.testing", "orbmcp.fastpath"),
    # the program's entry point: its fast paths, then the fronts
    (
        "orbmcp.__main__",
        "orbmcp.fastpath.entry",
        "orbmcp.front_handlers",
        "orbmcp",
    ),  # the package root is the lazy public facade: it may import anything
)

# Imports that still run the wrong way, as (importer, imported) modules. The house issue burns
# this down to nothing; a new entry is a regression.
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()
# Cycles closed only by ``if TYPE_CHECKING:`` imports: none (a lower module that needs a higher
# type takes a small Protocol of its own: serve.served, daemon.connection.Daemon, ...).
KNOWN_TYPING_CYCLES: frozenset[frozenset[str]] = frozenset()

FRONTS = ("orbmcp.frontends", "orbmcp.host", "orbmcp.daemon", "orbmcp.serve", "orbmcp.testing")
# A front's import of another front, as (importer, imported). Same rule as KNOWN_UPWARD.
KNOWN_FRONT_TO_FRONT: frozenset[tuple[str, str]] = frozenset()


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int:
    best: tuple[int, int] | None = None  # (length of the matching name, layer)
    for index, names in enumerate(LAYERS):
        for name in names:
            if name == "orbmcp" and module != "orbmcp":
                continue
            if (module == name or module.startswith(name + ".")) and (best is None or len(name) > best[0]):
                best = (len(name), index)
    if best is not None:
        return best[1]
    raise AssertionError(f"{module} is in no layer: add it to LAYERS (and ARCHITECTURE.md)")


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    return skipped


def imports_of(path: Path, *, type_checking: bool = False) -> Iterator[str]:
    """Every orbmcp module ``path`` imports at run time (the most specific existing module);
    ``type_checking``: its ``if TYPE_CHECKING:`` imports too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set() if type_checking else _type_checking_nodes(tree)
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "orbmcp":
                    yield _existing(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "orbmcp":
                continue
            for alias in node.names:  # `from orbmcp.core.wire import era` imports the module era
                candidate = f"{target}.{alias.name}"
                yield _existing(candidate) if _exists(candidate) else _existing(target)


def _exists(module: str) -> bool:
    rel = Path(*module.split("."))
    return (ROOT / rel.with_suffix(".py")).exists() or (ROOT / rel / "__init__.py").exists()


def _existing(module: str) -> str:
    while module and not _exists(module):
        module = module.rpartition(".")[0]
    return module


def graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    """Who imports whom in orbmcp (a copy: a test may change its own)."""
    return {me: set(targets) for me, targets in _graph(type_checking).items()}


@functools.cache
def _graph(type_checking: bool) -> dict[str, frozenset[str]]:
    """Parsed once per process for the four tests that read it (~1.5 s of CPU per parse of
    every module); the sources do not change during a run."""
    edges: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        me = module_name(path)
        for target in imports_of(path, type_checking=type_checking):
            if target and target != me and not me.startswith(target + "."):
                edges[me].add(target)
    return {me: frozenset(targets) for me, targets in edges.items()}


def test_every_module_has_a_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        layer_of(module_name(path))


def test_imports_never_run_up_the_layers() -> None:
    upward = {
        (me, target)
        for me, targets in graph().items()
        for target in targets
        if layer_of(target) > layer_of(me)
    }
    new = sorted(upward - KNOWN_UPWARD)
    assert new == [], "imports that run up the layers (see LAYERS):\n" + "\n".join(
        f"{a} -> {b}" for a, b in new
    )
    gone = sorted(KNOWN_UPWARD - upward)
    assert gone == [], "fixed, remove from KNOWN_UPWARD: " + repr(gone)


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: set[str] = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    cycles = set(_cycles(graph()))
    new = [sorted(c) for c in cycles - KNOWN_CYCLES]
    assert new == [], f"import cycles: {new}"
    gone = [sorted(c) for c in KNOWN_CYCLES - cycles]
    assert gone == [], f"fixed, remove from KNOWN_CYCLES: {gone}"


def test_no_import_cycles_even_through_type_checking_imports() -> None:
    cycles = set(_cycles(graph(type_checking=True)))
    new = [sorted(c) for c in cycles - KNOWN_TYPING_CYCLES]
    assert new == [], f"import cycles (TYPE_CHECKING imports counted): {new}"
    gone = [sorted(c) for c in KNOWN_TYPING_CYCLES - cycles]
    assert gone == [], f"fixed, remove from KNOWN_TYPING_CYCLES: {gone}"


def front_of(module: str) -> str | None:
    for front in FRONTS:
        if module == front or module.startswith(front + "."):
            return front
    return None


def test_no_front_imports_another() -> None:
    """The fronts share the session layer (``orbmcp.session``) and what lies below it, never each
    other: TYPE_CHECKING imports count, since a type of another front is a dependency on it."""
    crossing = {
        (me, target)
        for me, targets in graph(type_checking=True).items()
        for target in targets
        if front_of(me) is not None and front_of(target) not in (None, front_of(me))
    }
    new = sorted(crossing - KNOWN_FRONT_TO_FRONT)
    assert new == [], "a front imports another front:\n" + "\n".join(f"{a} -> {b}" for a, b in new)
    gone = sorted(KNOWN_FRONT_TO_FRONT - crossing)
    assert gone == [], "fixed, remove from KNOWN_FRONT_TO_FRONT: " + repr(gone)
