"""The one-time hint for a program that is not on ``PATH``.

The README installs orbmcp into a virtual environment and links it into ``~/.local/bin``; on a
fresh account that directory is not on ``PATH`` yet, so the README runs the program by its full
path, and the program says, once, the exact line that makes plain ``orbmcp`` work. "Once" is a
marker file in orbmcp's cache directory. Stdlib only: this runs on every start of the program.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from orbmcp import fs

MARKER = "path-hint-shown"
PROGRAM = "orbmcp"


def hint(argv0: str, environ: Mapping[str, str], cache_dir: Path) -> str | None:
    """The line to print, or None: the program was not started as ``orbmcp``, its directory is on
    ``PATH`` already, or the hint was shown before (the marker is written here)."""
    program = Path(argv0)
    if program.name != PROGRAM or not program.is_absolute():
        return None
    directory = program.parent
    if _on_path(directory, environ.get("PATH", "")):
        return None
    marker = cache_dir / MARKER
    if marker.exists():
        return None
    try:
        fs.ensure_private_dir(cache_dir)
        marker.touch(mode=0o600)
    except OSError:
        return None  # a read-only home: better no hint than one on every start
    return (
        f"orbmcp: {directory} is not on your PATH; to run plain `orbmcp`, add this line to your "
        f'shell\'s startup file (~/.bashrc, ~/.zshrc): export PATH="{_spelled(directory, environ)}:$PATH"'
    )


def _on_path(directory: Path, path: str) -> bool:
    try:
        wanted = directory.resolve()
    except OSError:
        return False
    return any(entry and Path(entry).expanduser().resolve() == wanted for entry in path.split(os.pathsep))


def _spelled(directory: Path, environ: Mapping[str, str]) -> str:
    """``$HOME/.local/bin`` for a directory under the home, else the path, escaped for a
    double-quoted shell word."""
    home = environ.get("HOME", "")
    if home and directory.is_relative_to(home) and directory != Path(home):
        return "$HOME/" + _escaped(str(directory.relative_to(home)))
    return _escaped(str(directory))


def _escaped(text: str) -> str:
    return "".join("\\" + char if char in '"\\$`' else char for char in text)
