"""The tool bridge against real servers: stdio (SDK and hand-written) and Streamable HTTP.

One Manager per module serves every test that leaves its servers healthy; the tests that kill a
server start their own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.config.loader import load_config
from orbmcp.core.session.manager import Manager
from orbmcp.core.session.state import State
from orbmcp.core.tooling.calls import NOT_RETRIED, call_tool
from orbmcp.core.tooling.results import (
    AudioBlock,
    ImageBlock,
    ResourceBlobBlock,
    ResourceLinkBlock,
    ResourceTextBlock,
    TextBlock,
)
from orbmcp.errors import ConnectionFailed, TimeoutFailed
from tests.core.live import wait_until
from tests.servers.everything import MARKER_ENV, tiny_png, tiny_wav
from tests.servers.launch import http_server, server_cmd
from tests.timeouts import HANG_GUARD_S, generous_servers

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Live:
    manager: Manager
    markers: dict[str, Path]
    record: Path  # every message raw.py received, one JSON object per line


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": generous_servers(servers)}), encoding="utf-8")
    return path


def stdio_entry(name: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    command, *argv = server_cmd(name, *args)
    return {"command": command, "args": argv, "env": env or {}}


@pytest.fixture(scope="module")
async def live(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Live]:
    home = tmp_path_factory.mktemp("bridge")
    markers = {"e": home / "markers-e", "h": home / "markers-h"}
    for d in markers.values():
        d.mkdir()
    record = home / "raw.jsonl"
    async with http_server(env={MARKER_ENV: str(markers["h"])}) as http:
        cfg = write_config(
            home / "mcp.json",
            {
                "e": stdio_entry("everything", env={MARKER_ENV: str(markers["e"])}),
                "h": {"url": http.url},
                "raw": stdio_entry("raw", "--answer-discover-error", "-32601", "--record", str(record)),
            },
        )
        config = load_config(config_file=cfg, global_dir=home / "agent")
        async with Manager(config, retries=False) as manager:
            with anyio.fail_after(HANG_GUARD_S):
                await manager.start_eager()
            for name in ("e", "h", "raw"):
                assert manager.get(name).state == State.READY, manager.get(name).snap.last_error
            yield Live(manager, markers, record)


BOTH = pytest.mark.parametrize("server", ["e", "h"])


def received(live: Live) -> list[dict[str, Any]]:
    return [json.loads(line) for line in live.record.read_text(encoding="utf-8").splitlines()]


@BOTH
async def test_every_content_kind_maps_to_its_block(live: Live, server: str) -> None:
    sup = live.manager.get(server)
    with anyio.fail_after(HANG_GUARD_S):
        mixed = await call_tool(sup, "mixed", {})
        image = await call_tool(sup, "image", {})
        audio = await call_tool(sup, "audio", {})
        structured = await call_tool(sup, "structured", {})
    text, img, link, embedded_text, embedded_blob = mixed.content
    assert text == TextBlock("mixed text")
    assert isinstance(img, ImageBlock) and img.mime_type == "image/png"
    assert isinstance(link, ResourceLinkBlock) and (link.uri, link.name) == ("mem://hello", "hello")
    assert embedded_text == ResourceTextBlock("mem://embedded.txt", "embedded text", "text/plain")
    assert isinstance(embedded_blob, ResourceBlobBlock) and embedded_blob.uri == "mem://embedded.bin"
    assert mixed.decoded_size(embedded_blob) == 3
    [png] = image.content
    assert isinstance(png, ImageBlock) and image.decoded_size(png) == len(tiny_png())
    [wav] = audio.content
    assert isinstance(wav, AudioBlock) and wav.mime_type.startswith("audio/")
    assert audio.decoded_size(wav) == len(tiny_wav())
    assert structured.structured == {"city": "Paris", "temperature": 21.5, "conditions": ["sunny", "dry"]}
    wire = structured.to_json()
    assert wire["structuredContent"] == structured.structured and wire["isError"] is False
    assert not mixed.is_error and "[resource link: mem://hello]" in mixed.text()
    # _meta travels with the result (these servers stamp their identity into it).
    assert mixed.meta is not None and mixed.to_json()["_meta"] == mixed.meta
    assert mixed.meta["io.modelcontextprotocol/serverInfo"]["name"] == "everything"


@BOTH
async def test_progress_notifications_become_updates(live: Live, server: str) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        updates.append((value, total, message))

    with anyio.fail_after(HANG_GUARD_S):
        result = await call_tool(
            live.manager.get(server), "slow", {"steps": 3, "delay": 0.01}, progress=on_progress
        )
    assert result.text() == "done 3 steps"
    assert updates == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]


async def test_repeated_and_backwards_progress_is_dropped(live: Live) -> None:
    # A burst of 1,200 notifications, 200 of them repeated or going backwards.
    updates: list[float] = []

    def on_progress(value: float, total: float | None, message: str | None) -> None:
        updates.append(value)

    with anyio.fail_after(HANG_GUARD_S):
        result = await call_tool(
            live.manager.get("e"), "noisy_progress", {"count": 1000}, progress=on_progress
        )
    assert result.text() == "sent 1000"
    assert updates == [float(i) for i in range(1, 1001)]


@BOTH
async def test_is_error_comes_back_as_an_error_result(live: Live, server: str) -> None:
    with anyio.fail_after(HANG_GUARD_S):
        result = await call_tool(live.manager.get(server), "fail", {"message": "boom 42"})
    assert result.is_error
    assert "boom 42" in result.text()
    assert result.to_json()["isError"] is True


@BOTH
async def test_cancelling_the_caller_cancels_the_call_on_the_server(live: Live, server: str) -> None:
    markers = live.markers[server]
    for f in markers.iterdir():
        f.unlink()
    sup = live.manager.get(server)
    with anyio.fail_after(HANG_GUARD_S):
        async with anyio.create_task_group() as tg:

            async def sleeper() -> None:
                await call_tool(sup, "sleep", {"seconds": 30})

            tg.start_soon(sleeper)
            await wait_until(lambda: (markers / "sleep-started").exists())
            tg.cancel_scope.cancel()
        # The server itself observed the cancellation, and the session survived it.
        await wait_until(lambda: (markers / "sleep-cancelled").exists())
        assert sup.state == State.READY
        assert (await call_tool(sup, "echo", {"text": "still here"})).text() == "still here"


@BOTH
async def test_timeout_raises_and_cancels_on_the_server(live: Live, server: str) -> None:
    markers = live.markers[server]
    for f in markers.iterdir():
        f.unlink()
    sup = live.manager.get(server)
    with anyio.fail_after(HANG_GUARD_S):
        with pytest.raises(TimeoutFailed) as info:
            await call_tool(sup, "sleep", {"seconds": 30}, timeout_s=0.5)
        assert info.value.code == "timeout" and info.value.server == server
        await wait_until(lambda: (markers / "sleep-cancelled").exists())
        assert (await call_tool(sup, "echo", {"text": "ok"})).text() == "ok"


async def test_cancellation_and_progress_token_on_the_wire(live: Live) -> None:
    """The hand-written server records raw JSON-RPC: the cancel notification names the request."""
    sup = live.manager.get("raw")
    with anyio.fail_after(HANG_GUARD_S):
        assert (await call_tool(sup, "echo", {"text": "x"})).text() == "x"
        with anyio.move_on_after(0.3):
            await call_tool(sup, "never", {})

        def cancelled() -> list[dict[str, Any]]:
            return [m for m in received(live) if m.get("method") == "notifications/cancelled"]

        await wait_until(lambda: bool(cancelled()))
    calls = [m for m in received(live) if m.get("method") == "tools/call"]
    never = next(m for m in calls if m["params"]["name"] == "never")
    assert cancelled()[0]["params"]["requestId"] == never["id"]
    # A progress token goes out with every call, so a server may always report progress.
    assert all("progressToken" in m["params"].get("_meta", {}) for m in calls)


async def test_bridged_names_descriptions_and_schemas(live: Live) -> None:
    tools = {t.name: t for t in live.manager.tools.for_server("e")}
    add = tools["add"]
    assert add.bridged_name.startswith("mcp__e__add_") and len(add.bridged_name) <= 64
    assert "[read-only, idempotent]" in add.description
    assert "[destructive, closed-world]" in tools["destructive"].description
    assert add.input_schema["required"] == ["a", "b"]  # passed through unchanged
    http_add = live.manager.tools.get("h", "add")
    assert http_add is not None and http_add.bridged_name != add.bridged_name
    assert all(t.active for t in tools.values())


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_server_dying_mid_call_fails_fast_and_deactivates_tools(tmp_path: Path, transport: str) -> None:
    async with AsyncExitStack() as stack:
        if transport == "http":
            entry: dict[str, Any] = {"url": (await stack.enter_async_context(http_server())).url}
        else:
            entry = stdio_entry("everything")
        config = load_config(
            config_file=write_config(tmp_path / "c.json", {"d": entry}), global_dir=tmp_path / "agent"
        )
        async with Manager(config, retries=False) as manager:
            with anyio.fail_after(HANG_GUARD_S):
                sup = await manager.ready("d")
            assert all(t.active for t in manager.tools.for_server("d"))
            started = anyio.current_time()
            with anyio.fail_after(HANG_GUARD_S), pytest.raises(ConnectionFailed) as info:
                await call_tool(sup, "crash", {})
            assert anyio.current_time() - started < 5
            assert info.value.code == "connection" and info.value.server == "d"
            assert info.value.hint == NOT_RETRIED  # never re-sent: the outcome is unknown
            # Deactivated by the time the caller sees the error, not at the next reconnect.
            assert not any(t.active for t in manager.tools.for_server("d"))
            assert manager.tools.counts("d")[1] == 0
