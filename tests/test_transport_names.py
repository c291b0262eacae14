"""No module compares transport names: each asks the transport's kind (``config/transports.py``)
or its module (``core/wire/transports/``), so adding a transport touches those and nothing else.

Every comparison in orbmcp/ with a transport's name or spelling on one side fails here, except in
the module that defines them and where the word is not a server's transport: a URL's scheme, an
ASGI scope's type, and how ``orbmcp serve`` itself is served (its listener, not a server it
reaches). The command-line options (``--stdio``, ``--http``, ``--sse``) count as names.
"""

from __future__ import annotations

import ast
from pathlib import Path

from orbmcp.config.transports import KINDS

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "orbmcp"
WORDS = {spelling for kind in KINDS.values() for spelling in (kind.name, kind.option, *kind.spellings)}
NAMES = WORDS | {f"--{word}" for word in WORDS}

DEFINING = {"orbmcp/config/transports.py"}
NOT_A_SERVER_TRANSPORT = {
    "orbmcp/serve/http.py",  # scope["type"] != "http": an ASGI scope, not a transport
    "orbmcp/daemon/serve_client.py",  # a serve request's listener: how serve is served
}


def _names_in(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    return set()


def compares_of_transport_names(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if "scheme" in ast.unparse(node):
            continue  # a URL's scheme ("http"), not a transport
        if any(_names_in(side) for side in sides):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_compares_transport_names() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in DEFINING | NOT_A_SERVER_TRANSPORT:
            continue
        found += compares_of_transport_names(path)
    assert found == [], "ask the transport's kind (orbmcp/config/transports.py) instead:\n" + "\n".join(found)
