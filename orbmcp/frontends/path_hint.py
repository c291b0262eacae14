"""The one-time hint for a program that is not on ``PATH``.

The README installs orbmcp into a virtual environment and links it into ``~/.local/bin``; on a
fresh account that directory is not on ``PATH`` yet, so the README runs the program by its full
path, and the program says, once, the exact line that makes plain ``orbmcp`` work. "Once" is a
marker file in orbmcp's cache directory. This runs on every start of the program, before the
daemon's client: ``os.path`` only (no ``pathlib``, ~3 ms); the private-directory helper
(``orbmcp.fs``) is imported the one time the marker is written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from orbmcp import environment

MARKER = "path-hint-shown"
PROGRAM = "orbmcp"
DEFAULT_GLOBAL_DIR = "~/.orb/agent"  # config/paths.py global_dir's default


def cache_dir(environ: Mapping[str, str]) -> str:
    """orbmcp's cache directory (``config/paths.py``: ``global_dir() / "cache"``)."""
    return os.path.join(
        os.path.expanduser(environment.text(environment.GLOBAL_DIR, environ) or DEFAULT_GLOBAL_DIR), "cache"
    )


def hint(argv0: str, environ: Mapping[str, str], cache: str | os.PathLike[str]) -> str | None:
    """The line to print, or None: the program was not started as ``orbmcp``, its directory is on
    ``PATH`` already, or the hint was shown before (the marker is written here)."""
    if os.path.basename(argv0) != PROGRAM or not os.path.isabs(argv0):
        return None
    directory = os.path.dirname(argv0)
    if _on_path(directory, environ.get("PATH", "")):
        return None
    marker = os.path.join(cache, MARKER)
    if os.path.exists(marker):
        return None
    try:
        _write_marker(os.fspath(cache), marker)
    except OSError:
        return None  # a read-only home: better no hint than one on every start
    return (
        f"orbmcp: {directory} is not on your PATH; to run plain `orbmcp`, add this line to your "
        f'shell\'s startup file (~/.bashrc, ~/.zshrc): export PATH="{_spelled(directory, environ)}:$PATH"'
    )


def _write_marker(cache: str, marker: str) -> None:
    from pathlib import Path  # once per account: see the module docstring

    from orbmcp import fs

    fs.ensure_private_dir(Path(cache))
    os.close(os.open(marker, os.O_WRONLY | os.O_CREAT, 0o600))


def _on_path(directory: str, path: str) -> bool:
    wanted = os.path.realpath(directory)
    return any(
        entry and os.path.realpath(os.path.expanduser(entry)) == wanted for entry in path.split(os.pathsep)
    )


def _spelled(directory: str, environ: Mapping[str, str]) -> str:
    """``$HOME/.local/bin`` for a directory under the home, else the path, escaped for a
    double-quoted shell word."""
    home = environ.get("HOME", "")
    if home and directory != os.path.normpath(home) and _under(directory, home):
        return "$HOME/" + _escaped(os.path.relpath(directory, home))
    return _escaped(directory)


def _under(directory: str, home: str) -> bool:
    """``Path(directory).is_relative_to(home)``: by whole components, no symlink resolved."""
    home = os.path.normpath(home)
    return directory == home or directory.startswith(home.rstrip(os.sep) + os.sep)


def _escaped(text: str) -> str:
    return "".join("\\" + char if char in '"\\$`' else char for char in text)
