"""The pieces of an integration: TOML tables edited as text, files read with bounds, writes checked."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from orbmcp.errors import ConfigError
from orbmcp.integrate import MARKER, pieces, toml_entry
from orbmcp.integrate.agents import AGENTS, Where, find

KEYS = ("mcp_servers", "orbmcp")
TABLE = {"command": "/py", "args": ["-m", "orbmcp", "serve"], "enabled": True, "startup_timeout_sec": 20}


def test_toml_table_with_a_sub_table_is_written_and_replaced_whole() -> None:
    text = 'a = 1\n[mcp_servers."orbmcp"]\ncommand = "old"\n[mcp_servers.orbmcp.env]\nX = "1"\n\n[z]\nb = 2'
    after = toml_entry.set_table(text, KEYS, {**TABLE, "env": {"Y": "2"}}, MARKER)
    document = tomllib.loads(after)
    assert document["mcp_servers"]["orbmcp"] == {**TABLE, "env": {"Y": "2"}}
    assert document["z"] == {"b": 2} and document["a"] == 1
    assert after.count("[mcp_servers.orbmcp]") == 1 and "old" not in after
    removed = toml_entry.delete_table(after, KEYS, MARKER)
    assert tomllib.loads(removed) == {"a": 1, "z": {"b": 2}}
    assert toml_entry.delete_table(removed, KEYS, MARKER) == removed


def test_toml_table_into_an_empty_file_and_a_file_without_final_newline() -> None:
    assert tomllib.loads(toml_entry.set_table("", KEYS, TABLE, MARKER)) == {"mcp_servers": {"orbmcp": TABLE}}
    after = toml_entry.set_table('model = "x"', KEYS, TABLE, MARKER)
    assert after.startswith('model = "x"\n\n# ') and tomllib.loads(after)["model"] == "x"


@pytest.mark.parametrize(
    "text",
    [
        'mcp_servers.orbmcp.command = "dotted"\n',  # not a table of its own: cannot be replaced as text
        "[mcp_servers.orbmcp]\ncommand = 1\n[other]\nx = 1\n[mcp_servers.orbmcp.env]\nA = '1'\n",
    ],
)
def test_toml_that_cannot_be_edited_as_a_table_is_refused(text: str) -> None:
    with pytest.raises(toml_entry.TomlEditError):
        toml_entry.set_table(text, KEYS, TABLE, MARKER)


def test_toml_values_orbmcp_cannot_write_are_refused() -> None:
    with pytest.raises(toml_entry.TomlEditError, match="cannot write"):
        toml_entry.set_table("", KEYS, {"x": object()}, MARKER)
    assert toml_entry.get({"a": 1}, ("a", "b")) is None


def test_a_file_changed_between_plan_and_write_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "ext.ts"
    planned = [pieces.ManagedFile(target, f"// {MARKER}\nnew\n")]
    changes = pieces.plan(planned, remove=False, global_dir=tmp_path / "g")
    target.write_text("// someone else's, just now\n")
    with pytest.raises(ConfigError, match="changed while orbmcp was editing it"):
        pieces.write(changes, planned, global_dir=tmp_path / "g")
    assert target.read_text() == "// someone else's, just now\n"


def test_unreadable_oversized_and_non_utf8_files_are_errors_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.ts"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        pieces.plan_file(pieces.ManagedFile(bad, MARKER), remove=False)
    monkeypatch.setattr(pieces, "MAX_FILE_BYTES", 4)
    bad.write_text("0123456789")
    with pytest.raises(ConfigError, match="over 0 MiB"):
        pieces.plan_file(pieces.ManagedFile(bad, MARKER), remove=False)
    directory = tmp_path / "dir.ts"
    directory.mkdir()
    with pytest.raises(ConfigError, match="cannot read it"):
        pieces.plan_file(pieces.ManagedFile(directory, MARKER), remove=False)


def test_an_unwritable_place_is_an_error_naming_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "extensions"
    blocker.write_text("a file where the directory should be\n")
    planned = [pieces.ManagedFile(blocker / "x.ts", MARKER)]
    changes = pieces.plan(planned, remove=False, global_dir=tmp_path / "g")
    with pytest.raises(ConfigError, match="cannot write it"):
        pieces.write(changes, planned, global_dir=tmp_path / "g")


def test_opencode_serve_prefers_an_existing_jsonc_and_claude_project_uses_mcp_json(tmp_path: Path) -> None:
    where = Where("project", tmp_path, {"HOME": str(tmp_path)}, ("/py", "-m", "orbmcp"))
    opencode = find("opencode")
    assert opencode.serve is not None
    assert opencode.serve(where).path == tmp_path / "opencode.json"
    (tmp_path / "opencode.jsonc").write_text("{}")
    assert opencode.serve(where).path == tmp_path / "opencode.jsonc"
    claude = find("Claude")
    assert claude.serve is not None and claude.serve(where).path == tmp_path / ".mcp.json"


def test_installed_finds_a_binary_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "codex"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    codex = next(a for a in AGENTS if a.name == "codex")
    assert codex.installed({"HOME": str(tmp_path / "nohome")}) == str(binary)
    assert next(a for a in AGENTS if a.name == "gemini").installed({"HOME": str(tmp_path / "nohome")}) is None
