"""The layers: precedence, partial overrides, settings, --config, expansion, and the empty case."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orbmcp.config import registry
from orbmcp.config.loader import load_config
from orbmcp.errors import ConfigError
from tests.config import Layout, RecordingEnv


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[Layout]:
    yield Layout(tmp_path)
    for name in list(registry.registered_servers()):
        registry.unregister_server(name)


def servers(**entries: object) -> dict[str, object]:
    return {"mcpServers": entries}


def test_missing_global_dir_is_empty_and_nothing_is_created(layout: Layout) -> None:
    config = layout.load()
    assert config.servers == {}
    assert config.warnings == ()
    assert config.files == ()
    assert config.enabled_servers() == []
    assert not layout.global_dir.exists()
    assert not layout.global_dir.parent.exists()
    assert not (layout.project / ".orb").exists()
    assert config.project.files == () and config.project.loaded is False


def test_default_global_dir_comes_from_the_real_environment(layout: Layout) -> None:
    layout.global_file("mcp.json", servers(a={"command": "a"}))
    config = load_config(
        project=layout.project, environ={"ORB_AGENT_DIR": str(layout.global_dir)}, cwd=layout.project
    )
    assert list(config.servers) == ["a"]
    assert config.global_dir == layout.global_dir


def test_mcp_json_beats_settings_json_at_the_same_level(layout: Layout) -> None:
    settings_path = layout.global_file(
        "settings.json", servers(a={"command": "from-settings"}, b={"command": "b"})
    )
    mcp_path = layout.global_file("mcp.json", servers(a={"url": "https://from-mcp.test"}))
    config = layout.load()
    a, b = config.servers["a"], config.servers["b"]
    # whole-entry replacement: nothing of the lower entry survives
    assert (a.transport, a.url, a.command, a.file) == (
        "streamable-http",
        "https://from-mcp.test",
        None,
        str(mcp_path),
    )
    assert b.file == str(settings_path)
    assert config.files == (settings_path, mcp_path)


def test_project_beats_global_per_name(layout: Layout) -> None:
    layout.global_file(
        "mcp.json",
        servers(shared={"url": "https://global.test", "headers": {"X-Key": "secret"}}, g={"command": "g"}),
    )
    project_path = layout.project_file(
        "mcp.json", servers(shared={"url": "https://project.test"}, p={"command": "p"})
    )
    layout.approve()
    config = layout.load()
    shared = config.servers["shared"]
    # a full project entry replaces the global one: it gets none of the global entry's headers
    assert (shared.url, dict(shared.headers), shared.source, shared.file) == (
        "https://project.test",
        {},
        "project",
        str(project_path),
    )
    assert config.servers["g"].source == "global"
    assert config.servers["p"].source == "project"


def test_project_mcp_json_beats_project_settings_json(layout: Layout) -> None:
    layout.project_file("settings.json", servers(a={"command": "from-settings"}, b={"command": "b"}))
    layout.project_file("mcp.json", servers(a={"command": "from-mcp"}))
    layout.approve()
    config = layout.load()
    assert config.servers["a"].command == "from-mcp"
    assert config.servers["b"].command == "b"


def test_files_beat_extension_servers(layout: Layout) -> None:
    registry.register_server("ext", {"command": "ext-cmd"}, owner="plugin")
    registry.register_server("both", {"command": "ext-both"})
    layout.global_file("mcp.json", servers(both={"command": "file-both"}))
    config = layout.load()
    assert (config.servers["ext"].source, config.servers["ext"].file) == ("extension", None)
    assert (config.servers["both"].source, config.servers["both"].command) == ("global", "file-both")


def test_config_file_replaces_every_file_layer(layout: Layout) -> None:
    layout.global_file("mcp.json", servers(g={"command": "g"}))
    layout.project_file("mcp.json", servers(p={"command": "p"}))
    layout.approve()
    registry.register_server("ext", {"command": "ext"})
    ci = layout.root / "ci.json"
    ci.write_text('{"settings": {"maxRetries": 0}, "mcpServers": {"c": {"command": "c"}}}')

    config = layout.load(config_file=ci)
    assert sorted(config.servers) == ["c", "ext"]  # extension servers stay: they are not a file layer
    assert (config.servers["c"].source, config.servers["c"].file) == ("config", str(ci))
    assert config.servers["c"].max_retries == 0
    assert config.files == (ci,) and config.config_override == ci
    assert config.project.loaded is False


def test_orbmcp_config_environment_variable(layout: Layout) -> None:
    layout.global_file("mcp.json", servers(g={"command": "g"}))
    (layout.root / "ci.json").write_text('{"mcpServers": {"c": {"command": "c"}}}')
    layout.environ["ORBMCP_CONFIG"] = "../ci.json"  # relative to the working directory
    layout.project.mkdir()
    config = layout.load()
    assert list(config.servers) == ["c"]
    assert config.servers["c"].source == "config"


def test_missing_config_file_is_an_error(layout: Layout) -> None:
    with pytest.raises(ConfigError, match="config file not found") as caught:
        layout.load(config_file=layout.root / "nope.json")
    assert (caught.value.code, caught.value.reason) == ("config", "file_not_found")


def test_malformed_mcp_servers_fails_the_whole_load(layout: Layout) -> None:
    path = layout.global_file("mcp.json", '{"mcpServers": ["a", "b"]}')
    with pytest.raises(ConfigError) as caught:
        layout.load()
    assert str(path) in str(caught.value) and "mcpServers" in str(caught.value)
    assert caught.value.reason == "not_an_object"


def test_syntax_error_fails_the_load_with_file_line_column(layout: Layout) -> None:
    path = layout.global_file("settings.json", '{\n  "mcpServers": {\n    "a": {"command": "x",, }\n  }\n}')
    with pytest.raises(ConfigError) as caught:
        layout.load()
    assert str(caught.value).startswith(f"{path}:3:")
    assert caught.value.reason == "syntax"


def test_settings_layer_and_defaults_apply_to_every_server(layout: Layout) -> None:
    layout.global_file(
        "settings.json", {"settings": {"maxRetries": 1, "toolPrefix": "orb"}, **servers(a={"command": "a"})}
    )
    layout.global_file(
        "mcp.json",
        {
            "settings": {"maxRetries": 3, "requestTimeoutMs": 900},
            **servers(b={"url": "https://b.test", "maxRetries": 0}),
        },
    )
    config = layout.load()
    assert (config.settings.tool_prefix, config.settings.max_retries, config.settings.request_timeout_ms) == (
        "orb",
        3,
        900,
    )
    assert (config.servers["a"].max_retries, config.servers["a"].request_timeout_ms) == (3, 900)
    assert config.servers["b"].max_retries == 0


def test_bad_settings_value_is_ignored_with_a_warning(layout: Layout) -> None:
    path = layout.global_file("mcp.json", {"settings": {"maxRetries": 99}})
    config = layout.load()
    assert config.settings.max_retries == 5
    assert [(w.file, "maxRetries" in w.message) for w in config.warnings] == [(str(path), True)]


def test_go_extensions_mcp_false_turns_everything_off(layout: Layout) -> None:
    layout.global_file("settings.json", {"goExtensions": {"mcp": False}, **servers(a={"command": "a"})})
    config = layout.load()
    assert config.settings.extension_enabled is False
    assert "a" in config.servers and config.enabled_servers() == [] and config.eager_servers() == []


# ---- partial overrides ------------------------------------------------------------------------


def test_partial_override_sets_enabled_and_lifecycle_only(layout: Layout) -> None:
    layout.global_file(
        "mcp.json",
        servers(
            a={"command": "a", "env": {"TOKEN": "secret"}},
            b={"command": "b", "enabled": False, "lifecycle": "eager"},
        ),
    )
    project_path = layout.project_file(
        "mcp.json", servers(a={"lifecycle": "lazy", "exposure": "x"}, b={"enabled": True})
    )
    layout.approve()
    config = layout.load()
    a, b = config.servers["a"], config.servers["b"]
    assert (a.lifecycle, a.enabled, dict(a.env), a.override_file) == (
        "lazy",
        True,
        {"TOKEN": "secret"},
        str(project_path),
    )
    # turning a disabled server back on restores the lifecycle it stated
    assert (b.enabled, b.lifecycle) == (True, "eager")
    assert config.warnings == ()


def test_partial_override_with_another_key_is_an_error_naming_file_and_server(layout: Layout) -> None:
    layout.global_file("mcp.json", servers(a={"command": "a"}))
    project_path = layout.project_file("mcp.json", servers(a={"enabled": False, "args": ["--evil"]}))
    layout.approve()
    config = layout.load()
    assert config.servers["a"].enabled is True and config.servers["a"].args == ()  # override ignored
    assert len(config.warnings) == 1
    warning = config.warnings[0]
    assert (warning.file, warning.server) == (str(project_path), "a") and '"args"' in warning.message
    assert warning.reason == "invalid_override"


def test_partial_override_of_an_undefined_server_is_an_error(layout: Layout) -> None:
    project_path = layout.project_file("mcp.json", servers(ghost={"enabled": False}))
    layout.approve()
    config = layout.load()
    assert config.servers == {}
    assert [(w.file, w.server) for w in config.warnings] == [(str(project_path), "ghost")]
    assert "no lower layer" in config.warnings[0].message
    assert config.warnings[0].reason == "partial_override_unknown"


def test_partial_override_of_an_invalid_global_entry_says_so(layout: Layout) -> None:
    layout.global_file("mcp.json", servers(a={"command": 1}))
    layout.project_file("mcp.json", servers(a={"enabled": False}))
    layout.approve()
    config = layout.load()
    assert config.servers == {}
    assert len(config.warnings) == 2 and "invalid" in config.warnings[1].message
    assert [w.reason for w in config.warnings] == ["invalid_entry", "partial_override_invalid_base"]


def test_partial_override_of_an_extension_server(layout: Layout) -> None:
    registry.register_server("ext", {"command": "ext"})
    layout.project_file("mcp.json", servers(ext={"enabled": False}))
    layout.approve()
    ext = layout.load().servers["ext"]
    assert (ext.enabled, ext.source) == (False, "extension")


def test_entries_without_transport_in_global_files_are_invalid(layout: Layout) -> None:
    path = layout.global_file("mcp.json", servers(a={"enabled": False}))
    config = layout.load()
    assert config.servers == {}
    assert config.warnings[0].file == str(path) and "no transport" in config.warnings[0].message


def test_invalid_higher_entry_leaves_the_lower_one_in_effect(layout: Layout) -> None:
    layout.global_file("settings.json", servers(a={"command": "good"}))
    layout.global_file("mcp.json", servers(a={"command": "bad", "timeoutMs": -1}))
    config = layout.load()
    assert config.servers["a"].command == "good"
    assert len(config.warnings) == 1


# ---- expansion --------------------------------------------------------------------------------


def test_expansion_in_the_loader(layout: Layout) -> None:
    layout.global_file(
        "mcp.json",
        servers(
            s={
                "command": "${BIN:-srv}",
                "args": ["$$HOME", "${env:ARG}"],
                "env": {"K": "${KEY}"},
                "cwd": "${SUB}",
            },
            h={"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${KEY}"}},
        ),
    )
    layout.environ.update({"ARG": "a1", "KEY": "k3y", "SUB": "sub", "HOST": "h.test"})
    config = layout.load()
    s, h = config.servers["s"], config.servers["h"]
    assert (s.command, s.args, dict(s.env), s.cwd) == (
        "srv",
        ("$HOME", "a1"),
        {"K": "k3y"},
        str(layout.project / "sub"),
    )
    assert (h.url, dict(h.headers)) == ("https://h.test/mcp", {"Authorization": "Bearer k3y"})


def test_missing_variable_makes_only_that_entry_invalid(layout: Layout) -> None:
    path = layout.global_file(
        "mcp.json", servers(a={"command": "a", "env": {"T": "${NOPE}"}}, b={"command": "b"})
    )
    config = layout.load()
    assert list(config.servers) == ["b"]
    assert len(config.warnings) == 1
    assert (config.warnings[0].file, config.warnings[0].server) == (str(path), "a")
    assert "NOPE" in config.warnings[0].message
    assert config.warnings[0].reason == "env_missing"


def test_only_winning_entries_are_expanded(layout: Layout) -> None:
    layout.global_file("settings.json", servers(a={"command": "${SHADOWED}"}))
    layout.global_file("mcp.json", servers(a={"command": "${USED}"}))
    env = RecordingEnv({"USED": "u"})
    config = layout.load(environ=env)
    assert config.servers["a"].command == "u"
    assert "SHADOWED" not in env.read


def test_warnings_are_not_repeated(layout: Layout) -> None:
    layout.global_file("mcp.json", servers(a={"command": "a", "headers": {"X": "y"}}))
    layout.project_file("mcp.json", servers(a={"enabled": False}))
    layout.approve()
    config = layout.load()
    assert len(config.warnings) == 1 and '"headers"' in config.warnings[0].message
