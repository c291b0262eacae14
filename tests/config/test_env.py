"""ORBMCP_* environment settings (pydantic-settings, connect-time only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orbmcp.config.env import load_env_settings
from orbmcp.errors import ConfigError


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ORBMCP_DEBUG", "ORBMCP_CONFIG", "ORBMCP_NO_COLOR", "ORB_AGENT_DIR"):
        monkeypatch.delenv(name, raising=False)


def test_defaults() -> None:
    settings = load_env_settings()
    assert (settings.debug, settings.config, settings.no_color, settings.agent_dir) == (
        False,
        None,
        False,
        None,
    )


def test_values_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORBMCP_DEBUG", "1")
    monkeypatch.setenv("ORBMCP_CONFIG", "/ci/mcp.json")
    monkeypatch.setenv("ORBMCP_NO_COLOR", "true")
    monkeypatch.setenv("ORB_AGENT_DIR", "/agent")
    settings = load_env_settings()
    assert (settings.debug, settings.config, settings.no_color, settings.agent_dir) == (
        True,
        Path("/ci/mcp.json"),
        True,
        Path("/agent"),
    )


def test_empty_value_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORBMCP_DEBUG", "")
    assert load_env_settings().debug is False


def test_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORBMCP_DEBUG", "maybe")
    with pytest.raises(ConfigError, match="ORBMCP_DEBUG") as caught:
        load_env_settings()
    assert caught.value.code == "config"


def test_a_dotenv_file_in_the_working_directory_is_not_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text("ORBMCP_CONFIG=evil.json\nORB_AGENT_DIR=./state\n")
    monkeypatch.chdir(tmp_path)
    settings = load_env_settings()
    assert (settings.config, settings.agent_dir) == (None, None)
