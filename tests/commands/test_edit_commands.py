"""add, remove, enable, disable and config import, run as a person runs them (the in-process CLI)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from orbmcp import fs
from orbmcp.config import edit, trust
from orbmcp.config.jsonc import parse_jsonc
from orbmcp.config.loader import load_config
from tests.cli import CliResult, run_cli
from tests.config import write
from tests.frontends.test_output_conventions import DOCS, _keys

SECRET = "ghp_Zq8Xw2Vn5Lm3Kp7Rt9Yb4Hc6Jd1Fs0Ga"


@pytest.fixture
def agent() -> Path:
    return Path(os.environ["ORB_AGENT_DIR"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def orb(project: Path, *args: str) -> CliResult:
    # The program's options first: after "--" every word belongs to the server's command.
    return run_cli("--project", str(project), *args, cwd=project)


def servers_of(path: Path) -> dict[str, object]:
    return parse_jsonc(path.read_text())["mcpServers"]  # type: ignore[return-value]


# ---- add -------------------------------------------------------------------------------------------


def test_add_a_command_and_a_url(agent: Path, project: Path) -> None:
    added = orb(project, "add", "files", "--env", "ROOT=/srv", "--", "npx", "-y", "server-fs", "--flag")
    assert added.code == 0, added.stderr
    assert added.stdout.startswith(f"Added 'files' to {agent / 'mcp.json'} (global)")
    web = orb(
        project, "add", "docs", "https://mcp.example.com/mcp", "--header", "X-Team: blue", "--lazy", "--json"
    )
    assert web.code == 0, web.stderr
    _keys(DOCS["add"], web.json())
    assert web.json()["entry"] == {
        "url": "https://mcp.example.com/mcp",
        "headers": {"X-Team": "<redacted>"},
        "lifecycle": "lazy",
    }
    assert servers_of(agent / "mcp.json") == {
        "files": {"command": "npx", "args": ["-y", "server-fs", "--flag"], "env": {"ROOT": "/srv"}},
        "docs": {"url": "https://mcp.example.com/mcp", "headers": {"X-Team": "blue"}, "lifecycle": "lazy"},
    }
    # orbmcp's global dir is private: 0700, the new file 0600
    assert stat.S_IMODE((agent / "mcp.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(agent.stat().st_mode) == 0o700
    config = load_config(project=project)
    assert config.servers["docs"].lifecycle == "lazy" and config.servers["files"].env == {"ROOT": "/srv"}

    sse = orb(project, "add", "legacy", "--transport", "sse", "https://old.example.com/sse")
    assert sse.code == 0 and servers_of(agent / "mcp.json")["legacy"] == {
        "url": "https://old.example.com/sse",
        "transport": "sse",
    }


def test_add_keeps_the_rest_of_the_file_exactly(agent: Path, project: Path) -> None:
    original = """{
    // servers I use every day
    "settings": { "maxRetries": 2 },
    "mcpServers": {
        "old": {"command": "old-server",   "args": ["--odd",  "spacing"]}, // keep me
    },
}
"""
    path = write(agent / "mcp.json", original)
    os.chmod(path, 0o640)
    assert orb(project, "add", "new", "--", "new-server").code == 0
    text = path.read_text()
    assert text.startswith(
        original.split("    },\n}", maxsplit=1)[0]
    )  # untouched up to the end of mcpServers
    assert (
        '        "new": {\n            "command": "new-server",\n            "args": []\n        },\n' in text
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # the mode is kept


def test_add_refuses_a_name_the_file_has_unless_overwrite(agent: Path, project: Path) -> None:
    assert orb(project, "add", "x", "--", "one").code == 0
    again = orb(project, "add", "x", "--", "two")
    assert again.code == 2 and f"already defined in {agent / 'mcp.json'}" in again.stderr
    assert "--overwrite" in again.stderr
    replaced = orb(project, "add", "x", "--overwrite", "--", "two")
    assert replaced.code == 0 and replaced.stdout.startswith("Replaced 'x'")
    assert servers_of(agent / "mcp.json") == {"x": {"command": "two", "args": []}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give the server's command"),
        (("https://h.example/mcp", "--env", "A=b"), "--env applies to a command"),
        (("--header", "A=b", "--", "cmd"), "--header applies to an HTTP server"),
        (("--transport", "carrier-pigeon", "--", "cmd"), "--transport must be"),
        (("--transport", "sse", "--", "cmd"), "needs a URL"),
        (("--env", "NOVALUE", "--", "cmd"), "expected NAME=VALUE"),
        (("ftp://h.example/mcp",), "only http:// and https:// URLs"),
        (("--scope", "galaxy", "--", "cmd"), "--scope must be global or project"),
    ],
)
def test_add_usage_errors(agent: Path, project: Path, args: tuple[str, ...], message: str | None) -> None:
    result = orb(project, "add", "x", *args)
    assert result.code == 2, result.stdout
    if message is not None:
        assert message in result.stderr
    assert not (agent / "mcp.json").exists()


def test_add_with_a_stdio_transport_and_a_url_like_argument_is_a_command(agent: Path, project: Path) -> None:
    assert orb(project, "add", "x", "--transport", "stdio", "--", "https://not-a-server").code == 0
    assert servers_of(agent / "mcp.json")["x"] == {"command": "https://not-a-server", "args": []}


def test_a_name_with_control_characters_is_refused(project: Path) -> None:
    assert orb(project, "add", "bad\x07name", "--", "x").code == 2


def test_add_suggests_a_variable_for_a_token_and_never_prints_it(agent: Path, project: Path) -> None:
    added = orb(project, "add", "gh", "--env", f"GITHUB_TOKEN={SECRET}", "--env", "MODE=fast", "--", "gh-mcp")
    assert added.code == 0
    assert SECRET not in added.stdout + added.stderr
    assert "env GITHUB_TOKEN looks like a secret" in added.stdout
    assert "--env 'GITHUB_TOKEN=${GITHUB_TOKEN}'" in added.stdout
    assert "MODE" not in added.stdout.split("note:", 1)[1]  # an ordinary value gets no note
    assert servers_of(agent / "mcp.json")["gh"]["env"]["GITHUB_TOKEN"] == SECRET  # type: ignore[index]

    web = orb(
        project, "add", "web", "https://h.example/mcp", "--header", f"Authorization=Bearer {SECRET}", "--json"
    )
    assert SECRET not in web.stdout
    assert web.json()["notes"][0].endswith("--header 'Authorization=Bearer ${WEB_TOKEN}' instead")
    quiet = orb(project, "add", "ok", "--env", "GITHUB_TOKEN=${GITHUB_TOKEN}", "--json", "--", "gh-mcp")
    assert quiet.json()["notes"] == []


def test_an_unparsable_file_is_never_written(agent: Path, project: Path) -> None:
    broken = '{\n  "mcpServers": {\n    "a": {"command": "x",,}\n  }\n}\n'
    path = write(agent / "mcp.json", broken)
    for args in (("add", "b", "--", "y"), ("disable", "a"), ("remove", "a")):
        result = orb(project, *args)
        assert result.code == 3, (args, result.stdout)
        assert f"{path}:3:" in result.stderr
    assert path.read_text() == broken


def test_a_file_that_is_not_text_or_not_a_file_is_never_written(agent: Path, project: Path) -> None:
    latin1 = b'{"mcpServers": {"caf\xe9": {"command": "x"}}}'
    own = agent / "mcp.json"
    agent.mkdir(parents=True, exist_ok=True)
    own.write_bytes(latin1)
    refused = orb(project, "add", "b", "--", "y")
    assert refused.code == 3 and f"{own}:1:21: not valid UTF-8" in refused.stderr
    assert own.read_bytes() == latin1
    own.unlink()
    # an untrusted project's file, which the loader leaves alone
    theirs = project / ".orb" / "mcp.json"
    theirs.parent.mkdir()
    theirs.write_bytes(latin1)
    refused = orb(project, "add", "b", "--scope", "project", "--", "y")
    assert refused.code == 3 and f"{theirs}:1:21: not valid UTF-8" in refused.stderr
    assert theirs.read_bytes() == latin1
    theirs.unlink()
    theirs.mkdir()  # a directory where the file should be
    unreadable = orb(project, "add", "b", "--scope", "project", "--", "y")
    assert unreadable.code == 3 and str(theirs) in unreadable.stderr, unreadable.stderr
    assert theirs.is_dir()


def test_an_entry_with_a_disabled_key_is_disabled_with_that_key(agent: Path, project: Path) -> None:
    path = write(agent / "mcp.json", {"mcpServers": {"c": {"command": "c", "disabled": False}}})
    assert orb(project, "disable", "c").code == 0
    assert servers_of(path)["c"] == {"command": "c", "disabled": True}
    assert load_config(project=project).servers["c"].enabled is False


def test_a_symlinked_config_is_written_through(agent: Path, project: Path, tmp_path: Path) -> None:
    dotfiles = write(tmp_path / "dotfiles" / "mcp.json", {"mcpServers": {}})
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "mcp.json").symlink_to(dotfiles)
    assert orb(project, "add", "x", "--", "y").code == 0
    assert (agent / "mcp.json").is_symlink()
    assert servers_of(dotfiles) == {"x": {"command": "y", "args": []}}


def test_a_held_lock_fails_with_the_lock_named(
    agent: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edit, "LOCK_TIMEOUT_S", 0.05)
    path = write(agent / "mcp.json", {"mcpServers": {}})
    plan_ran: list[str] = []

    def nested(document: dict[str, object]) -> list[edit.Op]:
        plan_ran.append("outer")
        with pytest.raises(Exception) as caught:
            edit.edit(path, lambda d: [], global_dir=agent, private=True)
        assert "another orbmcp is editing it" in str(caught.value)
        return []

    edit.edit(path, nested, global_dir=agent, private=True)
    assert plan_ran == ["outer"]


def test_add_to_a_config_file_named_with_config(project: Path, tmp_path: Path) -> None:
    ci = write(tmp_path / "ci.json", "// CI servers\n{}\n")
    result = run_cli("add", "x", "--config", str(ci), "--", "y", cwd=project)
    assert result.code == 0 and "(config)" in result.stdout
    assert ci.read_text().startswith("// CI servers\n{")
    assert run_cli("add", "z", "--config", str(ci), "--scope", "project", "--", "y").code == 2


# ---- project scope and trust ------------------------------------------------------------------------


def test_the_persons_own_edits_keep_a_trusted_project_trusted(agent: Path, project: Path) -> None:
    own = write(project / ".orb" / "mcp.json", {"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}})
    os.chmod(own, 0o664)  # a group-writable checkout
    trust.approve(agent, project, trust.describe_project(project).digest)

    assert orb(project, "add", "c", "--scope", "project", "--", "c-server").code == 0
    assert orb(project, "disable", "a").code == 0
    config = load_config(project=project)
    assert config.project.trust_state == "trusted"
    assert set(config.servers) == {"a", "b", "c"} and config.servers["a"].enabled is False
    assert stat.S_IMODE(own.stat().st_mode) == 0o664  # a project file keeps its own mode

    # someone else changes b: the person's next edit of a does not approve b's change
    data = json.loads(own.read_text())
    data["mcpServers"]["b"]["args"] = ["--evil"]
    own.write_text(json.dumps(data))
    assert orb(project, "enable", "a").code == 0
    config = load_config(project=project)
    assert config.project.pending == ("b",) and "b" not in config.servers
    assert config.servers["a"].enabled is True

    removed = orb(project, "remove", "c")
    assert removed.code == 0 and "c" not in load_config(project=project).servers


def test_adding_to_an_untrusted_project_says_it_waits_for_trust(agent: Path, project: Path) -> None:
    added = orb(project, "add", "x", "--scope", "project", "--json", "--", "x-server")
    assert added.code == 0
    assert any("orbmcp trust" in note for note in added.json()["notes"])
    new = project / ".orb" / "mcp.json"
    assert stat.S_IMODE(new.stat().st_mode) == 0o644  # meant to be shared with the repository
    assert stat.S_IMODE(new.parent.stat().st_mode) != 0o700
    assert load_config(project=project).servers == {}


# ---- remove ----------------------------------------------------------------------------------------


def test_remove_the_entry_in_effect(agent: Path, project: Path) -> None:
    write(agent / "settings.json", {"mcpServers": {"a": {"command": "older"}}})
    write(agent / "mcp.json", {"mcpServers": {"a": {"command": "newer"}, "b": {"command": "b"}}})
    removed = orb(project, "remove", "a", "--json")
    assert removed.code == 0
    _keys(DOCS["remove"], removed.json())
    assert removed.json()["notes"] == [f"'a' is still defined by global ({agent / 'settings.json'})"]
    assert servers_of(agent / "mcp.json") == {"b": {"command": "b"}}
    assert orb(project, "remove", "a", "--scope", "global").code == 0  # from settings.json now
    assert servers_of(agent / "settings.json") == {}
    missing = orb(project, "remove", "nope")
    assert missing.code == 2 and "unknown server" in missing.stderr.lower()
    gone = orb(project, "remove", "a", "--scope", "global")
    assert gone.code == 2


def test_remove_an_invalid_entry(agent: Path, project: Path) -> None:
    write(agent / "mcp.json", {"mcpServers": {"bad": {"command": 1}}})
    assert orb(project, "remove", "bad").code == 0
    assert servers_of(agent / "mcp.json") == {}


def test_other_programs_files_are_never_written(agent: Path, project: Path) -> None:
    home = Path(os.environ["HOME"])
    cursor = write(home / ".cursor" / "mcp.json", {"mcpServers": {"theirs": {"command": "x"}}})
    before = cursor.read_text()
    refused = orb(project, "remove", "theirs")
    assert (
        refused.code == 2 and "import:cursor" in refused.stderr and "orbmcp disable theirs" in refused.stderr
    )

    disabled = orb(project, "disable", "theirs")
    assert disabled.code == 0 and f"in {agent / 'mcp.json'} (global)" in disabled.stdout
    assert servers_of(agent / "mcp.json") == {"theirs": {"enabled": False}}
    assert load_config(project=project).servers["theirs"].enabled is False
    assert orb(project, "enable", "theirs").code == 0
    assert load_config(project=project).servers["theirs"].enabled is True
    assert cursor.read_text() == before


# ---- enable / disable ------------------------------------------------------------------------------


def test_enable_and_disable_switch_the_entry_in_place(agent: Path, project: Path) -> None:
    path = write(
        agent / "mcp.json",
        '{"mcpServers": {\n  "a": {"command": "a"}, // first\n  "b": {"command": "b", "disabled": true}\n}}\n',
    )
    off = orb(project, "disable", "a", "--json")
    assert off.code == 0 and off.json()["action"] == "disabled" and off.json()["state"] is None
    _keys(DOCS["disable"], off.json())
    assert '  "a": {"command": "a", "enabled": false}, // first\n' in path.read_text()
    again = orb(project, "disable", "a")
    assert again.code == 0 and "already disabled" in again.stdout
    on = orb(project, "enable", "b", "--json")
    assert on.code == 0
    _keys(DOCS["enable"], on.json())
    assert servers_of(path)["b"] == {"command": "b"}
    assert orb(project, "disable", "b").code == 0
    assert servers_of(path)["b"] == {"command": "b", "enabled": False}
    unknown = orb(project, "enable", "nope")
    assert unknown.code == 2 and "nope" in unknown.stderr


def test_enable_and_disable_are_slash_commands_but_add_is_not(agent: Path, project: Path) -> None:
    write(agent / "mcp.json", {"mcpServers": {"a": {"command": "a"}}})
    assert orb(project, "slash", "/mcp:disable a").code == 0
    assert load_config(project=project).servers["a"].enabled is False
    assert orb(project, "slash", "/mcp enable a").code == 0
    refused = orb(project, "slash", "/mcp add x -- rm -rf /")
    assert refused.code == 2 and "x" not in servers_of(agent / "mcp.json")
    assert orb(project, "complete", "/mcp:disable ").stdout.split() == ["a"]
    assert orb(project, "complete", "/mcp:enable ").stdout.split() == []


# ---- config import ---------------------------------------------------------------------------------


def _desktop(home: Path) -> Path:
    return write(
        home / ".config" / "Claude" / "claude_desktop_config.json",
        {
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "fs", "$HOME"], "env": {"GITHUB_TOKEN": SECRET}},
                "same": {"command": "same"},
                "clash": {"command": "theirs"},
            }
        },
    )


def test_config_import_shows_the_diff_and_copies(agent: Path, project: Path) -> None:
    home = Path(os.environ["HOME"])
    _desktop(home)
    write(
        home / ".cursor" / "mcp.json",
        {"mcpServers": {"fs": {"command": "other"}, "bad": {"envFile": "x", "command": "y"}}},
    )
    target = write(
        agent / "mcp.json",
        '{\n  // mine\n  "mcpServers": {\n    "same": {"command": "same"},\n    "clash": {"command": "mine"}\n  }\n}\n',
    )
    before = target.read_text()

    dry = orb(project, "config", "import", "claude-desktop", "cursor", "--dry-run")
    assert dry.code == 0, dry.stderr
    assert target.read_text() == before
    assert SECRET not in dry.stdout + dry.stderr
    assert '+    "fs": {' in dry.stdout and '"GITHUB_TOKEN": "<redacted>"' in dry.stdout
    assert "Dry run: 1 server(s) would be written" in dry.stdout
    lines = {line.split("  ")[0]: line for line in dry.stdout.splitlines() if "import:" in line}
    assert lines["same"].endswith("already there, identical")
    assert "not copied, conflict" in lines["clash"]
    assert "envFile" in lines["bad"]

    done = orb(project, "config", "import", "claude-desktop", "cursor", "--overwrite", "clash", "--json")
    assert done.code == 0
    body = done.json()
    _keys(DOCS["config import"], body)
    assert body["written"] is True and SECRET not in done.stdout
    outcomes = {(s["name"], s["source"]): s["outcome"] for s in body["servers"]}
    assert outcomes[("fs", "import:claude-desktop")] == "added"
    assert outcomes[("fs", "import:cursor")] == "conflict"  # the first client named wins
    assert outcomes[("clash", "import:claude-desktop")] == "replaced"
    text = target.read_text()
    assert "// mine" in text
    copied = servers_of(target)
    assert copied["fs"] == {"command": "npx", "args": ["-y", "fs", "$$HOME"], "env": {"GITHUB_TOKEN": SECRET}}
    assert load_config(project=project).servers["fs"].args[-1] == "$HOME"  # still literal, as in Claude
    assert load_config(project=project).servers["fs"].source == "global"


def test_config_import_to_the_project_reads_project_files_only(agent: Path, project: Path) -> None:
    home = Path(os.environ["HOME"])
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"user-level": {"command": "u"}}})
    write(
        project / ".cursor" / "mcp.json",
        {"mcpServers": {"repo": {"command": "r", "args": ["${workspaceFolder}"]}}},
    )
    result = orb(project, "config", "import", "cursor", "--scope", "project", "--json")
    assert result.code == 0, result.stderr
    assert [s["name"] for s in result.json()["servers"]] == ["repo"]
    assert any("orbmcp trust" in n for n in result.json()["notes"])
    assert servers_of(project / ".orb" / "mcp.json") == {"repo": {"command": "r", "args": [str(project)]}}
    assert "repo" not in load_config(project=project).servers  # still waits for trust


def test_config_import_of_nothing_and_of_an_unknown_client(project: Path) -> None:
    empty = orb(project, "config", "import", "windsurf", "--overwrite", "ghost", "--json")
    assert empty.code == 0
    body = empty.json()
    assert body["written"] is False and body["servers"] == [] and body["diff"] == ""
    assert body["notes"] == [
        "no user-level config of windsurf found",
        "--overwrite names no imported server: ghost",
    ]
    assert "Nothing to write" in orb(project, "config", "import", "windsurf").stdout
    unknown = orb(project, "config", "import", "netscape")
    assert unknown.code == 2 and "claude-code" in unknown.stderr


def test_a_global_dir_that_cannot_be_made_is_an_error(project: Path, tmp_path: Path) -> None:
    blocker = write(tmp_path / "not-a-dir", "")
    env = {**os.environ, "ORB_AGENT_DIR": str(blocker / "agent")}
    result = run_cli("--project", str(project), "add", "x", "--", "y", env=env)
    assert result.code == 3 and "cannot write it" in result.stderr, result.stderr


def test_a_file_that_cannot_be_replaced_is_an_error(
    agent: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(agent / "mcp.json", {"mcpServers": {}})

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fs, "atomic_write", refuse)
    result = orb(project, "add", "x", "--", "y")
    assert result.code == 3 and "cannot write it (Permission denied)" in result.stderr
