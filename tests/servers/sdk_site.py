"""Site-packages on the path of an SDK-built test server started with ``python -S``
(``tests/servers/launch.py``), without running their .pth files: the coverage start-up among
them would trace a server in which no orbmcp code runs (~0.08 s of CPU per start).

Imported by the server scripts as a top-level module (their directory is ``sys.path[0]``).
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path


def add() -> None:
    """Add the interpreter's site-packages (its venv's, under a venv) to ``sys.path``."""
    prefix = Path(sys.executable).parent.parent
    if not (prefix / "pyvenv.cfg").exists():
        prefix = Path(sys.prefix)
    paths = sysconfig.get_paths(vars={"base": str(prefix), "platbase": str(prefix)})
    for key in ("purelib", "platlib"):
        if paths[key] not in sys.path:
            sys.path.append(paths[key])
