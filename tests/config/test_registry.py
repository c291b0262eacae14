"""The programmatic API for Python extensions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import orbmcp
from orbmcp.config import registry
from orbmcp.errors import ConfigError


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    yield
    for name in list(registry.registered_servers()):
        registry.unregister_server(name)


def test_register_list_unregister() -> None:
    entry: dict[str, object] = {"command": "srv", "args": ["--stdio"]}
    registry.register_server("one", entry, owner="my-plugin")
    entry["args"] = ["--mutated"]  # the registry keeps its own copy
    registered = registry.registered_servers()
    assert list(registered) == ["one"]
    assert registered["one"].owner == "my-plugin"
    assert registered["one"].entry["args"] == ["--stdio"]
    assert registry.unregister_server("one") is True
    assert registry.unregister_server("one") is False
    assert registry.registered_servers() == {}


def test_register_replaces_by_name() -> None:
    registry.register_server("one", {"command": "a"})
    registry.register_server("one", {"url": "https://h.test/mcp"})
    assert registry.registered_servers()["one"].entry == {"url": "https://h.test/mcp"}


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"command": "a", "url": "https://h.test"}, "choose one transport"),
        ({"enabled": False}, "no transport"),
        ({"url": "https://h.test", "auth": {"provider": "p"}}, "auth.provider"),
        ({"command": "a", "env": {"PORT": 1}}, "env.PORT"),
    ],
)
def test_invalid_entries_raise_naming_server_and_owner(entry: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        registry.register_server("bad", entry, owner="my-plugin")
    assert key in str(caught.value) and "'bad'" in str(caught.value) and "my-plugin" in str(caught.value)
    assert (caught.value.server, caught.value.reason) == ("bad", "invalid_entry")
    assert "bad" not in registry.registered_servers()


def test_public_lazy_alias() -> None:
    assert orbmcp.register_server is registry.register_server


def test_listeners_hear_each_change_once_and_may_read_the_registry() -> None:
    seen: list[list[str]] = []
    remove = registry.add_listener(lambda: seen.append(sorted(registry.registered_servers())))
    try:
        registry.register_server("one", {"command": "a"})
        registry.register_server("one", {"command": "a"})  # the same entry again: no change
        registry.register_server("one", {"command": "b"})
        registry.register_server("one", {"command": "b"}, owner="other")  # a new owner is a change
        assert registry.unregister_server("one") is True
        assert registry.unregister_server("one") is False  # nothing removed: no change
    finally:
        remove()
    remove()  # removing twice is harmless
    registry.register_server("two", {"command": "a"})
    assert seen == [["one"], ["one"], ["one"], []]


def test_a_failing_listener_does_not_reach_the_registering_code() -> None:
    heard: list[str] = []

    def broken() -> None:
        raise RuntimeError("listener bug")

    removers = [registry.add_listener(broken), registry.add_listener(lambda: heard.append("second"))]
    try:
        registry.register_server("one", {"command": "a"})
    finally:
        for remove in removers:
            remove()
    assert heard == ["second"] and "one" in registry.registered_servers()
