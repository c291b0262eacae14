"""completions/ and man/orbmcp.1 are generated from the command table, and must be fresh."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from orbmcp.commands.handlers.completion import script
from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.params import GLOBAL_OPTIONS
from orbmcp.commands.table import COMMANDS
from orbmcp.core.tooling import toolcache
from orbmcp.session.command_line import build_app
from tests.cli import run_cli
from tests.frontends import OFFLINE_SERVERS, PY, ROOT, env_for, write_config

GEN = ROOT / "scripts" / "gen_docs.py"


def gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module


def test_generated_files_are_fresh() -> None:
    r = subprocess.run([PY, str(GEN), "--check"], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, f"run `python scripts/gen_docs.py`: {r.stderr}"


def test_check_names_stale_and_missing_files(tmp_path: Path) -> None:
    r = subprocess.run(
        [PY, str(GEN), "--root", str(tmp_path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert r.returncode == 0 and "wrote man/orbmcp.1" in r.stdout
    check = [PY, str(GEN), "--check", "--root", str(tmp_path)]
    assert subprocess.run(check, capture_output=True, timeout=60, check=False).returncode == 0
    (tmp_path / "man" / "orbmcp.1").write_text("old\n")
    (tmp_path / "completions" / "orbmcp.fish").unlink()
    r = subprocess.run(check, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 1
    assert "stale: man/orbmcp.1" in r.stderr and "stale: completions/orbmcp.fish" in r.stderr
    assert "completions/_orbmcp" not in r.stderr


def test_the_daemon_clients_command_list_is_the_tables() -> None:
    docs = gen_docs()
    source = (ROOT / docs.ARGV).read_text(encoding="utf-8")
    emptied = source.replace('        "call",\n', "")
    assert emptied != source
    assert docs.with_daemon_commands(emptied) == source  # rewritten from the table's runs_in_daemon
    with pytest.raises(SystemExit, match="block is missing"):
        docs.with_daemon_commands(source.replace("# END DAEMON_COMMANDS", "# end"))


def _man_text() -> str:
    groff = shutil.which("groff")
    if groff is None:
        pytest.skip("groff is not installed")
    r = subprocess.run(
        [groff, "-man", "-Tutf8", "-ww", "-rLL=200n", str(ROOT / "man" / "orbmcp.1")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"LC_ALL": "C.UTF-8"},
    )
    assert r.returncode == 0 and r.stderr == "", r.stderr  # no roff warnings
    text = r.stdout
    for ch in ("\u2010", "\u2212"):  # hyphen and minus glyphs back to ASCII
        text = text.replace(ch, "-")
    import re

    return re.sub(r".\x08", "", text)  # drop overstrike bold/underline


def test_man_page_documents_every_command_option_variable_file_and_exit_status() -> None:
    text = _man_text()
    for spec in COMMANDS:
        if spec.hidden:
            assert f"orbmcp {spec.name} " not in text
            continue
        assert f"orbmcp {spec.name}" in text, spec.name
        for p in spec.params:
            for flag in p.option_names:
                assert flag in text, (spec.name, flag)
        for spelling in spec.slash:
            assert spelling in text
    for p in GLOBAL_OPTIONS:
        for flag in p.option_names:
            assert flag in text
    for var in ("ORB_AGENT_DIR", "ORBMCP_CONFIG", "ORBMCP_PROJECT", "ORBMCP_DEBUG", "NO_COLOR", "CI"):
        assert var in text
    for path in (
        "settings.json",
        "mcp.json",
        ".orb/mcp.json",
        "trusted-projects.json",
        "mcp-auth/<hash>.json",
        "logs/orbmcp.log",
        "cache/tools.json",
        "shell_history",
    ):
        assert path in text
    exit_section = text.split("EXIT STATUS", 1)[1].split("SEE ALSO", 1)[0]
    for code in ExitCode:
        assert f"\n       {int(code)}" in exit_section, code
    assert "JSON OUTPUT" in text


def test_every_command_has_documented_json_keys() -> None:
    docs = gen_docs().JSON_OUTPUT
    for spec in COMMANDS:
        if not spec.hidden:
            assert spec.name in docs, (
                f"document the --json keys of '{spec.name}': its CommandSpec's json_output"
            )


def test_global_options_in_the_table_are_the_typer_root_options() -> None:
    root = build_app()
    typer_flags = {flag for p in root.params for flag in p.opts}
    table_flags = {flag for p in GLOBAL_OPTIONS for flag in p.option_names}
    assert typer_flags == table_flags


@pytest.mark.parametrize(
    ("shell", "file"), [("bash", "orbmcp.bash"), ("zsh", "_orbmcp"), ("fish", "orbmcp.fish")]
)
def test_completion_show_prints_the_shipped_script(shell: str, file: str, tmp_path: Path) -> None:
    shipped = (ROOT / "completions" / file).read_text()
    assert script(shell) == shipped
    r = run_cli("completion", "show", shell, env=env_for())
    assert r.code == 0 and r.stdout == shipped
    if shutil.which(shell):
        check = subprocess.run(
            [shell, "-n", str(ROOT / "completions" / file)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert check.returncode == 0, check.stderr


def test_completion_install_writes_where_each_shell_looks(tmp_path: Path) -> None:
    home = tmp_path / "home"
    expected = {
        "bash": home / ".local/share/bash-completion/completions/orbmcp",
        "zsh": home / ".zfunc/_orbmcp",
        "fish": home / ".config/fish/completions/orbmcp.fish",
    }
    for shell, path in expected.items():
        env = env_for(HOME=str(home))
        for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
            env.pop(var, None)
        r = run_cli("completion", "install", shell, "--json", env=env)
        assert r.code == 0, r.stderr
        data = json.loads(r.stdout)
        assert data["path"] == str(path) and data["ok"] is True and data["shell"] == shell
        assert path.read_text() == script(shell)
        r = run_cli("completion", "install", shell, env=env)
        assert str(path) in r.stdout  # says where
    r = run_cli("completion", "install", "tcsh", env=env_for(HOME=str(home)))
    assert r.code == 2 and "bash, zsh, fish" in r.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_script_completes_through_orbmcp(tmp_path: Path, _isolated_agent_dir: Path) -> None:
    config = write_config(tmp_path, {**OFFLINE_SERVERS, "gamma": {"command": "true", "lifecycle": "lazy"}})
    toolcache.save(_isolated_agent_dir / "cache" / "tools.json", "gamma", ["echo", "env"])
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "orbmcp"
    wrapper.write_text(f'#!/bin/sh\nexec "{PY}" -m orbmcp "$@"\n')
    wrapper.chmod(0o755)
    probe = r"""
source "$1"
t() {
    COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMPREPLY=(); _orbmcp_complete; echo "${COMPREPLY[*]}"
}
t "orbmcp st" orbmcp st
t "orbmcp start " orbmcp start ""
t "orbmcp auth " orbmcp auth ""
t "orbmcp call gamma " orbmcp call gamma ""
t "orbmcp status --j" orbmcp status --j
"""
    env = env_for(config, PATH=f"{bindir}:/usr/bin:/bin")
    r = subprocess.run(
        ["bash", "-c", probe, "probe", str(ROOT / "completions" / "orbmcp.bash")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "start status stop",
        "alpha beta gamma web",
        "web",
        "echo env",
        "--json",
    ]


def test_install_in_process_and_xdg_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orbmcp.commands.context import CommandContext
    from orbmcp.commands.handlers.completion import install, install_path
    from orbmcp.errors import ConfigError, UsageError
    from orbmcp.session.terminal import TerminalUI

    env = {
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
    }
    assert install_path("bash", env) == tmp_path / "data/bash-completion/completions/orbmcp"
    assert install_path("fish", env) == tmp_path / "cfg/fish/completions/orbmcp.fish"
    with pytest.raises(UsageError):
        install_path("csh", env)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    ctx = CommandContext(ui=TerminalUI(interactive=False))
    message = install(ctx, "fish")
    assert message.path == str(tmp_path / "cfg/fish/completions/orbmcp.fish")
    assert (tmp_path / "cfg/fish/completions/orbmcp.fish").read_text() == script("fish")
    (tmp_path / "data").write_text("a file where a directory should be")
    with pytest.raises(ConfigError, match="cannot write"):
        install(ctx, "bash")
