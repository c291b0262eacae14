"""The ``toolNaming`` setting: seed 000's hashed names by default, or seed 003's
``<prefix>_<server>_<tool>`` (``"pi"``) so pi users keep their tool names."""

from __future__ import annotations

from pathlib import Path

import anyio

from orbmcp.config.loader import load_config
from orbmcp.core.tooling.naming import MAX_NAME_LENGTH, bridged_name, name_hash, pi_name
from orbmcp.host import McpExtension
from tests.core.live import raw_entry, write_config
from tests.host.example_host import ExampleHost


def test_pi_names_are_plain_until_cut_or_taken() -> None:
    assert pi_name("mcp", "github", "search_code") == "mcp_github_search_code"
    assert pi_name("mcp", "my-srv", "do.it") == "mcp_my_srv_do_it"  # [A-Za-z0-9_] only
    assert pi_name("", "s", "t") == "s_t"
    taken = pi_name("mcp", "my-srv", "do.it", hashed=True)
    assert taken == f"mcp_my_srv_do_it_{name_hash('my-srv', 'do.it')}"
    long = pi_name("mcp", "s" * 40, "t" * 40)
    assert len(long) == MAX_NAME_LENGTH and long.endswith("_" + name_hash("s" * 40, "t" * 40))


def test_the_setting_is_read_and_a_bad_value_is_a_warning(tmp_path: Path) -> None:
    path = write_config(tmp_path / "mcp.json", {}, settings={"toolNaming": "pi", "toolPrefix": "pi"})
    settings = load_config(config_file=path).settings
    assert (settings.tool_naming, settings.tool_prefix) == ("pi", "pi")
    assert load_config(config_file=write_config(tmp_path / "plain.json", {})).settings.tool_naming == "hashed"
    bad = load_config(config_file=write_config(tmp_path / "bad.json", {}, settings={"toolNaming": "short"}))
    assert bad.settings.tool_naming == "hashed"
    assert any('"settings.toolNaming" must be "hashed" or "pi"' in str(w) for w in bad.warnings)


async def test_a_host_gets_pi_names_and_colliding_names_stay_apart(tmp_path: Path) -> None:
    servers = {"a-b": raw_entry(timeoutMs=30000), "a_b": raw_entry(timeoutMs=30000)}
    for naming in ("pi", "hashed"):
        config = write_config(
            tmp_path / f"{naming}.json", servers, settings={"toolNaming": naming, "toolPrefix": "pi"}
        )
        host = ExampleHost()
        with anyio.fail_after(60):  # beyond the servers' 30 s timeoutMs
            async with McpExtension(host, config_file=config, retries=False) as ext:
                echoes = {t.server: t.name for t in ext.tools if t.tool_name == "echo"}
                assert set(echoes.values()) <= host.active
                if naming == "hashed":
                    assert echoes == {s: bridged_name("pi", s, "echo") for s in servers}
                else:
                    # Both sanitise to pi_a_b_echo: the server listed first keeps it, the other's
                    # name carries the hash of its raw names.
                    first, second = sorted(echoes, key=lambda s: len(echoes[s]))
                    assert echoes[first] == "pi_a_b_echo"
                    assert echoes[second] == f"pi_a_b_echo_{name_hash(second, 'echo')}"
                for name in echoes.values():
                    tool = ext.tool(name)
                    assert tool is not None and (await tool.call({"text": "hi"})).text() == "hi"
