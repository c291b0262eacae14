"""Where configuration lives. Every location derives from the real environment or an explicit flag.

Nothing here reads a config file: a project must never be able to move the global dir, where
trust records and tokens live.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from orbmcp import environment

SETTINGS_FILE = "settings.json"
MCP_FILE = "mcp.json"
PROJECT_SUBDIR = ".orb"
TRUST_STORE_FILE = "trusted-projects.json"


def global_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$ORB_AGENT_DIR`` or ``~/.orb/agent``; never created here."""
    configured = environment.global_dir(environ)
    return (configured or Path("~/.orb/agent")).expanduser()


def project_dir(explicit: Path | None = None, *, cwd: Path | None = None) -> Path:
    """``--project DIR`` (relative to ``cwd``) or the working directory, made absolute."""
    base = cwd if cwd is not None else Path.cwd()
    if explicit is None:
        return base.absolute()
    explicit = explicit.expanduser()
    return explicit if explicit.is_absolute() else (base / explicit).absolute()


def global_files(directory: Path) -> tuple[Path, Path]:
    """The global files, lowest precedence first: ``settings.json`` then ``mcp.json``."""
    return directory / SETTINGS_FILE, directory / MCP_FILE


def project_config_dir(directory: Path) -> Path:
    return directory / PROJECT_SUBDIR


def project_files(directory: Path) -> tuple[Path, Path]:
    """The project files, lowest precedence first."""
    config_dir = project_config_dir(directory)
    return config_dir / SETTINGS_FILE, config_dir / MCP_FILE


def trust_store_path(directory: Path) -> Path:
    return directory / TRUST_STORE_FILE
