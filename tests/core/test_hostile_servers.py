"""What a hostile stdio server (tests/servers/hostile.py) can no longer do: hide or spoof tool names,
take a whole server down with one invalid tool, or flood the client with notifications."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from orbmcp.core.tooling.calls import call_tool
from orbmcp.core.wire import flood
from tests.cli import run_cli
from tests.core.live import managed, stdio_entry, write_config
from tests.servers.hostile import ESCAPE_NAME, INVISIBLE_NAME
from tests.timeouts import LONG_GUARD_S


def hostile_entry(*args: str, **extra: object) -> dict[str, object]:
    return stdio_entry("hostile", "--answer-discover-error", "-32601", *args, **extra)


def test_a_tool_with_an_invalid_schema_is_skipped_and_the_rest_stay_usable(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"h": hostile_entry("--invalid-tool")})
    listing = run_cli("--config", str(config), "tools", "h", "--json")
    assert listing.code == 0, listing.stderr
    assert [t["name"] for t in listing.json()] == ["echo", "never"]
    status = run_cli("--config", str(config), "status", "h", "--json").json()
    assert status["state"] == "ready"
    assert any("tool 'broken' skipped: invalid inputSchema" in line for line in status["recentOutput"])
    called = run_cli("--config", str(config), "call", "h", "echo", "text=still here")
    assert called.code == 0 and "still here" in called.stdout


def test_names_with_control_and_invisible_characters_are_shown_escaped_and_callable(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"h": hostile_entry("--odd-names")})
    listing = run_cli("--config", str(config), "tools", "h")
    assert listing.code == 0, listing.stderr
    assert "bad\\x1b[31mname()" in listing.stdout and "ad\\u200bmin()" in listing.stdout
    assert "\x1b" not in listing.stdout and "\u200b" not in listing.stdout
    # The raw names stay data in JSON (escaped by JSON itself).
    names = [t["name"] for t in run_cli("--config", str(config), "tools", "h", "--json").json()]
    assert ESCAPE_NAME in names and INVISIBLE_NAME in names
    for shown, raw in (("bad\\x1b[31mname", ESCAPE_NAME), ("ad\\u200bmin", INVISIBLE_NAME)):
        called = run_cli("--config", str(config), "call", "h", shown, "--json")
        assert called.code == 0, called.stderr
        assert called.json()["content"][0]["text"] == raw  # the server echoes the name it was called by
    # What looks the same is not the same: "admin" is not "ad\u200bmin", and the hint spells it.
    wrong = run_cli("--config", str(config), "call", "h", "admin")
    assert wrong.code == 2 and "ad\\u200bmin" in wrong.stderr


@pytest.mark.parametrize(
    ("flag", "method"),
    [("--flood-progress", "notifications/progress"), ("--flood-log", "notifications/message")],
)
async def test_a_notification_flood_is_thinned_and_the_call_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, method: str
) -> None:
    # No refill: exactly the burst gets through, whatever the machine's speed.
    monkeypatch.setitem(flood.LIMITS, method, (0.0, 50))
    flooded = 100_000
    config = write_config(tmp_path / "mcp.json", {"h": hostile_entry(flag, str(flooded))})
    updates: list[float] = []
    async with managed(config) as manager:
        with anyio.fail_after(LONG_GUARD_S):
            sup = await manager.ready("h")
            result = await call_tool(
                sup, "echo", {"text": "done"}, progress=lambda v, t, m: updates.append(v)
            )
    assert result.text() == "done"
    assert len(updates) <= 50
    if method == "notifications/progress":
        assert len(updates) == 50  # the burst, then nothing: not 100,000 callbacks
    assert any(f"more than 0 {method} per second" in w for w in sup.snap.warnings)


def test_injected_escapes_reach_no_output(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"h": hostile_entry("--inject", "--odd-names")})
    for argv in (("tools", "h"), ("tools", "h", "--schema"), ("status", "h")):
        result = run_cli("--config", str(config), *argv)
        assert result.code == 0, result.stderr
        out = result.stdout + result.stderr
        assert not any(c in out for c in ("\x1b", "\x07", "\u202e", "\u200b", "\U000e0041")), repr(out)
    listing = run_cli("--config", str(config), "tools", "h").stdout
    assert "cleared" in listing and "hidden" in listing  # the text stays, its tricks do not
