"""The once-only hint for a program whose directory is not on ``PATH`` (``frontends.path_hint``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from orbmcp.frontends.path_hint import MARKER, hint


def test_a_program_off_the_path_gets_the_line_once(tmp_path: Path) -> None:
    program = tmp_path / ".local" / "bin" / "orbmcp"
    environ = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = hint(str(program), environ, tmp_path / "cache")
    assert first is not None
    assert first.endswith('export PATH="$HOME/.local/bin:$PATH"')
    assert str(program.parent) in first
    assert (tmp_path / "cache" / MARKER).exists()
    assert hint(str(program), environ, tmp_path / "cache") is None


def test_no_hint_on_the_path_or_under_another_name(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    on_path = {"HOME": "/nowhere", "PATH": f"/usr/bin:{bin_dir}"}
    assert hint(str(bin_dir / "orbmcp"), on_path, tmp_path / "cache") is None
    off_path = {"HOME": "/nowhere", "PATH": "/usr/bin"}
    assert hint(str(bin_dir / "__main__.py"), off_path, tmp_path / "cache") is None
    assert hint("orbmcp", off_path, tmp_path / "cache") is None
    assert not (tmp_path / "cache").exists()


def test_a_path_outside_the_home_is_escaped_for_the_shell(tmp_path: Path) -> None:
    odd = tmp_path / 'we"ird $dir'
    line = hint(str(odd / "orbmcp"), {"HOME": "/nowhere", "PATH": ""}, tmp_path / "cache")
    assert line is not None
    assert line.endswith(f'export PATH="{tmp_path}/we\\"ird \\$dir:$PATH"')


def test_an_unwritable_cache_means_no_hint(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    assert hint(str(tmp_path / "bin" / "orbmcp"), {"PATH": ""}, blocker / "cache") is None


def test_the_program_prints_it_on_stderr_once(tmp_path: Path) -> None:
    """The installed program, through a link in a directory that is not on PATH (the README's
    install line on a fresh account): the hint on stderr the first time, the output untouched."""
    bin_dir = tmp_path / "home" / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "orbmcp"
    script.write_text(
        f"#!{sys.executable}\nfrom orbmcp.fastpath.entry import main\nmain()\n", encoding="utf-8"
    )
    script.chmod(0o755)
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [
        subprocess.run(
            [str(script), "--version"], env=env, capture_output=True, text=True, timeout=60, check=True
        )
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stdout.startswith("orbmcp ")
    assert 'export PATH="$HOME/.local/bin:$PATH"' in runs[0].stderr
    assert runs[1].stderr == ""
