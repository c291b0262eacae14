"""Project trust: invisible until approved, bound to the definitions, revocable, never self-granted."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from orbmcp import fs
from orbmcp.config import trust
from orbmcp.config.paths import trust_store_path
from orbmcp.errors import ConfigError
from tests.config import Layout, RecordingEnv

PROJECT = {
    "mcpServers": {
        "tool": {
            "command": "node",
            "args": ["server.js", "--token", "${GITHUB_TOKEN}", "a very long argument " * 10],
            "cwd": "./srv",
            "env": {"API_KEY": "${API_KEY}", "MODE": "prod"},
        },
        "web": {"url": "https://${HOST:-h.test}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    }
}


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    layout = Layout(tmp_path, environ={"GITHUB_TOKEN": "g", "API_KEY": "k", "TOKEN": "t"})
    layout.global_file("mcp.json", {"mcpServers": {"global": {"command": "global-srv"}}})
    layout.project_file("mcp.json", PROJECT)
    return layout


def test_untrusted_project_is_invisible_and_not_expanded(layout: Layout) -> None:
    env = RecordingEnv(layout.environ)
    config = layout.load(environ=env)
    assert list(config.servers) == ["global"]
    assert config.project.files == (layout.project / ".orb" / "mcp.json",)
    assert (config.project.trusted, config.project.loaded, config.project.trust_state) == (
        False,
        False,
        "untrusted",
    )
    assert config.project.pending == ("tool", "web")
    assert not {"GITHUB_TOKEN", "API_KEY", "TOKEN", "HOST"} & set(env.read)  # nothing unapproved is expanded
    assert config.files == (layout.global_dir / "mcp.json",)  # the project file is not a loaded layer
    assert not trust_store_path(layout.global_dir).exists()


def test_review_shows_exactly_what_would_run(layout: Layout) -> None:
    review = trust.describe_project(layout.project)
    tool = review.server("tool")
    web = review.server("web")
    assert tool is not None and web is not None
    assert (tool.kind, tool.transport, tool.command) == ("server", "stdio", "node")
    assert tool.args == tuple(PROJECT["mcpServers"]["tool"]["args"])  # untruncated
    assert tool.cwd == "./srv"
    assert tool.env_names == ("API_KEY", "MODE")  # names only
    assert tool.variables == ("GITHUB_TOKEN", "API_KEY")
    assert (web.transport, web.url, web.header_names, web.variables) == (
        "streamable-http",
        "https://${HOST:-h.test}/mcp",
        ("Authorization",),
        ("HOST", "TOKEN"),
    )
    assert "t" not in web.header_names and review.real_dir == os.path.realpath(layout.project)


def test_approve_makes_the_project_visible(layout: Layout) -> None:
    layout.approve()
    assert trust.trust_record(layout.global_dir, layout.project) == "trusted"
    config = layout.load()
    assert sorted(config.servers) == ["global", "tool", "web"]
    assert config.servers["tool"].args[2] == "g"  # expanded after trust
    assert config.servers["tool"].source == "project"
    assert (config.project.trusted, config.project.loaded, config.project.pending) == (True, True, ())


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["mcpServers"]["tool"]["args"].append("--evil"),
        lambda p: p["mcpServers"]["tool"].__setitem__("command", "evil"),
        lambda p: p["mcpServers"]["tool"]["env"].__setitem__("LD_PRELOAD", "/tmp/x.so"),
        lambda p: p["mcpServers"]["tool"].__setitem__("cwd", "/"),
        lambda p: p["mcpServers"]["tool"].__setitem__("transport", "stdio"),
    ],
)
def test_changed_definition_is_invisible_until_approved_again(layout: Layout, change: object) -> None:
    layout.approve()
    changed = json.loads(json.dumps(PROJECT))
    change(changed)  # type: ignore[operator]
    layout.project_file("mcp.json", changed)

    assert trust.trust_record(layout.global_dir, layout.project) == "changed"
    config = layout.load()
    # only the changed server waits; the unchanged one keeps working
    assert sorted(config.servers) == ["global", "web"]
    assert (config.project.trust_state, config.project.trusted, config.project.pending) == (
        "changed",
        False,
        ("tool",),
    )

    layout.approve()
    assert "tool" in layout.load().servers


def test_url_or_header_change_needs_approval(layout: Layout) -> None:
    layout.approve()
    changed = json.loads(json.dumps(PROJECT))
    changed["mcpServers"]["web"]["headers"]["X-Extra"] = "1"
    layout.project_file("mcp.json", changed)
    assert "web" not in layout.load().servers


def test_a_new_server_needs_its_own_approval(layout: Layout) -> None:
    layout.approve()
    added = json.loads(json.dumps(PROJECT))
    added["mcpServers"]["new"] = {"command": "new"}
    layout.project_file("mcp.json", added)
    config = layout.load()
    assert "new" not in config.servers and "tool" in config.servers
    assert config.project.pending == ("new",)


def test_checkout_swapping_the_config_back_is_trusted_again(layout: Layout) -> None:
    layout.approve()
    original = (layout.project / ".orb" / "mcp.json").read_text()
    layout.project_file("mcp.json", {"mcpServers": {"tool": {"command": "other"}}})
    assert trust.trust_record(layout.global_dir, layout.project) == "changed"
    layout.project_file("mcp.json", original)
    assert trust.trust_record(layout.global_dir, layout.project) == "trusted"


def test_revoke(layout: Layout) -> None:
    layout.approve()
    assert trust.revoke(layout.global_dir, layout.project) is True
    assert trust.trust_record(layout.global_dir, layout.project) == "untrusted"
    assert list(layout.load().servers) == ["global"]
    assert trust.revoke(layout.global_dir, layout.project) is False


def test_revoke_without_a_store_writes_nothing(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert trust.revoke(layout.global_dir, layout.project) is False
    assert not layout.global_dir.exists()


def test_approval_of_a_stale_review_is_refused(layout: Layout) -> None:
    review = trust.describe_project(layout.project)
    layout.project_file("mcp.json", {"mcpServers": {"tool": {"command": "swapped"}}})
    with pytest.raises(ConfigError, match="changed while it was being reviewed") as caught:
        trust.approve(layout.global_dir, layout.project, review.digest)
    assert caught.value.reason == "changed_during_review"
    assert caught.value.hint == "run `orbmcp trust` again and review the new definitions"
    assert caught.value.hint_in(lambda words: f"/mcp:{words}") == (
        "run `/mcp:trust` again and review the new definitions"
    )
    assert trust.trust_record(layout.global_dir, layout.project) == "untrusted"


def test_a_symlinked_global_dir_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "agent"
    real.mkdir(parents=True)
    linked = Layout(tmp_path / "linked")
    linked.global_dir.parent.mkdir(parents=True)
    linked.global_dir.symlink_to(real)
    linked.project_file("mcp.json", PROJECT)
    linked.approve()
    assert trust_store_path(real).is_file()
    assert trust.trust_record(linked.global_dir, linked.project) == "trusted"


def test_a_held_store_lock_is_a_config_error(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trust, "LOCK_TIMEOUT_S", 0.05)
    review = trust.describe_project(layout.project)
    store = trust_store_path(layout.global_dir)
    with fs.locked(store), pytest.raises(ConfigError, match="another orbmcp is updating") as caught:
        trust.approve(layout.global_dir, layout.project, review.digest)
    assert caught.value.reason == "trust_store_locked"
    assert str(fs.lock_path(store)) in caught.value.message
    assert not store.exists()


def test_approval_is_per_project_path(layout: Layout, tmp_path: Path) -> None:
    layout.approve()
    clone = tmp_path / "clone"
    (clone / ".orb").mkdir(parents=True)
    (clone / ".orb" / "mcp.json").write_text((layout.project / ".orb" / "mcp.json").read_text())
    assert trust.trust_record(layout.global_dir, clone) == "untrusted"


def test_symlinked_project_dir_shares_its_real_path(layout: Layout, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(layout.project)
    layout.approve()
    assert trust.trust_record(layout.global_dir, link) == "trusted"


def test_store_and_dir_modes(layout: Layout) -> None:
    layout.approve()
    store = trust_store_path(layout.global_dir)
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    # the global dir did exist (mcp.json is in it); the dirs trust creates are private
    fresh = Layout(layout.root / "fresh")
    fresh.project_file("mcp.json", {"mcpServers": {}})
    fresh.approve()
    assert stat.S_IMODE(fresh.global_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(trust_store_path(fresh.global_dir).stat().st_mode) == 0o600
    assert not [p for p in fresh.global_dir.iterdir() if p.name.endswith(".tmp")]
    document = json.loads(trust_store_path(fresh.global_dir).read_text())
    assert document["version"] == 1 and os.path.realpath(fresh.project) in document["projects"]


def test_store_writable_by_others_is_ignored(layout: Layout) -> None:
    layout.approve()
    store = trust_store_path(layout.global_dir)
    store.chmod(0o666)
    config = layout.load()
    assert "tool" not in config.servers
    assert any("trust store" in w.message for w in config.warnings)
    layout.approve()  # re-approval starts a clean, private store
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert "tool" in layout.load().servers
    assert list(layout.global_dir.glob("trusted-projects.json.corrupt-*"))


def test_symlinked_store_is_ignored(layout: Layout, tmp_path: Path) -> None:
    layout.approve()
    store = trust_store_path(layout.global_dir)
    elsewhere = tmp_path / "elsewhere.json"
    store.rename(elsewhere)
    store.symlink_to(elsewhere)
    config = layout.load()
    assert "tool" not in config.servers
    assert "trust_store_ignored" in [w.reason for w in config.warnings]


def test_corrupt_store_is_ignored_with_a_warning(layout: Layout) -> None:
    layout.approve()
    trust_store_path(layout.global_dir).write_text("{not json")
    config = layout.load()
    assert "tool" not in config.servers
    assert any("corrupt" in w.message for w in config.warnings)
    assert [w.reason for w in config.warnings if w.file == str(trust_store_path(layout.global_dir))] == [
        "trust_store_corrupt"
    ]


def test_project_files_cannot_grant_trust(layout: Layout) -> None:
    layout.project_file(
        "settings.json",
        {"trusted": True, "enableAllProjectMcpServers": True, "settings": {"trust": "all"}},
    )
    granted = json.loads(json.dumps(PROJECT))
    granted["autoApprove"] = True
    granted["mcpServers"]["tool"]["trusted"] = True
    layout.project_file("mcp.json", granted)
    config = layout.load()
    assert list(config.servers) == ["global"]  # still untrusted: a project cannot grant itself trust

    review = trust.describe_project(layout.project)
    flagged = {(w.server, w.message.split('"')[1]) for w in review.warnings}
    assert flagged == {
        (None, "trusted"),
        (None, "enableAllProjectMcpServers"),
        (None, "settings.trust"),
        (None, "autoApprove"),
        ("tool", "trusted"),
    }
    layout.approve()
    config = layout.load()
    assert "tool" in config.servers
    assert len([w for w in config.warnings if "cannot be set by a project" in w.message]) == 5


def test_project_cannot_move_the_global_dir(layout: Layout) -> None:
    # keys a project might use to redirect config/state are just unknown keys: ignored
    layout.project_file(
        "settings.json", {"ORB_AGENT_DIR": str(layout.project), "env": {"ORB_AGENT_DIR": "x"}}
    )
    (layout.project / ".env").write_text(f"ORB_AGENT_DIR={layout.project}\nORBMCP_CONFIG=evil.json\n")
    config = layout.load()
    assert config.global_dir == layout.global_dir and config.config_override is None


def test_project_orb_symlinked_to_the_global_dir_is_still_project_scope(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.global_file("mcp.json", {"mcpServers": {"g": {"command": "g"}}})
    layout.project.mkdir()
    (layout.project / ".orb").symlink_to(layout.global_dir)  # a project posing as the global dir
    config = layout.load()
    assert config.servers["g"].source == "global"  # from the global path, not the project one
    assert config.project.files and config.project.trusted is False and config.project.loaded is False
    assert config.project.pending == ("g",)


def test_untrusted_malformed_project_file_is_ignored_trusted_one_fails(layout: Layout) -> None:
    layout.project_file("mcp.json", '{"mcpServers": {')
    config = layout.load()
    assert list(config.servers) == ["global"] and config.project.loaded is False

    layout.project_file("mcp.json", PROJECT)
    layout.approve()
    path = layout.project_file("mcp.json", '{"mcpServers": {')
    with pytest.raises(ConfigError) as caught:
        layout.load()
    assert str(caught.value).startswith(f"{path}:1:")


def test_review_of_partial_overrides_and_invalid_entries(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.project_file("settings.json", {"mcpServers": {"local": {"command": "x", "lifecycle": "eager"}}})
    layout.project_file(
        "mcp.json",
        {"mcpServers": {"local": {"enabled": False}, "glob": {"lifecycle": "lazy"}, "bad": {"command": 3}}},
    )
    review = trust.describe_project(layout.project)
    local, glob, bad = review.servers
    assert (local.name, local.kind, local.command) == ("local", "server", "x")
    assert (glob.kind, dict(glob.overrides)) == ("override", {"lifecycle": "lazy"})
    assert bad.kind == "invalid" and '"command"' in bad.problems[0]


def test_project_settings_are_invisible_until_trusted(layout: Layout) -> None:
    layout.project_file("settings.json", {"settings": {"maxRetries": 0}, "goExtensions": {"mcp": False}})
    config = layout.load()
    assert (config.settings.max_retries, config.settings.extension_enabled) == (5, True)
    layout.approve()
    config = layout.load()
    assert (config.settings.max_retries, config.settings.extension_enabled) == (0, False)
