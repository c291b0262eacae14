"""Output fit for an agent's context: text output says each thing once, and never carries base64.

The real server-filesystem wraps a file's text in ``structuredContent`` (``{"content": <the
text>}``); text output shows the file once, JSON output keeps both."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orbmcp.commands.results.call import CallOutcome, structured_is_redundant
from orbmcp.core.tooling.results import ImageBlock, ResourceBlobBlock, TextBlock, ToolResult
from orbmcp.render.plain import render_plain
from tests.frontends import env_for, write_config
from tests.servers.npm import SERVER_FILESYSTEM, npm_server


def test_a_file_read_through_server_filesystem_prints_once(tmp_path: Path) -> None:
    server, why = npm_server(SERVER_FILESYSTEM, str(tmp_path))
    if server is None:
        pytest.skip(why)
    text = "".join(f"line {i} of a file an agent reads\n" for i in range(6000))  # ~200 KB
    (tmp_path / "big.txt").write_text(text)
    config = write_config(tmp_path, {"fs": server.entry()})

    def call(*extra: str) -> str:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "orbmcp",
                "call",
                "fs",
                "read_text_file",
                f"path={tmp_path / 'big.txt'}",
                *extra,
            ],
            capture_output=True,
            text=True,
            env=env_for(config),
            cwd=tmp_path,  # the project, and so the root the server may read
            timeout=60,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout

    plain = call()
    assert plain.rstrip("\n") == text.rstrip("\n")  # once, not followed by its JSON wrapper
    whole = json.loads(call("--json"))
    assert whole["structuredContent"] == {"content": text} and whole["content"][0]["text"] == text


def test_structured_content_whose_every_value_the_text_says_is_not_repeated() -> None:
    wrapper = ToolResult([TextBlock("the text\nof a file")], structured={"content": "the text\nof a file"})
    fields = ToolResult(
        [TextBlock("Paris: 21 degrees, sunny=true")], structured={"city": "Paris", "t": 21, "sunny": True}
    )
    more = ToolResult([TextBlock("Paris: 21 degrees")], structured={"city": "Paris", "t": 21, "wind": "NW"})
    assert structured_is_redundant(wrapper) and structured_is_redundant(fields)
    assert not structured_is_redundant(more)  # "NW" is said nowhere else: shown
    assert "structured content" not in render_plain(CallOutcome("s", "t", wrapper))
    assert '"wind": "NW"' in render_plain(CallOutcome("s", "t", more))
    deep: object = "x"
    for _ in range(100):
        deep = [deep]
    assert not structured_is_redundant(ToolResult([TextBlock("x")], structured={"d": deep}))
    many = ToolResult([TextBlock("1")], structured={"n": [1] * 20_000})
    assert not structured_is_redundant(many)  # too many values to compare: shown


def test_base64_never_reaches_text_output() -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
    result = ToolResult([ImageBlock(png, "image/png"), ResourceBlobBlock("mem://b", png, "application/zip")])
    shown = render_plain(CallOutcome("s", "t", result))
    assert png not in shown
    assert shown.splitlines() == [
        "[image image/png, 69 B] (--save-images DIR saves it)",
        "[resource mem://b application/zip, 69 B]",
    ]
