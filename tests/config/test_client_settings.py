"""``roots`` and ``sampling`` in the configuration: checked, expanded like ``cwd``, trusted like
the rest of a project's files, and sampling only from the user's own files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers.config import show
from orbmcp.config import registry
from orbmcp.config.model import SamplingConfig
from orbmcp.render.plain import render_plain
from tests.config import Layout
from tests.ui import SilentUI


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[Layout]:
    yield Layout(tmp_path, environ={"HOME": str(tmp_path / "home"), "WORK": "/srv/work"})
    for name in list(registry.registered_servers()):
        registry.unregister_server(name)


def test_roots_and_sampling_in_the_users_settings(layout: Layout) -> None:
    layout.global_file(
        "mcp.json",
        {
            "settings": {
                "roots": ["~/code", "${WORK}/a", "rel", "${NOPE}/x"],
                "sampling": {"command": ["llm", "--json"], "timeoutMs": 5000},
            },
            "mcpServers": {"a": {"command": "a", "roots": ["${WORK}", "~"]}, "b": {"command": "b"}},
        },
    )
    config = layout.load()
    home = layout.root / "home"
    assert config.settings.roots == (str(home / "code"), "/srv/work/a", str(layout.project / "rel"))
    assert any("settings.roots[3]" in str(w) and "NOPE" in str(w) for w in config.warnings)
    assert config.settings.sampling == SamplingConfig(("llm", "--json"), 5000)
    assert config.servers["a"].roots == ("/srv/work", str(home))
    assert config.servers["b"].roots is None
    ctx = CommandContext(ui=SilentUI())
    ctx.set_config(config)
    view = show(ctx)
    assert view.to_json()["settings"]["sampling"] == {"command": ["llm", "--json"], "timeoutMs": 5000}
    assert view.to_json()["servers"][0]["roots"] == ["/srv/work", str(home)]
    text = render_plain(view)
    assert "  roots: /srv/work, " in text and "sampling command: llm --json" in text


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"roots": "not a list"}, "settings.roots"),
        ({"roots": ["ok", ""]}, "settings.roots"),
        ({"sampling": {"command": []}}, "settings.sampling"),
        ({"sampling": {"command": ["x"], "timeoutMs": -1}}, "settings.sampling"),
        ({"sampling": "llm"}, "settings.sampling"),
    ],
)
def test_bad_values_are_ignored_with_a_warning(layout: Layout, settings: dict[str, object], key: str) -> None:
    layout.global_file("mcp.json", {"settings": settings})
    config = layout.load()
    assert (config.settings.roots, config.settings.sampling) == (None, None)
    assert any(key in str(w) for w in config.warnings)


def test_a_bad_server_roots_skips_the_entry(layout: Layout) -> None:
    layout.global_file("mcp.json", {"mcpServers": {"a": {"command": "a", "roots": [1]}}})
    config = layout.load()
    assert "a" not in config.servers and any('"roots" must be an array' in str(w) for w in config.warnings)


def test_a_project_states_roots_once_trusted_but_never_the_sampling_command(layout: Layout) -> None:
    layout.global_file("mcp.json", {"mcpServers": {"g": {"command": "g"}}})
    layout.project_file(
        "mcp.json",
        {
            "settings": {"roots": ["src"], "sampling": {"command": ["evil"]}},
            "mcpServers": {"p": {"command": "p"}},
        },
    )
    untrusted = layout.load()
    assert untrusted.settings.roots is None  # not trusted: not read
    layout.approve()
    trusted = layout.load()
    assert trusted.settings.roots == (str(layout.project / "src"),)
    assert trusted.settings.sampling is None
    assert any('"sampling" is a global setting' in str(w) for w in trusted.warnings)
