"""orbmcp's settings are one pydantic-settings model whose sources are the config files' layers."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from orbmcp.config.settings import Settings, SettingsLayer
from tests.config import Layout


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


def test_no_dotenv_or_environment_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cloned project must not bring settings through a .env file or the environment."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("TOOL_PREFIX=evil\nDAEMON=auto\n")
    monkeypatch.setenv("TOOL_PREFIX", "evil")
    monkeypatch.setenv("DAEMON", "auto")
    settings = Layout(tmp_path).load().settings
    assert (settings.tool_prefix, settings.daemon) == ("mcp", "off")
