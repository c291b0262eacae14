"""``ORBMCP_*`` environment settings, through pydantic-settings.

Connect-time only: pydantic_settings is imported at the top on purpose, so this module must not be
imported by the config loader, ``--help``, ``--version``, completion or the config commands (they
read the two variables they need, ``ORBMCP_CONFIG`` and ``ORB_AGENT_DIR``, straight from the
environment). Values come from the real process environment only, never from a project ``.env``
file (T-G9).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from orbmcp.errors import ConfigError


class EnvSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ORBMCP_",
        env_file=None,  # never a .env: a project could otherwise move config or state (CVE-2025-61260)
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
    )

    debug: bool = False
    config: Path | None = None
    no_color: bool = False
    agent_dir: Path | None = Field(default=None, validation_alias=AliasChoices("ORB_AGENT_DIR"))


def load_env_settings() -> EnvSettings:
    """Read the environment once; an unparsable value is a ConfigError naming the variable."""
    try:
        return EnvSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "?"
        variable = "ORB_AGENT_DIR" if field in ("agent_dir", "ORB_AGENT_DIR") else f"ORBMCP_{field.upper()}"
        raise ConfigError(
            f"environment variable {variable}: {first['msg']} (got {first.get('input')!r})",
            hint=f"unset {variable} or give it a valid value (booleans: 1/0, true/false)",
        ) from None
