"""The resolved configuration: what every other layer reads.

Frozen dataclasses: the values after validation (the pydantic models of ``entries.py`` and
``settings.py`` check the files), expansion and merging, cheap to import for code that only
reads them (completion's name cache, the daemon's client, type hints). ``Settings`` lives in
``settings.py`` (a pydantic-settings model).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

# Re-exported: most of the config's readers import these from here.
from orbmcp.config.basics import DEFAULT_MAX_RETRIES as DEFAULT_MAX_RETRIES  # noqa: PLC0414
from orbmcp.config.basics import DEFAULT_REQUEST_TIMEOUT_MS as DEFAULT_REQUEST_TIMEOUT_MS  # noqa: PLC0414
from orbmcp.config.basics import DEFAULT_SAMPLING_TIMEOUT_MS as DEFAULT_SAMPLING_TIMEOUT_MS  # noqa: PLC0414
from orbmcp.config.basics import DEFAULT_TIMEOUT_MS as DEFAULT_TIMEOUT_MS  # noqa: PLC0414
from orbmcp.config.basics import DEFAULT_TOOL_PREFIX as DEFAULT_TOOL_PREFIX  # noqa: PLC0414
from orbmcp.config.basics import ClientName as ClientName  # noqa: PLC0414
from orbmcp.config.basics import ConfigWarning as ConfigWarning  # noqa: PLC0414
from orbmcp.config.basics import SamplingConfig as SamplingConfig  # noqa: PLC0414
from orbmcp.config.transports import kind_of
from orbmcp.errors import ConfigError

if TYPE_CHECKING:
    from orbmcp.config.settings import Settings

# A transport's name: a key of ``config/transports.py`` ``KINDS`` (a new transport adds its kind there).
Transport = str
Lifecycle = Literal["eager", "lazy"]
# Other MCP clients whose config files orbmcp reads through (config/clients.py).
# Where the entry in effect came from; "import:<client>" is another client's file (``file``).
Source = Literal[
    "global",
    "project",
    "config",
    "extension",
    "import:claude-code",
    "import:claude-desktop",
    "import:cursor",
    "import:vscode",
    "import:windsurf",
    "import:codex",
    "import:gemini",
    "import:opencode",
    "import:pi",
]
TrustState = Literal["untrusted", "trusted", "changed"]


@dataclass(frozen=True)
class AuthConfig:
    """OAuth 2.1 settings of one HTTP server (``auth`` or its alias ``oauth``)."""

    type: str = "oauth"
    client_id: str | None = None
    client_secret: str | None = None
    client_name: str | None = None
    scope: str | None = None
    redirect_port: int | None = None
    client_metadata_url: str | None = None
    # The spec says refuse when the AS does not advertise S256; an entry may opt out explicitly.
    allow_missing_pkce_advertisement: bool = False
    token_endpoint_auth_method: str | None = None
    # Where its secrets are kept: the global setting "tokenStore" ("file" or "keyring").
    credential_store: str = "file"


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    lifecycle: Lifecycle = "eager"
    enabled: bool = True
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    max_retries: int = DEFAULT_MAX_RETRIES
    auth: AuthConfig | None = None
    health_check_interval_ms: int | None = None
    source: Source = "global"
    file: str | None = None
    # A trusted project's partial override (enabled/lifecycle only) that changed this entry.
    override_file: str | None = None
    # The directories this server is told it may work in (``roots``), expanded like ``cwd``; None:
    # the settings' roots, else the project directory.
    roots: tuple[str, ...] | None = None
    # The file's text of each field a ``${VAR}`` reference expanded ("command", "args[1]",
    # "env.API_KEY", "headers.X", "url", "cwd"): displays show the reference, never its value.
    written: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_stdio(self) -> bool:
        """A process orbmcp spawns (the stdio kind), not a server at a URL."""
        return kind_of(self.transport).local

    @property
    def has_oauth(self) -> bool:
        return self.auth is not None

    @property
    def eager(self) -> bool:
        return self.enabled and self.lifecycle == "eager"

    def definition(self) -> dict[str, object]:
        """What would run or be contacted: the part of the entry that trust and caches bind to."""
        return {
            "transport": self.transport,
            "command": self.command,
            "args": list(self.args),
            "env": dict(sorted(self.env.items())),
            "cwd": self.cwd,
            "url": self.url,
            "headers": dict(sorted(self.headers.items())),
        }

    def definition_hash(self) -> str:
        import hashlib  # ~2 ms at import; the config commands never need it

        blob = json.dumps([self.name, self.definition()], sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


UnavailableKind = Literal["invalid", "skipped", "untrusted"]


@dataclass(frozen=True)
class UnavailableEntry:
    """A server a config file names that is not loaded, and why: ``invalid`` (the entry is wrong),
    ``skipped`` (a ``${VAR}`` it needs is not set), ``untrusted`` (its project is not approved).

    Every command that takes a server name reports these as what they are, never as unknown.
    """

    name: str
    kind: UnavailableKind
    file: str | None
    source: Source
    message: str  # what is wrong, one line (a warning's text)
    reason: str  # the machine reason: invalid_entry, env_missing, project_untrusted, ...
    fix: str | None = None  # what to do about it; may hold command references (errors.cmd)

    @property
    def summary(self) -> str:
        """One line: what this entry is and why, e.g. ``skipped: ${GITHUB_TOKEN} is not set``."""
        return f"{self.kind}: {self.message}"

    def error(self) -> ConfigError:
        """What a command that needs this server raises: the entry as it is, never "unknown"."""
        where = f" ({self.file})" if self.file else ""
        if self.kind == "skipped":
            text = f"server '{self.name}' was skipped{where}: {self.message}"
        elif self.kind == "untrusted":
            text = f"server '{self.name}' is not loaded{where}: {self.message}"
        else:
            text = f"server '{self.name}' is invalid{where}: {self.message}"
        return ConfigError(text, file=self.file, server=self.name, hint=self.fix, reason=self.reason)


@dataclass(frozen=True)
class ProjectInfo:
    dir: Path
    files: tuple[Path, ...]  # the project config files that exist
    trusted: bool
    loaded: bool  # files exist, are trusted, and were read
    # "changed": approved once, but some server definitions differ from what was approved.
    trust_state: TrustState = "untrusted"
    pending: tuple[str, ...] = ()  # project servers not loaded because they await (re-)approval

    # Project files of other clients (.cursor/mcp.json, .mcp.json, ...) that exist, when imported.
    import_files: tuple[Path, ...] = ()

    @property
    def config_path(self) -> Path:
        """Where the project's configuration is, for messages: ``.orb``, or else the other client's
        file that holds this project's servers."""
        orb = self.dir / ".orb"
        if self.import_files and not any(f.parent == orb for f in self.files):
            return self.import_files[0]
        return orb


@dataclass(frozen=True)
class ResolvedConfig:
    servers: Mapping[str, ServerConfig]
    settings: Settings
    warnings: tuple[ConfigWarning, ...]
    project: ProjectInfo
    global_dir: Path
    files: tuple[Path, ...] = ()  # every config file that was read, in precedence order (lowest first)
    config_override: Path | None = None  # --config / ORBMCP_CONFIG
    # Names a config file defines that are not in ``servers``: invalid, skipped or untrusted.
    unavailable: Mapping[str, UnavailableEntry] = field(default_factory=dict)
    # Other clients' files that were looked for (existing or not): one appearing changes the config.
    import_candidates: tuple[Path, ...] = ()

    def only(self, server: ServerConfig) -> ResolvedConfig:
        """This configuration with ``server`` (named on a command line) as its one server: the
        settings kept, the files' servers and their warnings left out."""
        warnings = tuple(w for w in self.warnings if w.server is None)
        # The person asked for this server by hand: a switched-off extension does not hide it.
        settings = self.settings.model_copy(update={"extension_enabled": True})
        return replace(
            self, servers={server.name: server}, unavailable={}, warnings=warnings, settings=settings
        )

    def enabled_servers(self) -> list[ServerConfig]:
        if not self.settings.extension_enabled:
            return []
        return [s for s in self.servers.values() if s.enabled]

    def eager_servers(self) -> list[ServerConfig]:
        return [s for s in self.enabled_servers() if s.lifecycle == "eager"]
