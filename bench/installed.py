"""orbmcp as a user has it: installed from this checkout (not editable), bytecode compiled.

A development checkout runs through setuptools' editable finder, which every interpreter start
imports (pathlib, importlib.util, ...: ~15 ms here); an installed orbmcp has none of that. Start-up
sensitive benchmarks measure this installation: a venv under the benchmark cache, orbmcp installed
into it with pip (``--no-deps``), its dependencies read from the running venv through a ``.pth``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "orbmcp-bench" / "installed"


def installed_python() -> Path:
    """The interpreter of a venv holding this checkout's orbmcp, installed afresh on every call."""
    venv = _cache() / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # Dependencies come from the running venv; a path line in a .pth adds the directory but never
    # runs the .pth files inside it, so the development checkout's editable finder stays out.
    (site / "orbmcp-bench-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheels = _cache() / "wheels"
    for old in wheels.glob("orbmcp-*.whl"):
        old.unlink()
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("orbmcp-*.whl")
    subprocess.run(
        [*pip, "--python", str(python), "install", "--quiet", "--no-deps", "--force-reinstall", str(wheel)],
        check=True,
        capture_output=True,
    )
    return python


def installed_orbmcp() -> Path:
    """The ``orbmcp`` console script of that installation."""
    return installed_python().with_name("orbmcp")


if __name__ == "__main__":
    print(installed_orbmcp())
