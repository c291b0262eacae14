"""``orbmcp integrate``: each agent's files, idempotence, other content kept, dry-run, remove."""

from __future__ import annotations

import json
import os
import stat
import sys
import tomllib
from pathlib import Path

import pytest

from orbmcp import environment
from orbmcp.integrate import MARKER
from tests.cli import run_cli


def home() -> Path:
    return Path(os.environ[environment.HOME])


def integrate(*args: str, cwd: Path | None = None) -> dict[str, object]:
    done = run_cli("integrate", *args, "--json", cwd=cwd)
    assert done.code == 0, done.stderr
    result: dict[str, object] = done.json()
    return result


def outcomes(result: dict[str, object]) -> dict[str, str]:
    files = result["files"]
    assert isinstance(files, list)
    return {f["path"]: f["outcome"] for f in files}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and "locks" not in p.parts}


# ---- pi ---------------------------------------------------------------------------------------


def test_pi_extension_goes_to_pi_agent_dir_runs_this_orbmcp_and_a_second_run_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_dir = tmp_path / "pi-agent"
    monkeypatch.setenv(environment.PI_AGENT_DIR, str(agent_dir))
    first = integrate("pi")
    extension = agent_dir / "extensions" / "orbmcp.ts"
    assert outcomes(first) == {str(extension): "created"}
    text = extension.read_text()
    assert MARKER in text.splitlines()[0]
    assert (
        f"const ORBMCP: string[] = {json.dumps([str(Path(sys.executable).absolute()), '-m', 'orbmcp'])};"
        in text
    )
    assert "@ORBMCP_ARGV@" not in text
    assert '"slash", "--stdio"' in text
    assert first["commands"][0] == "/mcp"  # type: ignore[index]
    before = snapshot(tmp_path)

    second = run_cli("integrate", "pi")
    assert second.code == 0
    assert "already up to date" in second.stdout
    assert snapshot(tmp_path) == before


def test_pi_default_agent_dir_and_project_scope(tmp_path: Path) -> None:
    integrate("pi")
    assert (home() / ".pi" / "agent" / "extensions" / "orbmcp.ts").is_file()
    project = tmp_path / "proj"
    project.mkdir()
    integrate("pi", "--scope", "project", cwd=project)
    assert (project / ".pi" / "extensions" / "orbmcp.ts").is_file()


def test_an_extension_orbmcp_did_not_write_is_never_overwritten_or_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(environment.PI_AGENT_DIR, str(tmp_path))
    mine = tmp_path / "extensions" / "orbmcp.ts"
    mine.parent.mkdir(parents=True)
    mine.write_text("// my own orbmcp extension\n")
    for args in (("pi",), ("pi", "--remove")):
        result = integrate(*args)
        assert outcomes(result) == {str(mine): "kept"}
        assert mine.read_text() == "// my own orbmcp extension\n"
    assert "left alone" in run_cli("integrate", "pi").stdout


def test_an_older_extension_orbmcp_wrote_is_updated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(environment.PI_AGENT_DIR, str(tmp_path))
    old = tmp_path / "extensions" / "orbmcp.ts"
    old.parent.mkdir(parents=True)
    old.write_text(f"// {MARKER}\n// an older version\n")
    assert outcomes(integrate("pi")) == {str(old): "updated"}
    assert "registerCommand" in old.read_text()


def test_dry_run_shows_the_diff_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(environment.PI_AGENT_DIR, str(tmp_path))
    done = run_cli("integrate", "pi", "--dry-run")
    assert done.code == 0
    extension = tmp_path / "extensions" / "orbmcp.ts"
    assert f"+++ {extension} (after)" in done.stdout
    assert "+export default async function orbmcpExtension" in done.stdout
    assert "would be written" in done.stdout and "nothing was changed" in done.stdout
    assert not extension.exists()
    result = integrate("pi", "--dry-run")
    assert result["dryRun"] is True and result["written"] is False and result["changed"] is True


def test_remove_deletes_exactly_what_integrate_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(environment.PI_AGENT_DIR, str(tmp_path))
    other = tmp_path / "extensions" / "other.ts"
    other.parent.mkdir(parents=True)
    other.write_text("// someone else's\n")
    integrate("pi")
    removed = integrate("pi", "--remove")
    assert outcomes(removed) == {str(tmp_path / "extensions" / "orbmcp.ts"): "removed"}
    assert sorted(p.name for p in (tmp_path / "extensions").iterdir()) == ["other.ts"]
    again = run_cli("integrate", "pi", "--remove")
    assert "nothing to remove" in again.stdout


def test_pi_has_no_serve_entry() -> None:
    done = run_cli("integrate", "pi", "--serve")
    assert done.code == 2
    assert "pi has no MCP client configuration" in done.stderr


# ---- Claude Code, Gemini CLI, opencode ---------------------------------------------------------


def test_claude_code_gets_orbmcp_because_mcp_is_reserved() -> None:
    done = run_cli("integrate", "claude-code")
    assert done.code == 0
    command = home() / ".claude" / "commands" / "orbmcp.md"
    text = command.read_text()
    front, body = text.split("---\n")[1:3]
    assert MARKER in front and "description:" in front and "allowed-tools: Bash(" in front
    assert '-m orbmcp slash "/mcp $ARGUMENTS"`' in body and body.lstrip().startswith("!`")
    assert "/mcp is Claude Code's own command: orbmcp's is /orbmcp" in done.stdout
    assert not (home() / ".claude" / "commands" / "mcp.md").exists()


def test_gemini_gets_orbmcp_namespace_toml_commands_that_parse() -> None:
    result = integrate("gemini")
    base = home() / ".gemini" / "commands"
    assert result["commands"][:2] == ["/orbmcp", "/orbmcp:start"]  # type: ignore[index]
    start = tomllib.loads((base / "orbmcp" / "start.toml").read_text())
    assert '-m orbmcp slash "/mcp:start "{{args}} }' in start["prompt"]
    assert start["prompt"].lstrip().startswith("!{")
    assert tomllib.loads((base / "orbmcp.toml").read_text())["description"]
    assert any("/mcp is Gemini CLI's own command" in n for n in result["notes"])  # type: ignore[union-attr]
    integrate("gemini", "--remove")
    assert not (base / "orbmcp").exists() and not (base / "orbmcp.toml").exists()


def test_opencode_gets_mcp_in_its_project_commands_dir(tmp_path: Path) -> None:
    integrate("opencode", "--scope", "project", cwd=tmp_path)
    text = (tmp_path / ".opencode" / "commands" / "mcp.md").read_text()
    assert MARKER in text and '-m orbmcp slash "/mcp $ARGUMENTS"`' in text
    integrate("opencode")
    assert (home() / ".config" / "opencode" / "commands" / "mcp.md").is_file()


def test_serve_in_claude_json_keeps_every_other_key_and_remove_takes_only_its_entry() -> None:
    claude = home() / ".claude.json"
    original = {
        "numStartups": 3,
        "mcpServers": {
            "mine": {"command": "node", "args": ["x.js"], "env": {"TOKEN": "sk-secret-value-123"}}
        },
        "projects": {"/p": {"mcpServers": {}}},
    }
    claude.write_text(json.dumps(original, indent=2) + "\n")
    os.chmod(claude, 0o600)
    result = integrate("claude-code", "--serve")
    entry = json.loads(claude.read_text())["mcpServers"]["orbmcp"]
    assert entry == {
        "type": "stdio",
        "command": str(Path(sys.executable).absolute()),
        "args": ["-m", "orbmcp", "serve"],
    }
    assert {k: v for k, v in json.loads(claude.read_text()).items() if k != "mcpServers"} == {
        "numStartups": 3,
        "projects": {"/p": {"mcpServers": {}}},
    }
    assert json.loads(claude.read_text())["mcpServers"]["mine"] == original["mcpServers"]["mine"]  # type: ignore[index]
    assert stat.S_IMODE(claude.stat().st_mode) == 0o600
    assert "sk-secret-value-123" not in json.dumps(result)
    assert integrate("claude-code", "--serve")["changed"] is False
    integrate("claude-code", "--remove")
    assert json.loads(claude.read_text()) == original
    assert not (home() / ".claude" / "commands" / "orbmcp.md").exists()


def test_an_orbmcp_entry_that_is_not_orbmcp_serve_is_left_alone(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"mcpServers": {"orbmcp": {"command": "something-else"}}}\n')
    for args in (("--serve",), ("--remove",)):
        result = integrate("gemini", "--scope", "project", *args, cwd=tmp_path)
        assert outcomes(result)[str(settings)] == "kept"
        assert json.loads(settings.read_text()) == {"mcpServers": {"orbmcp": {"command": "something-else"}}}


def test_opencode_serve_edits_its_jsonc_keeping_comments(tmp_path: Path) -> None:
    config = tmp_path / "opencode.jsonc"
    config.write_text('{\n  // my theme\n  "theme": "dark",\n}\n')
    integrate("opencode", "--scope", "project", "--serve", cwd=tmp_path)
    text = config.read_text()
    assert "// my theme" in text and '"theme": "dark"' in text
    assert '"type": "local"' in text and '"serve"' in text


# ---- Codex ------------------------------------------------------------------------------------

CODEX = """# my settings
model = "o3"

[mcp_servers.other]
command = "npx"
args = ["-y", "other"]

[profiles.fast]
model = "o4-mini"
"""


def test_codex_gets_orbmcp_serve_in_config_toml_keeping_everything_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(environment.CODEX_HOME, str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text(CODEX)
    dry = run_cli("integrate", "codex", "--dry-run")
    assert "+[mcp_servers.orbmcp]" in dry.stdout and config.read_text() == CODEX
    integrate("codex")
    document = tomllib.loads(config.read_text())
    assert document["mcp_servers"]["orbmcp"] == {
        "command": str(Path(sys.executable).absolute()),
        "args": ["-m", "orbmcp", "serve"],
    }
    assert config.read_text().startswith(CODEX)
    assert document["profiles"] == {"fast": {"model": "o4-mini"}}
    assert integrate("codex")["changed"] is False
    integrate("codex", "--remove")
    assert config.read_text() == CODEX


def test_codex_entry_orbmcp_wrote_is_replaced_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(environment.CODEX_HOME, str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text(
        f'# {MARKER}\n[mcp_servers.orbmcp]\ncommand = "/old/python"\nargs = ["-m", "orbmcp", "serve"]\n\n'
        '[mcp_servers.after]\ncommand = "y"\n'
    )
    assert outcomes(integrate("codex")) == {str(config): "updated"}
    document = tomllib.loads(config.read_text())
    assert document["mcp_servers"]["after"] == {"command": "y"}
    assert document["mcp_servers"]["orbmcp"]["command"] == str(Path(sys.executable).absolute())
    assert config.read_text().count("[mcp_servers.orbmcp]") == 1


def test_codex_toml_that_defines_orbmcp_inline_is_not_edited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(environment.CODEX_HOME, str(tmp_path))
    config = tmp_path / "config.toml"
    text = 'mcp_servers = { orbmcp = { command = "orbmcp", args = ["serve", "--x"] } }\n'
    config.write_text(text)
    done = run_cli("integrate", "codex")
    assert done.code == 3, done.stderr
    assert "cannot edit [mcp_servers.orbmcp] in place" in done.stderr and str(config) in done.stderr
    assert config.read_text() == text


def test_broken_codex_toml_is_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(environment.CODEX_HOME, str(tmp_path))
    (tmp_path / "config.toml").write_text("model = \n")
    done = run_cli("integrate", "codex")
    assert done.code == 3
    assert str(tmp_path / "config.toml") in done.stderr and "not valid TOML" in done.stderr


def test_codex_has_no_project_scope() -> None:
    done = run_cli("integrate", "codex", "--scope", "project")
    assert done.code == 2 and "user config only" in done.stderr


# ---- the command itself -----------------------------------------------------------------------


def test_list_says_what_each_agent_gets_and_whether_it_is_installed(tmp_path: Path) -> None:
    (home() / ".gemini").mkdir()
    result = run_cli("integrate", "--list", "--json").json()
    rows = {a["name"]: a for a in result["agents"]}
    assert list(rows) == ["pi", "claude-code", "gemini", "opencode", "codex"]
    assert rows["gemini"]["installed"] is True and rows["gemini"]["foundAt"] == str(home() / ".gemini")
    assert "/orbmcp" in rows["claude-code"]["gets"] and "mcp_servers" in rows["codex"]["gets"]
    plain = run_cli("integrate", "--list").stdout
    assert "gemini  installed" in plain


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name the agent"),
        (("vim",), "unknown agent 'vim'"),
        (("pi", "--scope", "everywhere"), "--scope must be user or project"),
    ],
)
def test_bad_input_is_a_usage_error(args: tuple[str, ...], message: str) -> None:
    done = run_cli("integrate", *args)
    assert done.code == 2
    assert message in done.stderr


def test_agent_names_complete() -> None:
    done = run_cli("complete", "orbmcp integrate ge")
    assert done.stdout.split() == ["gemini"]
