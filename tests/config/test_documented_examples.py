"""The configuration examples of orb's settings documentation and of the pi-mcp-extension README,
copied verbatim, load exactly as those documents describe."""

from __future__ import annotations

from pathlib import Path

from orbmcp.config.model import AuthConfig
from tests.config import Layout

# orb's settings.json documentation, "Settings"
ORB_SETTINGS = """
{
  "mcpServers": {
    "local": {
      "command": "my-mcp-server",
      "args": ["--stdio"],
      "env": { "API_TOKEN": "..." },
      "cwd": ".",
      "timeoutMs": 10000
    },
    "remote": {
      "url": "https://example.test/mcp",
      "headers": { "Authorization": "Bearer ..." },
      "maxRetries": 2,
      "timeoutMs": 10000
    },
    "temporarily-off": {
      "command": "another-server",
      "enabled": false
    }
  }
}
"""

# pi-mcp-extension README, "Quick Start" step 3
PI_QUICK_START = """
{
  "mcpServers": {
    // Remote HTTP server with OAuth 2.1 (prompts "Authorize now" on startup)
    "supabase": {
      "transport": "streamable-http",
      "url": "https://mcp.supabase.com/mcp",
      "auth": {
        "type": "oauth"
      },
      "lifecycle": "eager"
    },
    // Local stdio subprocess server (connects on demand via /mcp:start or mcp_connect)
    "context7": {
      "command": "npx",
      "args": ["-y", "@context7/mcp"],
      "lifecycle": "lazy"
    }
  }
}
"""

# pi-mcp-extension README, "Full Example" (JSONC)
PI_FULL_EXAMPLE = """
{
  "settings": {
    "toolPrefix": "mcp",         // Tools appear as mcp_<server>_<tool> (default: "mcp")
    "requestTimeoutMs": 30000,   // Per-request timeout in ms (default: 30000)
    "maxRetries": 5              // Max reconnection attempts, 0-10 (default: 5)
  },
  "mcpServers": {

    // ── HTTP servers with OAuth 2.1 ──────────────────────────────────────────
    "supabase": {
      "transport": "streamable-http",
      "url": "https://mcp.supabase.com/mcp",
      "auth": {
        "type": "oauth"
      },
      "lifecycle": "eager"
    },
    "deepsource": {
      "url": "https://mcp.deepsource.com/mcp", // "transport" defaults to "streamable-http" when "url" is set
      "auth": {
        "type": "oauth"
      },
      "lifecycle": "eager"
    },

    // ── HTTP servers with static API key / Bearer headers ────────────────────
    "zai-web-search": {
      "transport": "streamable-http",
      "url": "https://api.z.ai/api/mcp/web_search_prime/mcp",
      "headers": {
        "Authorization": "Bearer YOUR_ZAI_API_KEY"
      },
      "lifecycle": "lazy"
    },

    // ── Legacy SSE servers ───────────────────────────────────────────────────
    "legacy-server": {
      "transport": "sse",
      "url": "https://example.com/sse",
      "lifecycle": "lazy"
    },

    // ── stdio subprocess servers ─────────────────────────────────────────────
    "pathfinder": {
      "command": "/path/to/pathfinder-mcp",
      "transport": "stdio",
      "lifecycle": "eager"
    },
    "context7": {
      "command": "npx",
      "args": ["-y", "@context7/mcp"],
      "cwd": "./",
      "transport": "stdio",
      "lifecycle": "lazy"
    },
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/workspace"],
      "transport": "stdio",
      "lifecycle": "lazy",
      "env": {
        "NODE_ENV": "production"
      }
    }
  }
}
"""

# pi-mcp-extension README, "Project Override Entries" (the comment lines name the files)
PI_OVERRIDE_GLOBAL = """
// ~/.pi/agent/mcp.json
{ "mcpServers": { "internal-tools": { "command": "internal-mcp", "lifecycle": "eager" } } }
"""
PI_OVERRIDE_PROJECT = """
// <project>/.pi/mcp.json — turn it off for this project only
{ "mcpServers": { "internal-tools": { "enabled": false } } }
"""


def test_orb_settings_json(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    path = layout.global_file("settings.json", ORB_SETTINGS)
    config = layout.load()

    assert config.warnings == ()
    assert list(config.servers) == ["local", "remote", "temporarily-off"]
    local = config.servers["local"]
    assert (local.transport, local.command, local.args) == ("stdio", "my-mcp-server", ("--stdio",))
    assert dict(local.env) == {"API_TOKEN": "..."}
    assert local.cwd == str(layout.project)  # "." resolved from the working directory
    assert local.timeout_ms == 10000
    assert local.max_retries == 5  # omitted: the default of 5
    assert (local.source, local.file) == ("global", str(path))

    remote = config.servers["remote"]
    assert (remote.transport, remote.url) == ("streamable-http", "https://example.test/mcp")
    assert dict(remote.headers) == {"Authorization": "Bearer ..."}
    assert (remote.max_retries, remote.timeout_ms) == (2, 10000)

    off = config.servers["temporarily-off"]
    assert (off.enabled, off.lifecycle, off.command) == (False, "lazy", "another-server")
    assert [s.name for s in config.enabled_servers()] == ["local", "remote"]


def test_pi_quick_start(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.global_file("mcp.json", PI_QUICK_START)
    config = layout.load()

    assert config.warnings == ()
    supabase = config.servers["supabase"]
    assert (supabase.transport, supabase.url, supabase.lifecycle) == (
        "streamable-http",
        "https://mcp.supabase.com/mcp",
        "eager",
    )
    assert supabase.auth == AuthConfig(type="oauth")
    context7 = config.servers["context7"]
    assert (context7.transport, context7.command, context7.args, context7.lifecycle) == (
        "stdio",
        "npx",
        ("-y", "@context7/mcp"),
        "lazy",
    )
    assert [s.name for s in config.eager_servers()] == ["supabase"]


def test_pi_full_example(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.global_file("mcp.json", PI_FULL_EXAMPLE)
    config = layout.load()

    assert config.warnings == ()
    assert (config.settings.tool_prefix, config.settings.request_timeout_ms, config.settings.max_retries) == (
        "mcp",
        30000,
        5,
    )
    servers = config.servers
    assert list(servers) == [
        "supabase",
        "deepsource",
        "zai-web-search",
        "legacy-server",
        "pathfinder",
        "context7",
        "filesystem",
    ]
    summary = {name: (s.transport, s.lifecycle, s.has_oauth) for name, s in servers.items()}
    assert summary == {
        "supabase": ("streamable-http", "eager", True),
        "deepsource": ("streamable-http", "eager", True),  # URL-only defaults to streamable-http
        "zai-web-search": ("streamable-http", "lazy", False),
        "legacy-server": ("sse", "lazy", False),
        "pathfinder": ("stdio", "eager", False),
        "context7": ("stdio", "lazy", False),
        "filesystem": ("stdio", "lazy", False),
    }
    assert dict(servers["zai-web-search"].headers) == {"Authorization": "Bearer YOUR_ZAI_API_KEY"}
    assert servers["legacy-server"].url == "https://example.com/sse"
    assert servers["pathfinder"].command == "/path/to/pathfinder-mcp"
    assert servers["context7"].cwd == str(layout.project)  # "./" from the working directory
    assert servers["filesystem"].args == ("-y", "@modelcontextprotocol/server-filesystem", "/workspace")
    assert dict(servers["filesystem"].env) == {"NODE_ENV": "production"}
    assert all(s.request_timeout_ms == 30000 and s.max_retries == 5 for s in servers.values())


def test_pi_project_override_turns_a_global_server_off(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    global_path = layout.global_file("mcp.json", PI_OVERRIDE_GLOBAL)
    project_path = layout.project_file("mcp.json", PI_OVERRIDE_PROJECT)

    before = layout.load().servers["internal-tools"]
    assert (before.enabled, before.lifecycle) == (True, "eager")

    layout.approve()
    config = layout.load()
    after = config.servers["internal-tools"]
    assert config.warnings == ()
    assert (after.enabled, after.lifecycle, after.command) == (False, "lazy", "internal-mcp")
    # the definition (and any credential in it) still comes from the global file
    assert (after.source, after.file, after.override_file) == ("global", str(global_path), str(project_path))


def test_pi_project_settings_override_only_stated_keys(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.global_file("mcp.json", PI_FULL_EXAMPLE.replace('"maxRetries": 5', '"maxRetries": 7'))
    layout.project_file("mcp.json", '{"settings": {"requestTimeoutMs": 1000}}')
    layout.approve()
    settings = layout.load().settings
    assert (settings.tool_prefix, settings.request_timeout_ms, settings.max_retries) == ("mcp", 1000, 7)
