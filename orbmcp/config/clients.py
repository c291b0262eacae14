"""Where other MCP clients keep their servers: one entry per client, its files per OS and scope.

A client's files are listed highest precedence first, as that client itself resolves them (Claude
Code: the project's entry in ``~/.claude.json``, then ``.mcp.json``, then the user's entries).
``scope`` says whose file it is: ``user`` files are the person's own; ``project`` files live in the
project directory and may come with a cloned repository, so they are trusted only the way orbmcp's
own project files are. Locations come from the real environment only (``orbmcp.environment``),
never from a file in the project: a project must not be able to point orbmcp at other files.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from orbmcp import environment
from orbmcp.config.basics import ClientName

Scope = Literal["user", "project"]
# How a file states its servers; translate.py has one reader per format.
Format = Literal[
    "mcpServers",  # {"mcpServers": {name: entry}}: Claude Desktop/Code, Cursor, Windsurf, Gemini, pi
    "claude-local",  # ~/.claude.json: {"projects": {"/abs/project": {"mcpServers": {...}}}}
    "vscode",  # {"servers": {...}, "inputs": [...]}
    "vscode-settings",  # settings.json: {"mcp": {"servers": {...}}}
    "codex",  # config.toml: [mcp_servers.NAME]
    "opencode",  # {"mcp": {name: {"type": "local"|"remote", ...}}}
]

CLIENTS: tuple[ClientName, ...] = get_args(ClientName)

LABELS: Mapping[ClientName, str] = {
    "claude-code": "Claude Code",
    "claude-desktop": "Claude Desktop",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "windsurf": "Windsurf",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "opencode": "OpenCode",
    "pi": "pi",
}


@dataclass(frozen=True)
class ClientFile:
    """One config file of another client, and how to read it."""

    client: ClientName
    path: Path
    scope: Scope
    format: Format

    @property
    def source(self) -> str:
        return f"import:{self.client}"


def _app_dir(name: str, environ: Mapping[str, str] | None, platform: str) -> Path:
    """Where a desktop app keeps per-user data: ``~/Library/Application Support/NAME`` on macOS,
    ``%APPDATA%/NAME`` on Windows, ``$XDG_CONFIG_HOME/NAME`` elsewhere."""
    if platform == "darwin":
        return environment.home(environ) / "Library" / "Application Support" / name
    if platform.startswith("win"):
        appdata = environment.appdata(environ)
        return (appdata or environment.home(environ) / "AppData" / "Roaming") / name
    return environment.xdg_config_home(environ) / name


def client_files(
    client: ClientName,
    project_dir: Path,
    *,
    environ: Mapping[str, str] | None = None,
    platform: str = sys.platform,
) -> tuple[ClientFile, ...]:
    """Every file ``client`` may read its servers from, highest precedence first (existing or not).

    Run from the home directory, Cursor's project file *is* its user file: it counts once, as the
    person's own. (Only the same path: a symlink in a project stays a project file.)
    """
    files = _files(client, project_dir, environ, platform)
    user = {os.path.normpath(f.path) for f in files if f.scope == "user"}
    return tuple(f for f in files if f.scope == "user" or os.path.normpath(f.path) not in user)


def _files(
    client: ClientName, project_dir: Path, environ: Mapping[str, str] | None, platform: str
) -> tuple[ClientFile, ...]:
    home = environment.home(environ)

    def user(path: Path, fmt: Format = "mcpServers") -> ClientFile:
        return ClientFile(client, path, "user", fmt)

    def project(relative: str, fmt: Format = "mcpServers") -> ClientFile:
        return ClientFile(client, project_dir / relative, "project", fmt)

    if client == "claude-code":
        # Claude Code: local scope (this project's entry in ~/.claude.json) over the project's
        # .mcp.json over the user scope (top-level mcpServers of ~/.claude.json).
        claude_json = home / ".claude.json"
        return (user(claude_json, "claude-local"), project(".mcp.json"), user(claude_json))
    if client == "claude-desktop":
        return (user(_app_dir("Claude", environ, platform) / "claude_desktop_config.json"),)
    if client == "cursor":
        return (project(".cursor/mcp.json"), user(home / ".cursor" / "mcp.json"))
    if client == "vscode":
        code_user = _app_dir("Code", environ, platform) / "User"
        return (
            project(".vscode/mcp.json", "vscode"),
            user(code_user / "mcp.json", "vscode"),
            user(code_user / "settings.json", "vscode-settings"),
        )
    if client == "windsurf":
        return (user(home / ".codeium" / "windsurf" / "mcp_config.json"),)
    if client == "codex":
        return (user(environment.codex_home(environ) / "config.toml", "codex"),)
    if client == "gemini":
        return (project(".gemini/settings.json"), user(home / ".gemini" / "settings.json"))
    if client == "opencode":
        config = environment.xdg_config_home(environ) / "opencode"
        return (
            project("opencode.jsonc", "opencode"),
            project("opencode.json", "opencode"),
            user(config / "opencode.jsonc", "opencode"),
            user(config / "opencode.json", "opencode"),
        )
    # pi (pi-mcp-extension): the same format as orbmcp's own mcp.json.
    return (project(".pi/mcp.json"), user(environment.pi_agent_dir(environ) / "mcp.json"))


def parse_client(value: str) -> ClientName | None:
    """A client name as a person types it (any case), or None when orbmcp does not know it."""
    wanted = value.strip().lower()
    return next((c for c in CLIENTS if c == wanted), None)
