"""A running agent session that changes: servers registered, replaced and removed after start-up
(followed without a restart), and a fresh host tool table filled without reconnecting.

Real servers (raw.py): ``--record`` counts the ``initialize`` requests each one received, and the
liveness server tells when a process has died."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from orbmcp.config import registry
from orbmcp.core.session.state import State
from orbmcp.errors import UsageError
from orbmcp.host import CONNECT_TOOL, STATUS_TOOL, McpExtension
from tests.core.live import raw_entry, wait_until, write_config
from tests.host import handed
from tests.host.example_host import ExampleHost
from tests.servers.launch import LivenessServer
from tests.timeouts import HANG_GUARD_S, LONG_GUARD_S, scaled


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    yield
    for name in list(registry.registered_servers()):
        registry.unregister_server(name)


def initializes(record: Path) -> int:
    """How many ``initialize`` requests the server(s) writing ``record`` received."""
    if not record.exists():
        return 0
    messages = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    return sum(1 for m in messages if isinstance(m, dict) and m.get("method") == "initialize")


def active_tools(host: ExampleHost, server: str) -> set[str | None]:
    return {t.tool_name for name, t in host.tools.items() if t.server == server and name in host.active}


def rows(ext: McpExtension) -> dict[str, str]:
    return {row["name"]: row["state"] for row in ext.status_rows()}


async def test_servers_registered_after_start_are_added_restarted_and_removed(tmp_path: Path) -> None:
    filed_rec, first_rec, second_rec = (tmp_path / f"{n}.jsonl" for n in ("filed", "first", "second"))
    config = write_config(tmp_path / "mcp.json", {"filed": raw_entry("--record", str(filed_rec))})
    host = ExampleHost()
    async with LivenessServer() as live:
        with anyio.fail_after(LONG_GUARD_S):
            async with McpExtension(host, config_file=config, retries=False) as ext:
                assert active_tools(host, "filed") == {"echo", "never"}

                # Added: an eager server connects and its tools reach the host.
                registry.register_server(
                    "reg", raw_entry("--record", str(first_rec), "--liveness", live.address), owner="plugin"
                )
                await wait_until(lambda: active_tools(host, "reg") == {"echo", "never"})
                assert ext.config is not None and ext.config.servers["reg"].source == "extension"
                assert rows(ext)["reg"] == "ready"
                connect = ext.tool(CONNECT_TOOL)
                assert connect is not None and "reg" in connect.input_schema["properties"]["server"]["enum"]
                old_echo = next(t for t in ext.tools if t.server == "reg" and t.tool_name == "echo")
                (first,) = await live.wait_registered(1, timeout=15)

                # A lazy one is added without connecting; a name the files define stays theirs.
                registry.register_server("lazyreg", raw_entry(lifecycle="lazy"))
                registry.register_server("filed", raw_entry("--tools", "1"))
                # Changed: the old process stops, the new entry connects.
                registry.register_server(
                    "reg",
                    raw_entry("--tools", "3", "--record", str(second_rec), "--liveness", live.address),
                    owner="plugin",
                )
                await wait_until(lambda: active_tools(host, "reg") == {"t0000", "t0001", "t0002"})
                await wait_until(lambda: not first.alive)
                assert old_echo.name not in host.active
                assert initializes(first_rec) == 1 and initializes(second_rec) == 1
                assert rows(ext) == {"filed": "ready", "reg": "ready", "lazyreg": "stopped"}
                assert ext.config.servers["filed"].source == "config"
                assert initializes(filed_rec) == 1 and active_tools(host, "filed") == {"echo", "never"}

                # Removed: stopped, its tools deactivated, gone from the status and the schema.
                registry.unregister_server("reg")
                await wait_until(lambda: ext.config is not None and "reg" not in ext.config.servers)
                await live.wait_all_dead(timeout=15)
                assert active_tools(host, "reg") == set() and "reg" not in rows(ext)
                assert "reg" not in connect.input_schema["properties"]["server"]["enum"]
                with pytest.raises(UsageError, match="no longer offers"):
                    await old_echo.call({"text": "late"})
                assert initializes(filed_rec) == 1  # untouched throughout
    assert len(host.registrations) == len(set(host.registrations))
    assert host.active == set()


async def test_an_idle_extension_wakes_for_a_server_registered_from_another_thread(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {})
    host = ExampleHost()
    with anyio.fail_after(HANG_GUARD_S):
        async with McpExtension(host, config_file=config, retries=False) as ext:
            assert not ext.active and host.registrations == []
            register = functools.partial(registry.register_server, "late", raw_entry())
            await anyio.to_thread.run_sync(register)
            await wait_until(lambda: active_tools(host, "late") == {"echo", "never"})
            assert ext.active and STATUS_TOOL in host.active
            assert ext._manager is not None and ext._manager.get("late").state == State.READY
    assert host.active == set()


async def test_a_given_config_is_not_replaced_by_registry_changes(tmp_path: Path) -> None:
    from orbmcp.config.loader import load_config

    path = write_config(tmp_path / "mcp.json", {"lz": raw_entry(lifecycle="lazy")})
    listeners_before = len(registry._listeners)
    async with handed(McpExtension(ExampleHost(), retries=False), load_config(config_file=path)) as ext:
        assert ext.active and len(registry._listeners) == listeners_before  # nothing subscribed
    async with McpExtension(ExampleHost(), config_file=path, retries=False) as ext:
        assert len(registry._listeners) == listeners_before + 1
    assert len(registry._listeners) == listeners_before


async def test_a_fresh_host_table_gets_every_tool_without_reconnecting(tmp_path: Path) -> None:
    record, lazy_record = tmp_path / "r.jsonl", tmp_path / "lz.jsonl"
    config = write_config(
        tmp_path / "mcp.json",
        {
            "r": raw_entry("--record", str(record)),
            "lz": raw_entry("--record", str(lazy_record), lifecycle="lazy"),
        },
    )
    first = ExampleHost()
    with anyio.fail_after(scaled(40)):
        async with McpExtension(first, config_file=config, retries=False) as ext:
            assert not (await first.call(CONNECT_TOOL, {"server": "lz"})).is_error
            assert "stopped" in await ext.slash("/mcp:stop lz")  # registered, now inactive
            assert active_tools(first, "lz") == set() and len(first.registrations) == 6

            fresh = ExampleHost()
            ext.register_into(fresh)  # what re-running the agent's extension factory does
            assert ext.host is fresh
            assert fresh.registrations == first.registrations
            assert (
                fresh.active
                == first.active
                == {
                    STATUS_TOOL,
                    CONNECT_TOOL,
                    *(name for name, t in first.tools.items() if t.server == "r"),
                }
            )
            assert all(fresh.tools[name] is first.tools[name] for name in fresh.tools)
            echo = next(name for name, t in fresh.tools.items() if t.server == "r" and t.tool_name == "echo")
            assert (await fresh.call(echo, {"text": "again"})).text() == "again"
            assert initializes(record) == 1 and initializes(lazy_record) == 1  # no reconnect

            # From now on only the fresh table hears of changes.
            heard_before = list(first.activations)
            assert "stopped" in await ext.slash("/mcp:stop r")
            assert active_tools(fresh, "r") == set() and first.activations == heard_before
    assert fresh.active == set() and len(fresh.registrations) == len(set(fresh.registrations))
