"""The server names completion reads without the loader: recorded by each load, used only while
every file and variable they depend on is unchanged, private on disk, never a variable's value."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from orbmcp.config import names_cache
from tests.cli import run_cli
from tests.config import Layout, write
from tests.frontends import env_for


def _names(layout: Layout, environ: dict[str, str] | None = None) -> list[str] | None:
    env = {"ORB_AGENT_DIR": str(layout.global_dir), **(environ or {})}
    found = names_cache.lookup(layout.project, None, environ=env)
    return None if found is None else sorted(found.servers)


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    monkeypatch.chdir(tmp_path)
    return Layout(tmp_path)


def test_a_load_records_the_names_and_a_changed_file_makes_the_record_stale(layout: Layout) -> None:
    path = layout.global_file("mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    assert _names(layout) is None  # nothing loaded yet
    layout.load()
    assert _names(layout) == ["a"]
    cache = names_cache.cache_path(layout.global_dir)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    write(path, {"mcpServers": {"a": {"command": "x"}, "bb": {"command": "y"}}})
    assert _names(layout) is None
    layout.load()
    assert _names(layout) == ["a", "bb"]
    # a file that did not exist (the project's) appearing makes it stale too
    layout.project_file("mcp.json", {"mcpServers": {"p": {"command": "z"}}})
    assert _names(layout) is None


def test_a_variable_the_load_read_is_kept_as_a_keyed_digest_only(layout: Layout) -> None:
    layout.global_file(
        "mcp.json",
        {"mcpServers": {"gh": {"url": "https://h.test/mcp", "headers": {"A": "Bearer ${GH_TOKEN}"}}}},
    )
    layout.environ["GH_TOKEN"] = "sekrit-value-123"
    layout.load()
    assert _names(layout, {"GH_TOKEN": "sekrit-value-123"}) == ["gh"]
    assert _names(layout, {"GH_TOKEN": "other"}) is None  # the entry may now differ
    assert _names(layout, {}) is None  # unset: the entry would be skipped
    text = names_cache.cache_path(layout.global_dir).read_text()
    assert "sekrit-value-123" not in text and "GH_TOKEN" in text


def test_a_damaged_or_hostile_cache_is_no_record(layout: Layout) -> None:
    layout.global_file("mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    cache = names_cache.cache_path(layout.global_dir)
    for junk in ("not json", "[1]", json.dumps({"version": 1, "salt": "zz", "records": {"x": 1}})):
        write(cache, junk)
        os.chmod(cache, 0o600)
        assert _names(layout) is None
    layout.load()  # rewritten whole
    assert _names(layout) == ["a"]
    write(cache, "x" * (names_cache.MAX_BYTES + 1))
    assert _names(layout) is None


def test_extension_servers_and_host_trust_loads_are_not_recorded(layout: Layout) -> None:
    layout.global_file("mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    layout.load(host_trust=True)
    assert _names(layout) is None


def test_completion_follows_a_config_edit_without_loading_pydantic(tmp_path: Path) -> None:
    config = write(tmp_path / "mcp.json", {"mcpServers": {"one": {"command": "x"}}})
    env = env_for(config)
    r = run_cli("complete", "/mcp:start ", env=env)
    assert (r.code, r.stdout.split()) == (0, ["one"])
    write(config, {"mcpServers": {"one": {"command": "x"}, "two": {"command": "y"}}})
    r = run_cli("complete", "/mcp:start ", env=env)
    assert (r.code, r.stdout.split()) == (0, ["one", "two"])


def test_completion_without_a_global_dir_creates_it_private_for_the_record(tmp_path: Path) -> None:
    config = write(tmp_path / "mcp.json", {"mcpServers": {"one": {"command": "x"}}})
    agent = tmp_path / "no-agent-dir"
    env = env_for(config, ORB_AGENT_DIR=str(agent))
    r = run_cli("complete", "/mcp:start ", env=env)
    assert (r.code, r.stdout.split()) == (0, ["one"])
    assert stat.S_IMODE(agent.stat().st_mode) == 0o700
    # the next Tab finds the record (no child process needed)
    found = names_cache.lookup(None, config, environ=env)
    assert found is not None and list(found.servers) == ["one"]
