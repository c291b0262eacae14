"""``orbmcp add NAME --json '...'``: keep a server tried ad hoc, from a server README's snippet."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli import run_cli

SNIPPET = {
    "mcpServers": {
        "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
        "docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
    }
}


def _servers() -> dict[str, object]:
    path = Path(os.environ["ORB_AGENT_DIR"]) / "mcp.json"
    servers: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]
    return servers


def test_one_entry_is_added_under_its_name() -> None:
    entry = {"command": "uvx", "args": ["mcp-server-time"]}
    done = run_cli("add", "time", "--json", json.dumps(entry))
    assert done.code == 0, done.stderr
    assert "Added 'time'" in done.stdout
    assert _servers() == {"time": entry}


def test_a_readme_snippet_adds_the_one_named_or_all() -> None:
    named = run_cli("add", "docs", "--json", json.dumps(SNIPPET), "--lazy")
    assert named.code == 0, named.stderr
    assert _servers() == {"docs": {**SNIPPET["mcpServers"]["docs"], "lifecycle": "lazy"}}
    every = run_cli("add", "--json", json.dumps(SNIPPET), "--overwrite", "--json")  # then --json: output
    assert every.code == 0, every.stderr
    assert [e["server"] for e in json.loads(every.stdout)] == ["everything", "docs"]
    assert set(_servers()) == {"everything", "docs"}


def test_a_snippet_without_its_outer_braces_and_with_a_trailing_comma() -> None:
    text = (
        '"mcpServers": {"ev": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},}'
    )
    done = run_cli("add", "everything", "--json", text)
    assert done.code == 0, done.stderr
    assert set(_servers()) == {"everything"}


def test_bad_snippets_are_named_and_nothing_is_written() -> None:
    cases = [
        (("add", "x", "--json", "{nope"), "--json"),
        (("add", "x", "--json", "[1]"), "must be a JSON object"),
        (("add", "x", "--json", json.dumps(SNIPPET)), "holds 2 servers, none named 'x': everything, docs"),
        (("add", "--json", '{"command": "x"}'), "needs the server's name"),
        (("add", "x", "--json", '{"mcpServers": {}}'), "names no server"),
        (
            ("add", "x", "--json", '{"mcpServers": {"a": {"command": "a"}, "b": 3}}'),
            "not a server entry: 'b'",
        ),
        (("add", "x", "--json", '{"url": 5}'), '"url" must be a string'),
        (("add", "x", "--entry", '{"command": "x"}', "--", "cmd"), "--json is the whole entry"),
        (("add",), "give the server's name"),
        (("add", "--json", '{"mcpServers": {"a": {"command": "a"}, "b": {"url": 5}}}'), "server 'b'"),
    ]
    for args, message in cases:
        done = run_cli(*args)
        assert done.code == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
    assert not (Path(os.environ["ORB_AGENT_DIR"]) / "mcp.json").exists()
