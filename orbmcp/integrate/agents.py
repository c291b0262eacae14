"""What each agent gets from ``orbmcp integrate``, and where its files go.

- pi: an extension (``templates/pi_extension.ts``) that runs ``orbmcp slash --stdio`` and registers
  ``/mcp`` and its subcommands, in ``$PI_CODING_AGENT_DIR/extensions/`` or ``.pi/extensions/``.
- Claude Code, Gemini CLI, opencode: custom slash-command files that run ``orbmcp slash`` through
  the agent's own shell syntax. Claude Code and Gemini CLI keep ``/mcp`` for themselves, so theirs
  are ``/orbmcp`` (Gemini: and ``/orbmcp:start`` ... by its namespace directories).
- Codex (which has no commands that run a shell line), and every agent with ``--serve``:
  ``orbmcp serve`` registered as an MCP server in the agent's config.

The orbmcp these files run is the one that wrote them, by absolute path (``argv``), so the agent
needs no orbmcp on its PATH. Locations come from the real environment, never from a project file.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from orbmcp import environment
from orbmcp.errors import UsageError
from orbmcp.integrate import MARKER
from orbmcp.integrate.pieces import ConfigEntry, ManagedFile, Piece

Scope = Literal["user", "project"]
Environ = Mapping[str, str] | None
SERVE_NAME = "orbmcp"


@dataclass(frozen=True)
class Where:
    scope: Scope
    project: Path
    environ: Environ
    argv: tuple[str, ...]  # how to run this orbmcp: (python, "-m", "orbmcp")

    @property
    def home(self) -> Path:
        return environment.home(self.environ)

    @property
    def shell(self) -> str:
        return shlex.join(self.argv)


@dataclass(frozen=True)
class Agent:
    name: str
    label: str
    gets: str  # what `integrate` gives it, for --list
    commands: tuple[str, ...]  # the slash commands it gets ("" when --serve only)
    binary: str
    config_dir: Callable[[Environ], Path]
    files: Callable[[Where], list[Piece]] | None  # its command files; None: only --serve
    serve: Callable[[Where], ConfigEntry] | None  # orbmcp serve in its MCP config
    reserved: str | None = None  # why its commands are not called /mcp

    def installed(self, environ: Environ = None) -> str | None:
        """Where it was found (its binary on PATH, or its config dir), or None."""
        found = shutil.which(self.binary)
        if found:
            return found
        directory = self.config_dir(environ)
        return str(directory) if directory.is_dir() else None


def template(name: str) -> str:
    return resources.files("orbmcp.integrate").joinpath("templates", name).read_text(encoding="utf-8")


def _fill(text: str, **values: str) -> str:
    for key, value in {"MARKER": MARKER, **values}.items():
        text = text.replace(f"@{key}@", value)
    return text


def serve_argv(where: Where) -> list[str]:
    return [*where.argv, "serve"]


def _mcp_servers(path: Path, where: Where, **extra: object) -> ConfigEntry:
    command, *args = serve_argv(where)
    value = {**extra, "command": command, "args": args}
    return ConfigEntry(path, "json", ("mcpServers", SERVE_NAME), value, private=where.scope == "user")


# ---- pi ---------------------------------------------------------------------------------------


def _pi_dir(environ: Environ) -> Path:
    return environment.pi_agent_dir(environ)


def _pi_files(where: Where) -> list[Piece]:
    base = _pi_dir(where.environ) if where.scope == "user" else where.project / ".pi"
    text = _fill(template("pi_extension.ts"), ORBMCP_ARGV=json.dumps(list(where.argv)))
    return [ManagedFile(base / "extensions" / "orbmcp.ts", text)]


# ---- Claude Code ------------------------------------------------------------------------------


def _claude_dir(environ: Environ) -> Path:
    return environment.home(environ) / ".claude"


def _claude_files(where: Where) -> list[Piece]:
    base = _claude_dir(where.environ) if where.scope == "user" else where.project / ".claude"
    text = _fill(template("claude_command.md"), ORBMCP=where.shell)
    return [ManagedFile(base / "commands" / "orbmcp.md", text)]


def _claude_serve(where: Where) -> ConfigEntry:
    if where.scope == "user":  # the user scope: top-level mcpServers of ~/.claude.json
        return _mcp_servers(where.home / ".claude.json", where, type="stdio")
    return _mcp_servers(where.project / ".mcp.json", where, type="stdio")


# ---- Gemini CLI -------------------------------------------------------------------------------

# orbmcp's slash forms and what Gemini calls them (/mcp is Gemini's own; a directory is a namespace).
GEMINI_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("orbmcp.toml", "/mcp", "MCP servers through orbmcp: status, start NAME, call SERVER TOOL k=v, help"),
    ("orbmcp/start.toml", "/mcp:start", "orbmcp: connect a server (lazy ones too)"),
    ("orbmcp/stop.toml", "/mcp:stop", "orbmcp: stop a server"),
    ("orbmcp/auth.toml", "/mcp:auth", "orbmcp: authorize an OAuth server"),
    ("orbmcp/enable.toml", "/mcp:enable", "orbmcp: turn a server on"),
    ("orbmcp/disable.toml", "/mcp:disable", "orbmcp: turn a server off"),
)


def _gemini_dir(environ: Environ) -> Path:
    return environment.home(environ) / ".gemini"


def _gemini_files(where: Where) -> list[Piece]:
    base = _gemini_dir(where.environ) if where.scope == "user" else where.project / ".gemini"
    raw = template("gemini_command.toml")
    return [
        ManagedFile(
            base / "commands" / file,
            _fill(raw, ORBMCP=where.shell, SLASH=slash, DESCRIPTION=description),
        )
        for file, slash, description in GEMINI_COMMANDS
    ]


def _gemini_serve(where: Where) -> ConfigEntry:
    base = _gemini_dir(where.environ) if where.scope == "user" else where.project / ".gemini"
    return _mcp_servers(base / "settings.json", where)


# ---- opencode ---------------------------------------------------------------------------------


def _opencode_dir(environ: Environ) -> Path:
    return environment.xdg_config_home(environ) / "opencode"


def _opencode_files(where: Where) -> list[Piece]:
    base = _opencode_dir(where.environ) if where.scope == "user" else where.project / ".opencode"
    text = _fill(template("opencode_command.md"), ORBMCP=where.shell)
    return [ManagedFile(base / "commands" / "mcp.md", text)]


def _opencode_serve(where: Where) -> ConfigEntry:
    base = _opencode_dir(where.environ) if where.scope == "user" else where.project
    path = base / "opencode.jsonc"
    if not path.exists():
        path = base / "opencode.json"
    value = {"type": "local", "command": serve_argv(where), "enabled": True}
    return ConfigEntry(path, "json", ("mcp", SERVE_NAME), value, private=where.scope == "user")


# ---- Codex ------------------------------------------------------------------------------------


def _codex_serve(where: Where) -> ConfigEntry:
    if where.scope != "user":
        raise UsageError(
            "Codex reads its MCP servers from its user config only: drop --scope project",
            reason="unsupported_scope",
        )
    command, *args = serve_argv(where)
    path = environment.codex_home(where.environ) / "config.toml"
    return ConfigEntry(path, "toml", ("mcp_servers", SERVE_NAME), {"command": command, "args": args})


AGENTS: tuple[Agent, ...] = (
    Agent(
        "pi",
        "pi",
        "an extension: /mcp and its subcommands, with completion, pi's dialogs for server questions",
        ("/mcp", "/mcp:start", "/mcp:stop", "..."),
        "pi",
        _pi_dir,
        _pi_files,
        None,
    ),
    Agent(
        "claude-code",
        "Claude Code",
        "a custom command /orbmcp (runs orbmcp slash); --serve: orbmcp serve in its MCP config",
        ("/orbmcp",),
        "claude",
        _claude_dir,
        _claude_files,
        _claude_serve,
        reserved="/mcp is Claude Code's own command",
    ),
    Agent(
        "gemini",
        "Gemini CLI",
        "custom commands /orbmcp, /orbmcp:start, /orbmcp:stop, ...; --serve: orbmcp serve in settings.json",
        tuple(slash.replace("/mcp", "/orbmcp", 1) for _, slash, _ in GEMINI_COMMANDS),
        "gemini",
        _gemini_dir,
        _gemini_files,
        _gemini_serve,
        reserved="/mcp is Gemini CLI's own command",
    ),
    Agent(
        "opencode",
        "opencode",
        "a custom command /mcp (runs orbmcp slash); --serve: orbmcp serve in opencode.json",
        ("/mcp",),
        "opencode",
        _opencode_dir,
        _opencode_files,
        _opencode_serve,
    ),
    Agent(
        "codex",
        "Codex",
        "orbmcp serve as the MCP server [mcp_servers.orbmcp] in config.toml (its tools and /mcp prompts)",
        (),
        "codex",
        environment.codex_home,
        None,
        _codex_serve,
    ),
)


def find(name: str) -> Agent:
    wanted = name.strip().lower()
    aliases = {"claude": "claude-code", "gemini-cli": "gemini", "pi-coding-agent": "pi"}
    wanted = aliases.get(wanted, wanted)
    for agent in AGENTS:
        if agent.name == wanted:
            return agent
    raise UsageError(
        f"unknown agent {name!r}",
        hint=f"one of: {', '.join(a.name for a in AGENTS)} (orbmcp integrate --list)",
        reason="unknown_agent",
    )


def pieces(agent: Agent, where: Where, *, serve: bool, remove: bool = False) -> list[Piece]:
    """The files and config entries ``orbmcp integrate`` manages for ``agent`` (serve: the entry too).

    Removing covers the serve entry too: only an entry that runs orbmcp serve is ever removed.
    """
    out: list[Piece] = []
    if agent.files is not None:
        out += agent.files(where)
    if agent.serve is not None and (serve or remove or agent.files is None):
        out.append(agent.serve(where))
    elif serve and not remove:
        raise UsageError(
            f"{agent.label} has no MCP client configuration orbmcp can register serve in; "
            f"its extension already runs orbmcp",
            reason="no_serve",
        )
    return out


def names(agents: Sequence[Agent] = AGENTS) -> list[str]:
    return [a.name for a in agents]
