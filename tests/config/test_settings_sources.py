"""orbmcp's settings are one pydantic-settings model whose sources are the config files' layers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from orbmcp import environment
from orbmcp.config.settings import SETTING_KEYS, Settings, SettingsLayer
from orbmcp.errors import ConfigError
from orbmcp.fastpath.daemon_client import auto_start_enabled
from orbmcp.session.daemon_scope import Scope
from tests.config import Layout, write
from tests.core.live import isolated_env

REPO = Path(__file__).resolve().parents[2]


def test_settings_are_one_base_settings_over_the_file_layers_in_precedence_order() -> None:
    layers = [
        SettingsLayer(
            {"settings": {"toolPrefix": "g1", "maxRetries": 1, "requestTimeoutMs": 100}}, "g/settings"
        ),
        SettingsLayer({"settings": {"toolPrefix": "g2", "maxRetries": 2}}, "g/mcp"),
        SettingsLayer({"settings": {"toolPrefix": "p1"}}, "p/settings", project=True),
        SettingsLayer({"settings": {"toolPrefix": "p2", "maxRetries": "many"}}, "p/mcp", project=True),
    ]
    settings, warnings = Settings.from_files(layers)
    assert isinstance(settings, BaseSettings)
    # the highest layer that states a valid value wins; a bad value leaves the lower one in effect
    assert (settings.tool_prefix, settings.max_retries, settings.request_timeout_ms) == ("p2", 2, 100)
    assert [(w.file, w.reason) for w in warnings] == [("p/mcp", "invalid_setting")]
    assert '"settings.maxRetries" must be an integer from 0 to 10' in warnings[0].message


def test_a_project_cannot_state_a_global_only_setting() -> None:
    layers = [SettingsLayer({"settings": {"daemon": "auto", "lock": "warn"}}, "p/mcp", project=True)]
    settings, warnings = Settings.from_files(layers)
    assert (settings.daemon, settings.lock) == ("off", "warn")
    assert sorted(w.message for w in warnings) == [
        '"daemon" is a global setting; a project cannot set it (ignored)',
        '"lock" is a global setting; a project cannot set it (ignored)',
    ]


def test_no_dotenv_nor_pydantic_settings_own_environment_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cloned project must not bring settings through a .env file (not even with orbmcp's own
    names), and only orbmcp's ``ORBMCP_*`` names are read from the environment."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("TOOL_PREFIX=evil\nDAEMON=auto\nORBMCP_TOOL_PREFIX=evil\n")
    monkeypatch.setenv("TOOL_PREFIX", "evil")
    monkeypatch.setenv("DAEMON", "auto")
    settings = Layout(tmp_path).load().settings
    assert (settings.tool_prefix, settings.daemon) == ("mcp", "off")


def test_every_settings_variable_names_a_setting() -> None:
    """The one list (``environment.SETTINGS``) speaks the files' keys, which the model reads."""
    assert set(environment.SETTINGS.values()) <= set(SETTING_KEYS.values())
    assert all(name.startswith("ORBMCP_") for name in environment.SETTINGS)


def test_an_orbmcp_variable_overrides_a_settings_json_key(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.global_file(
        "settings.json", {"settings": {"toolPrefix": "file", "maxRetries": 1, "daemon": "off"}}
    )
    layout.global_file("mcp.json", {"settings": {"requestTimeoutMs": 100}})
    layout.environ.update({"ORBMCP_TOOL_PREFIX": "env", "ORBMCP_MAX_RETRIES": "4", "ORBMCP_DAEMON": "auto"})
    layout.environ["ORBMCP_LOCK"] = ""  # empty: unset
    config = layout.load()
    settings = config.settings
    assert (settings.tool_prefix, settings.max_retries, settings.daemon) == ("env", 4, "auto")
    assert (settings.request_timeout_ms, settings.lock) == (100, "warn")  # not stated by a variable
    assert config.warnings == ()


def test_a_variable_is_above_the_one_config_file_and_a_project_file(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.project_file("mcp.json", {"settings": {"toolPrefix": "proj"}, "mcpServers": {}})
    layout.approve()
    layout.environ["ORBMCP_TOOL_PREFIX"] = "env"
    assert layout.load().settings.tool_prefix == "env"
    only = write(tmp_path / "ci.json", {"settings": {"toolPrefix": "ci", "maxRetries": 2}})
    settings = layout.load(config_file=only).settings
    assert (settings.tool_prefix, settings.max_retries) == ("env", 2)


@pytest.mark.parametrize(
    ("variable", "value", "want"),
    [
        ("ORBMCP_MAX_RETRIES", "many", "an integer from 0 to 10"),
        ("ORBMCP_REQUEST_TIMEOUT_MS", "-5", "a positive integer"),
        ("ORBMCP_TOOL_PREFIX", "a b", "1-32 characters"),
        ("ORBMCP_DAEMON", "always", '"auto" or "off"'),
    ],
)
def test_a_bad_variable_is_a_config_error_naming_it(
    tmp_path: Path, variable: str, value: str, want: str
) -> None:
    layout = Layout(tmp_path)
    layout.global_file("mcp.json", {"settings": {"maxRetries": 1}})
    layout.environ[variable] = value
    with pytest.raises(ConfigError) as caught:
        layout.load()
    assert caught.value.message.startswith(f"{variable} must be {want}")
    assert repr(value) in caught.value.message and "\n" not in caught.value.message


def test_a_bad_variable_stops_a_command_with_one_line_naming_it(tmp_path: Path) -> None:
    config = write(tmp_path / "mcp.json", {"settings": {"maxRetries": 1}, "mcpServers": {}})
    env = isolated_env(
        {"ORB_AGENT_DIR": str(tmp_path / "agent"), "ORBMCP_CONFIG": str(config), "NO_COLOR": "1"}
        | {"PYTHONPATH": str(REPO), "ORBMCP_NO_DAEMON": "1", "ORBMCP_MAX_RETRIES": "many"}
    )
    result = subprocess.run(
        [sys.executable, "-m", "orbmcp", "config", "show"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "orbmcp: error: ORBMCP_MAX_RETRIES must be an integer from 0 to 10 (got 'many'): fix or unset it"
    ]


def test_the_daemon_client_reads_the_daemon_variable_above_the_files(tmp_path: Path) -> None:
    """The fast path (no pydantic) honours ``ORBMCP_DAEMON`` as the settings model does."""
    gdir = tmp_path / "agent"
    write(gdir / "mcp.json", {"settings": {"daemon": "auto"}})
    scope = Scope(uid=os.getuid(), global_dir=str(gdir), project_dir=str(tmp_path), config_file=None)
    assert auto_start_enabled(scope, {}) is True
    assert auto_start_enabled(scope, {"ORBMCP_DAEMON": "off"}) is False
    assert auto_start_enabled(scope, {"ORBMCP_DAEMON": "bogus"}) is True  # the one-shot run says why
    write(gdir / "mcp.json", {"settings": {"daemon": "off"}})
    assert auto_start_enabled(scope, {"ORBMCP_DAEMON": "auto"}) is True
