"""Other clients' config files, read through: each client's documented example, broken files,
the ``imports`` setting, precedence and collisions, and their project files under trust."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from orbmcp.config import client_documents, trust
from orbmcp.config.clients import CLIENTS, client_files, parse_client
from orbmcp.config.loader import load_config
from orbmcp.config.model import ResolvedConfig
from tests.config import write

FIXTURES = Path(__file__).resolve().parent / "clients"


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])  # the test's own (tests/conftest.py)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def place(fixture: str, dest: Path, *, project: Path | None = None) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    if project is not None:
        text = text.replace("PROJECT_DIR", str(project))
    dest.write_text(text, encoding="utf-8")
    return dest


def load(project: Path, **environ: str) -> ResolvedConfig:
    return load_config(project=project, cwd=project, environ={**os.environ, **environ})


def messages(config: ResolvedConfig) -> list[str]:
    return [str(w) for w in config.warnings]


def user_file(client: str, project: Path, index: int = -1) -> Path:
    files = [f for f in client_files(parse_client(client), project) if f.scope == "user"]  # type: ignore[arg-type]
    return files[index].path


# ---- each client's documented example ------------------------------------------------------------


def test_claude_desktop(home: Path, project: Path) -> None:
    path = place("claude_desktop_config.json", home / ".config" / "Claude" / "claude_desktop_config.json")
    config = load(project)
    fs = config.servers["filesystem"]
    assert (fs.source, fs.file, fs.command) == ("import:claude-desktop", str(path), "npx")
    assert fs.args[-2:] == ("/Users/username/Desktop", "/Users/username/Downloads")
    feed = config.servers["price-feed"]
    # Claude Desktop passes "$USD" on as it is: orbmcp must not read it as a variable.
    assert feed.args == ("--currency", "$USD")
    assert feed.env == {"PRICE_FEED_KEY": "pf_live_0123456789abcdef"}
    assert config.warnings == ()


def test_claude_code_user_and_local_scope(home: Path, project: Path) -> None:
    place("claude.json", home / ".claude.json", project=project)
    config = load(project)
    assert set(config.servers) == {"chrome-devtools", "shell", "notion", "asana"}  # not "elsewhere"
    # local scope (this project's entry) wins over the user scope, as in Claude Code, silently
    assert config.servers["chrome-devtools"].args == ("chrome-devtools-mcp@latest",)
    assert config.servers["notion"].transport == "streamable-http"
    assert config.servers["asana"].transport == "sse"
    assert {s.source for s in config.servers.values()} == {"import:claude-code"}
    assert config.warnings == ()


def test_cursor(home: Path, project: Path) -> None:
    path = place("cursor-mcp.json", home / ".cursor" / "mcp.json")
    config = load(project, USERJOT_API_TOKEN="uj-token")
    assert config.servers["userjot"].headers == {"Authorization": "Bearer uj-token"}
    assert config.servers["notes"].args == ("-y", "notes-mcp", "--root", f"{home}/notes")
    assert "with-env-file" not in config.servers
    [warning] = config.warnings
    assert (warning.file, warning.server) == (str(path), "with-env-file")
    assert warning.message.startswith("import:cursor: ") and '"envFile"' in warning.message


def test_vscode_user_files(home: Path, project: Path) -> None:
    code = home / ".config" / "Code" / "User"
    mcp = place("vscode-mcp.json", code / "mcp.json")
    place("vscode-settings.json", code / "settings.json")
    config = load(project)
    assert config.servers["fetch"].args == ("mcp-server-fetch", "--root", str(project))
    remote = config.servers["my-remote-server"]
    assert (remote.transport, remote.url, remote.headers) == (
        "streamable-http",
        "http://api.contoso.com/mcp",
        {"VERSION": "1.2"},
    )
    assert config.servers["legacy-sse"].transport == "sse"  # settings.json "mcp.servers"
    assert "Perplexity" not in config.servers
    [warning] = config.warnings
    assert (warning.file, warning.server) == (str(mcp), "Perplexity")
    assert "import:vscode" in warning.message and "${input:perplexity-key}" in warning.message


def test_windsurf(home: Path, project: Path) -> None:
    path = place("windsurf-mcp_config.json", home / ".codeium" / "windsurf" / "mcp_config.json")
    config = load(project, GITHUB_TOKEN="gh-secret")
    assert config.servers["github"].env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "gh-secret"}
    assert config.servers["zapier"].url == "https://actions.zapier.com/mcp/YOUR_MCP_KEY/sse"
    assert config.servers["git"].enabled is False
    [warning] = config.warnings  # kept, but its tool filter is not honoured
    assert (warning.file, warning.server) == (str(path), "git") and "disabledTools" in warning.message


def test_codex(home: Path, project: Path) -> None:
    path = place("codex-config.toml", home / ".codex" / "config.toml")
    config = load(project, FIGMA_OAUTH_TOKEN="figma-token", TRACE_ID="t-1")
    server = config.servers["server-name"]
    assert (server.command, server.args, server.env) == ("npx", ("-y", "mcp-server"), {"API_KEY": "value"})
    assert (server.timeout_ms, server.request_timeout_ms) == (20_000, 120_000)
    assert config.servers["figma"].headers == {
        "X-Figma-Region": "us-east-1",
        "X-Trace": "t-1",
        "Authorization": "Bearer figma-token",
    }
    paused = config.servers["paused"]
    assert (paused.enabled, paused.args) == (False, ("--price", "$5"))  # "$5" stays literal
    [warning] = config.warnings
    assert (warning.file, warning.server) == (str(path), "paused") and "enabled_tools" in warning.message


def test_codex_home_is_honoured(home: Path, project: Path, tmp_path: Path) -> None:
    place("codex-config.toml", tmp_path / "codex" / "config.toml")
    assert (
        "figma"
        in load(project, CODEX_HOME=str(tmp_path / "codex"), FIGMA_OAUTH_TOKEN="x", TRACE_ID="y").servers
    )


def test_gemini(home: Path, project: Path) -> None:
    path = place("gemini-settings.json", home / ".gemini" / "settings.json")
    config = load(project, DB_CONNECTION_STRING="postgres://db", EXTERNAL_API_KEY="k-1")
    tools = config.servers["pythonTools"]
    assert tools.env == {"DATABASE_URL": "postgres://db", "API_KEY": "k-1"}  # $VAR and ${VAR}
    assert tools.request_timeout_ms == 15_000
    assert tools.cwd == str(project / "mcp-servers" / "python")
    assert config.servers["httpServer"].transport == "streamable-http"  # httpUrl
    assert config.servers["discoveredServer"].transport == "sse"  # Gemini's url is SSE
    [warning] = config.warnings
    assert (warning.file, warning.server) == (
        str(path),
        "filteredServer",
    ) and "includeTools" in warning.message


def test_opencode(home: Path, project: Path) -> None:
    place("opencode.jsonc", home / ".config" / "opencode" / "opencode.jsonc")
    config = load(project, MY_API_KEY="oc-key")
    local = config.servers["my-local-mcp-server"]
    assert (local.command, local.args, local.env) == (
        "npx",
        ("-y", "my-mcp-command"),
        {"MY_ENV_VAR": "my_env_var_value"},
    )
    assert config.servers["my-remote-mcp"].headers == {"Authorization": "Bearer oc-key"}  # {env:X}
    assert config.servers["jira"].enabled is False
    assert config.warnings == ()


def test_pi_and_its_agent_dir(home: Path, project: Path, tmp_path: Path) -> None:
    place("pi-mcp.json", home / ".pi" / "agent" / "mcp.json")
    config = load(project)
    assert config.servers["supabase"].auth is not None
    assert config.servers["context7"].lifecycle == "lazy"
    assert config.servers["context7"].source == "import:pi"
    moved = place("pi-mcp.json", tmp_path / "pi-agent" / "mcp.json")
    config = load(project, PI_CODING_AGENT_DIR=str(moved.parent))
    assert config.servers["context7"].file == str(moved)


# ---- broken files -----------------------------------------------------------------------------------


def test_broken_files_warn_and_the_rest_still_load(home: Path, project: Path) -> None:
    cursor = place("malformed/cursor-unterminated.json", home / ".cursor" / "mcp.json")
    codex = place("malformed/codex-invalid.toml", home / ".codex" / "config.toml")
    vscode = place("malformed/vscode-servers-array.json", home / ".config" / "Code" / "User" / "mcp.json")
    opencode = place("malformed/opencode-bad-entries.json", home / ".config" / "opencode" / "opencode.json")
    place("claude_desktop_config.json", home / ".config" / "Claude" / "claude_desktop_config.json")
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_bytes(b'{"mcpServers": {"x": "\xff"}}')
    (home / ".pi" / "agent" / "mcp.json").mkdir(parents=True)  # a directory where a file should be

    config = load(project)
    assert "filesystem" in config.servers and "fine" in config.servers
    by_file: dict[str | None, list[str]] = {}
    for w in config.warnings:
        by_file.setdefault(w.file, []).append(w.message)
    assert any("import:cursor" in m and "not read" in m for m in by_file[str(cursor)])
    assert any("import:codex" in m and "TOML" in m for m in by_file[str(codex)])
    assert any('"servers" must be an object' in m for m in by_file[str(vscode)])
    assert any("UTF-8" in m for m in by_file[str(home / ".gemini" / "settings.json")])
    assert any("not a regular file" in m for m in by_file[str(home / ".pi" / "agent" / "mcp.json")])
    skipped = {w.server: w.message for w in config.warnings if w.file == str(opencode)}
    assert set(skipped) == {"no-type", "string-command", "file-secret", "not-an-object"}
    assert all(m.startswith("import:opencode: ") for m in skipped.values())
    assert "{file:" in skipped["file-secret"]


def test_an_unusable_imported_entry_is_reported_by_name(home: Path, project: Path) -> None:
    cursor = write(
        home / ".cursor" / "mcp.json", {"mcpServers": {"bad": {"command": 5}, "x": {"command": "x"}}}
    )
    place("malformed/opencode-bad-entries.json", home / ".config" / "opencode" / "opencode.json")
    config = load(project)
    bad = config.unavailable["bad"]
    assert (bad.kind, bad.source, bad.file, bad.reason) == (
        "invalid",
        "import:cursor",
        str(cursor),
        "invalid_entry",
    )
    assert bad.message == 'import:cursor: "command" must be a string, not a number'
    assert config.unavailable["file-secret"].source == "import:opencode"
    assert not set(config.unavailable) & set(config.servers)
    # a usable definition elsewhere (a later client, orbmcp's own file) is the one in effect
    write(home / ".codeium" / "windsurf" / "mcp_config.json", {"mcpServers": {"bad": {"command": "ok"}}})
    assert "bad" in load(project).servers and "bad" not in load(project).unavailable
    (home / ".codeium" / "windsurf" / "mcp_config.json").unlink()
    write(Path(os.environ["ORB_AGENT_DIR"]) / "mcp.json", {"mcpServers": {"bad": {"command": "mine"}}})
    assert "bad" not in load(project).unavailable


def test_an_oversized_file_is_not_read(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    place("cursor-mcp.json", home / ".cursor" / "mcp.json")
    monkeypatch.setattr(client_documents, "MAX_FILE_BYTES", 64)
    config = load(project)
    assert config.servers == {}
    assert "larger than" in config.warnings[0].message


def test_a_big_file_is_parsed_only_when_it_changed(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_documents, "CACHE_FROM_BYTES", 10)
    path = write(home / ".claude.json", {"history": ["x" * 100], "mcpServers": {"aaaa": {"command": "one"}}})
    assert set(load(project).servers) == {"aaaa"}
    cache = Path(os.environ["ORB_AGENT_DIR"]) / "cache" / client_documents.CACHE_FILE
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert "history" not in cache.read_text()  # only the servers are kept
    # Same size, same inode, same modification time: the cache answers without reading the file.
    info = path.stat()
    with open(path, "r+", encoding="utf-8") as f:
        f.write(path.read_text().replace("aaaa", "bbbb"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert set(load(project).servers) == {"aaaa"}
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
    assert set(load(project).servers) == {"bbbb"}
    path.unlink()
    assert load(project).servers == {}


def test_a_toml_file_is_parsed_only_when_it_changed(home: Path, project: Path) -> None:
    path = write(home / ".codex" / "config.toml", '[mcp_servers.aaaa]\ncommand = "one"\n')
    assert set(load(project).servers) == {"aaaa"}
    info = path.stat()
    path.write_text(path.read_text().replace("aaaa", "bbbb"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert set(load(project).servers) == {"aaaa"}  # answered from the cache, tomllib not needed
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
    assert set(load(project).servers) == {"bbbb"}
    # a TOML date cannot be cached (JSON has none): that file is parsed each time, others still cached
    path.write_text('[mcp_servers.cccc]\ncommand = "one"\nsince = 1979-05-27\n')
    assert set(load(project).servers) == {"cccc"}
    cache = Path(os.environ["ORB_AGENT_DIR"]) / "cache" / client_documents.CACHE_FILE
    assert "cccc" not in cache.read_text()
    assert set(load(project).servers) == {"cccc"}


def test_an_unusable_cache_is_ignored(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_documents, "CACHE_FROM_BYTES", 10)
    cache = write(Path(os.environ["ORB_AGENT_DIR"]) / "cache" / client_documents.CACHE_FILE, "not json")
    write(home / ".claude.json", {"mcpServers": {"a": {"command": "one"}}})
    assert set(load(project).servers) == {"a"}
    os.chmod(cache.parent, 0o500)  # the cache cannot be written: nothing else changes
    try:
        write(home / ".claude.json", {"mcpServers": {"b": {"command": "two"}}})
        assert set(load(project).servers) == {"b"}
    finally:
        os.chmod(cache.parent, 0o700)


def test_deeply_nested_json_is_a_warning(home: Path, project: Path) -> None:
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}")
    config = load(project)
    assert config.servers == {} and "import:cursor" in config.warnings[0].message


# ---- the imports setting, precedence, collisions ------------------------------------------------------


def _two_clients_with(home: Path, cursor: dict[str, Any], windsurf: dict[str, Any]) -> tuple[Path, Path]:
    c = write(home / ".cursor" / "mcp.json", {"mcpServers": cursor})
    w = write(home / ".codeium" / "windsurf" / "mcp_config.json", {"mcpServers": windsurf})
    return c, w


def test_the_imports_setting_chooses_and_orders_clients(home: Path, project: Path) -> None:
    agent = Path(os.environ["ORB_AGENT_DIR"])
    cursor, windsurf = _two_clients_with(
        home, {"same": {"command": "from-cursor"}}, {"same": {"command": "from-windsurf"}}
    )
    default = load(project)  # every client, in the catalog's order: cursor before windsurf
    assert default.servers["same"].command == "from-cursor"
    [collision] = default.warnings
    assert (collision.file, collision.server, collision.reason) == (str(windsurf), "same", "import_collision")
    assert str(cursor) in collision.message

    write(agent / "mcp.json", {"settings": {"imports": ["windsurf", "Cursor"]}})
    assert load(project).servers["same"].command == "from-windsurf"
    write(agent / "mcp.json", {"settings": {"imports": ["cursor"]}})
    assert load(project).servers["same"].source == "import:cursor"
    write(agent / "settings.json", {"imports": []})  # top level of settings.json; mcp.json wins
    assert load(project).servers["same"].source == "import:cursor"
    (agent / "mcp.json").unlink()
    assert load(project).servers == {}

    write(agent / "settings.json", {"imports": ["cursor", "nope", 3]})
    config = load(project)
    assert list(config.servers) == ["same"]
    assert sum("unknown client" in w.message for w in config.warnings) == 2


def test_identical_definitions_are_no_collision(home: Path, project: Path) -> None:
    _two_clients_with(
        home, {"same": {"command": "x", "args": ["1"]}}, {"same": {"command": "x", "args": ["1"]}}
    )
    assert load(project).warnings == ()


def test_own_files_win_over_imports_and_say_so_when_different(home: Path, project: Path) -> None:
    agent = Path(os.environ["ORB_AGENT_DIR"])
    write(
        home / ".cursor" / "mcp.json", {"mcpServers": {"a": {"command": "theirs"}, "b": {"command": "same"}}}
    )
    own = write(agent / "mcp.json", {"mcpServers": {"a": {"command": "mine"}, "b": {"command": "same"}}})
    config = load(project)
    assert (config.servers["a"].command, config.servers["a"].source) == ("mine", "global")
    [warning] = config.warnings
    assert (warning.file, warning.server, warning.reason) == (str(own), "a", "import_shadowed")


def test_a_global_partial_entry_switches_an_imported_server(home: Path, project: Path) -> None:
    agent = Path(os.environ["ORB_AGENT_DIR"])
    cursor = write(home / ".cursor" / "mcp.json", {"mcpServers": {"a": {"command": "theirs"}}})
    own = write(agent / "mcp.json", {"mcpServers": {"a": {"enabled": False}}})
    server = load(project).servers["a"]
    assert (server.enabled, server.source, server.file, server.override_file) == (
        False,
        "import:cursor",
        str(cursor),
        str(own),
    )


def test_a_project_cannot_choose_imports(home: Path, project: Path) -> None:
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    write(project / ".orb" / "mcp.json", {"settings": {"imports": []}, "mcpServers": {}})
    trust.approve(Path(os.environ["ORB_AGENT_DIR"]), project, trust.describe_project(project).digest)
    config = load(project)
    assert "a" in config.servers
    assert any(w.reason == "global_only_setting" for w in config.warnings)


def test_config_override_reads_no_imports(home: Path, project: Path, tmp_path: Path) -> None:
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    only = write(tmp_path / "ci.json", {"mcpServers": {}})
    overridden = load_config(config_file=only, project=project)
    assert overridden.servers == {} and overridden.import_candidates == ()
    # without it, every file a client may read is watched, existing or not
    candidates = load(project).import_candidates
    assert home / ".cursor" / "mcp.json" in candidates and project / ".vscode" / "mcp.json" in candidates


# ---- project files of other clients -------------------------------------------------------------------


def test_project_files_of_other_clients_wait_for_trust(home: Path, project: Path) -> None:
    agent = Path(os.environ["ORB_AGENT_DIR"])
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"tool": {"command": "user-level"}}})
    cursor = place("vscode-mcp.json", project / ".vscode" / "mcp.json")
    claude = place("mcp.json", project / ".mcp.json")
    write(project / ".cursor" / "mcp.json", {"mcpServers": {"tool": {"command": "from-the-repo"}}})

    untrusted = load(project, API_KEY="k")
    assert set(untrusted.servers) == {"tool"} and untrusted.servers["tool"].command == "user-level"
    assert not untrusted.project.loaded and untrusted.project.trust_state == "untrusted"
    assert untrusted.project.config_path == claude  # no .orb: the first imported file is shown
    assert set(untrusted.project.import_files) == {cursor, claude, project / ".cursor" / "mcp.json"}
    # what the repo's files would add is reported as waiting for trust, under its client's label;
    # "tool" is loaded (the user's own Cursor entry), so it is not unavailable
    waiting = untrusted.unavailable["api-server"]
    assert (waiting.kind, waiting.source, waiting.file) == ("untrusted", "import:claude-code", str(claude))
    assert untrusted.unavailable["fetch"].source == "import:vscode" and "tool" not in untrusted.unavailable
    # Never approved: read only for the names, other clients' project servers included.
    assert {"import:cursor/tool", "import:claude-code/api-server"} <= set(untrusted.project.pending)

    review = trust.describe_project(project)
    keys = {s.key for s in review.servers}
    assert {"import:claude-code/api-server", "import:vscode/fetch", "import:cursor/tool"} <= keys
    perplexity = next(s for s in review.servers if s.name == "Perplexity")
    assert perplexity.kind == "invalid" and "${input:" in perplexity.problems[0]
    api = next(s for s in review.servers if s.name == "api-server")
    assert (api.transport, api.header_names, api.variables) == (
        "sse",
        ("Authorization",),
        ("API_BASE_URL", "API_KEY"),
    )

    trust.approve(agent, project, review.digest)
    trusted = load(project, API_KEY="k")
    assert trusted.project.loaded
    assert trusted.servers["api-server"].url == "https://api.example.com/mcp"
    assert trusted.servers["fetch"].args[-1] == str(project)
    # the project's own-level file of Cursor wins over the user's (Cursor's precedence)
    assert trusted.servers["tool"].command == "from-the-repo"

    write(project / ".cursor" / "mcp.json", {"mcpServers": {"tool": {"command": "changed-in-a-pull"}}})
    changed = load(project, API_KEY="k")
    assert changed.project.trust_state == "changed"
    assert changed.project.pending == ("import:cursor/tool",)
    assert changed.servers["tool"].command == "user-level"  # the unapproved one stays invisible
    assert "tool" not in changed.unavailable  # the user's own entry of that name is in effect
    assert not set(changed.unavailable) & set(changed.servers)
    assert "api-server" in changed.servers  # the others keep working


def test_an_untrusted_project_file_is_never_expanded(home: Path, project: Path) -> None:
    from tests.config import RecordingEnv

    write(project / ".mcp.json", {"mcpServers": {"x": {"command": "run", "env": {"T": "${SECRET_TOKEN}"}}}})
    env = RecordingEnv({"HOME": str(home), "SECRET_TOKEN": "s"})
    config = load_config(project=project, cwd=project, environ=env)
    assert config.servers == {} and "SECRET_TOKEN" not in env.read


def test_a_trust_record_without_imports_leaves_them_pending(home: Path, project: Path) -> None:
    agent = Path(os.environ["ORB_AGENT_DIR"])
    write(project / ".orb" / "mcp.json", {"mcpServers": {"own": {"command": "own"}}})
    write(project / ".cursor" / "mcp.json", {"mcpServers": {"theirs": {"command": "theirs"}}})
    review = trust.describe_project(project)
    trust.approve(agent, project, review.digest)
    store = agent / "trusted-projects.json"
    data = json.loads(store.read_text())
    record = data["projects"][trust.real_project_dir(project)]
    assert record["imports"] == {"cursor": {"theirs": review.servers[1].digest}}
    del record["imports"]  # as an older orbmcp wrote it
    store.write_text(json.dumps(data))
    config = load(project)
    assert set(config.servers) == {"own"} and config.project.pending == ("import:cursor/theirs",)


def test_trust_shows_imported_servers(home: Path, project: Path) -> None:
    from tests.cli import run_cli

    write(
        project / ".cursor" / "mcp.json", {"mcpServers": {"theirs": {"command": "run-it", "args": ["--now"]}}}
    )
    shown = run_cli("trust", "--yes", "--project", str(project))
    assert shown.code == 0, shown.stderr
    assert (
        f"- theirs (new or changed)  [server; import:cursor; {project / '.cursor' / 'mcp.json'}]"
        in shown.stdout
    )
    assert "command: run-it --now" in shown.stdout
    data = run_cli("trust", "--json", "--yes", "--project", str(project)).json()
    assert data["review"]["servers"][0]["source"] == "import:cursor"


# ---- where the files are ------------------------------------------------------------------------------


def test_every_client_has_files_and_a_name() -> None:
    assert parse_client(" Claude-Code ") == "claude-code" and parse_client("nope") is None
    for client in CLIENTS:
        assert client_files(client, Path("/p"), environ={"HOME": "/h"})


@pytest.mark.parametrize(
    ("platform", "environ", "desktop", "vscode"),
    [
        (
            "darwin",
            {"HOME": "/Users/u"},
            "/Users/u/Library/Application Support/Claude/claude_desktop_config.json",
            "/Users/u/Library/Application Support/Code/User/mcp.json",
        ),
        (
            "win32",
            {"HOME": "C:/Users/u", "APPDATA": "C:/Users/u/AppData/Roaming"},
            "C:/Users/u/AppData/Roaming/Claude/claude_desktop_config.json",
            "C:/Users/u/AppData/Roaming/Code/User/mcp.json",
        ),
        (
            "win32",
            {"HOME": "C:/Users/u"},
            "C:/Users/u/AppData/Roaming/Claude/claude_desktop_config.json",
            "C:/Users/u/AppData/Roaming/Code/User/mcp.json",
        ),
        (
            "linux",
            {"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg"},
            "/cfg/Claude/claude_desktop_config.json",
            "/cfg/Code/User/mcp.json",
        ),
    ],
)
def test_desktop_apps_keep_their_files_per_os(
    platform: str, environ: dict[str, str], desktop: str, vscode: str
) -> None:
    [claude] = client_files("claude-desktop", Path("/p"), environ=environ, platform=platform)
    code = client_files("vscode", Path("/p"), environ=environ, platform=platform)
    assert claude.path == Path(desktop)
    assert code[1].path == Path(vscode)
    assert code[0].scope == "project" and code[0].path == Path("/p/.vscode/mcp.json")


def test_run_from_home_the_users_own_files_are_not_project_files(home: Path) -> None:
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"mine": {"command": "x"}}})
    config = load(home)
    assert config.servers["mine"].source == "import:cursor"
    assert config.project.files == () and config.warnings == ()
    scopes = [f.scope for f in client_files("cursor", home, environ={"HOME": str(home)})]
    assert scopes == ["user"]


def test_a_project_symlink_to_the_users_file_stays_a_project_file(home: Path, project: Path) -> None:
    user = write(home / ".cursor" / "mcp.json", {"mcpServers": {"mine": {"command": "x"}}})
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").symlink_to(user)
    config = load(project)
    assert config.project.files == (project / ".cursor" / "mcp.json",) and not config.project.loaded


def test_home_relative_client_dirs(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": "~/pi", "CODEX_HOME": "~"}
    pi = client_files("pi", Path("/p"), environ=environ)[-1].path
    codex = client_files("codex", Path("/p"), environ=environ)[0].path
    assert (pi, codex) == (tmp_path / "pi" / "mcp.json", tmp_path / "config.toml")


def test_config_show_and_paths_name_the_import(home: Path, project: Path) -> None:
    from tests.cli import run_cli

    cursor = write(
        home / ".cursor" / "mcp.json", {"mcpServers": {"theirs": {"command": "x", "enabled": False}}}
    )
    shown = run_cli("config", "show", "--project", str(project))
    assert f"theirs  (stdio, lazy, disabled; import:cursor ({cursor}))" in shown.stdout
    detail = run_cli("status", "theirs", "--project", str(project))
    assert f"Source: import:cursor ({cursor})" in detail.stdout
    paths = run_cli("config", "paths", "--json", "--project", str(project)).json()
    entry = next(i for i in paths["imports"] if i["path"] == str(cursor))
    assert entry == {"client": "cursor", "path": str(cursor), "scope": "user", "exists": True}
    text = run_cli("config", "paths", "--project", str(project)).stdout
    assert f"* cursor         user    {cursor}" in text
    shutil.rmtree(home / ".cursor")
