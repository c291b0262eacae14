"""The debug log's ``server.state`` events, as seed 003's example shows them: ``from``, ``to`` and
``ms``, the time the server spent in the state it leaves (for the first event: since the
supervisor was made)."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.core.live import enable_debug_log, logged, managed, raw_entry, write_config


async def test_state_events_carry_the_time_in_the_previous_state(tmp_path: Path) -> None:
    log_file = enable_debug_log(tmp_path)
    config = write_config(tmp_path / "mcp.json", {"r": raw_entry(lifecycle="lazy")})
    with anyio.fail_after(30):
        async with managed(config) as manager:
            await manager.ready("r")
            await manager.stop("r")
    events = logged(log_file, "server.state", "r")
    assert [(e["from"], e["to"]) for e in events] == [
        ("stopped", "starting"),
        ("starting", "ready"),
        ("ready", "stopped"),
    ]
    for event in events:
        assert isinstance(event["ms"], int) and event["ms"] >= 0, event
    assert events[1]["message"] == "Server r state starting -> ready"
