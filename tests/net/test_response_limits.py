"""HTTP response bodies are bounded like SSE events: an endless JSON body, a terabyte
Content-Length and a gzip bomb each cost at most 16 MiB and fail one request with "response larger
than 16 MiB"; an event stream is left to the SDK's per-event cap."""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from orbmcp.net.bounded import ResponseTooLarge, cap_response
from tests.core.live import write_config
from tests.servers.launch import http_server_process

REPO = Path(__file__).resolve().parents[2]
LIMIT = 1024


class Endless(httpx2.AsyncByteStream):
    """A body that never ends; counts the chunks anyone pulled from it."""

    def __init__(self, chunk: bytes = b"[" * 100) -> None:
        self.chunk = chunk
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            self.pulled += 1
            yield self.chunk


def response(stream: httpx2.AsyncByteStream, **headers: str) -> httpx2.Response:
    named = {name.replace("_", "-"): value for name, value in headers.items()}
    return httpx2.Response(200, headers=named, stream=stream, request=httpx2.Request("POST", "http://x/mcp"))


async def capped(resp: httpx2.Response) -> httpx2.Response:
    await cap_response(resp, LIMIT)
    return resp


async def test_an_endless_body_stops_one_chunk_past_the_cap() -> None:
    body = Endless()
    resp = await capped(response(body, content_type="application/json"))
    with pytest.raises(ResponseTooLarge, match="response larger than"):
        await resp.aread()
    assert body.pulled == LIMIT // 100 + 1


async def test_a_stated_length_above_the_cap_is_refused_before_reading() -> None:
    body = Endless()
    resp = await capped(response(body, content_type="application/json", content_length=str(10**12)))
    with pytest.raises(ResponseTooLarge):
        await resp.aread()
    assert body.pulled == 0


async def test_a_gzip_bomb_is_counted_inflated() -> None:
    bomb = gzip.compress(b" " * (LIMIT * 500))
    assert len(bomb) < LIMIT
    resp = await capped(
        response(httpx2.ByteStream(bomb), content_type="application/json", content_encoding="gzip")
    )
    with pytest.raises(ResponseTooLarge):
        await resp.aread()


async def test_small_bodies_plain_gzip_and_deflate_read_as_they_were() -> None:
    import zlib

    for encoding, body in (
        ("identity", b'{"a": 1}'),
        ("gzip", gzip.compress(b'{"a": 1}')),
        ("deflate", zlib.compress(b'{"a": 1}')),
    ):
        resp = await capped(
            response(httpx2.ByteStream(body), content_type="application/json", content_encoding=encoding)
        )
        assert await resp.aread() == b'{"a": 1}'


async def test_unknown_or_stacked_encodings_are_refused_and_broken_gzip_is_a_decoding_error() -> None:
    for encoding in ("br", "gzip, gzip"):
        resp = await capped(
            response(httpx2.ByteStream(b"xx"), content_type="application/json", content_encoding=encoding)
        )
        with pytest.raises(ResponseTooLarge):
            await resp.aread()
    broken = await capped(
        response(httpx2.ByteStream(b"not gzip"), content_type="application/json", content_encoding="gzip")
    )
    with pytest.raises(httpx2.DecodingError):
        await broken.aread()


async def test_an_event_stream_is_left_to_the_per_event_cap() -> None:
    body = httpx2.ByteStream(b"x" * (LIMIT * 4))
    resp = await capped(response(body, content_type="text/event-stream"))
    assert resp.stream is body


def _limited_child() -> None:
    # Before the cap this repro grew at ~0.3 GB/s: a 2 GiB address space keeps CI safe if it regresses.
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("mode", ["endless-json", "huge-length", "gzip-bomb", "endless-sse"])
def test_a_hostile_http_server_costs_a_bounded_amount(tmp_path: Path, mode: str) -> None:
    with http_server_process(["--mode", mode], script="hostile_http") as server:
        config = write_config(tmp_path / "mcp.json", {"x": {"url": server.url}})
        env = {**os.environ, "ORBMCP_CONFIG": str(config), "ORBMCP_NO_DAEMON": "1", "NO_COLOR": "1"}
        proc = subprocess.run(
            [sys.executable, "-m", "orbmcp", "call", "x", "attack", "--json"],
            cwd=REPO,
            env=env,
            capture_output=True,
            timeout=120,
            preexec_fn=_limited_child,
            check=False,
        )
    assert proc.returncode == 4, proc.stderr
    if mode == "endless-sse":
        assert b"closed the connection during tools/call" in proc.stderr  # the SDK's event cap
    else:
        assert b"response larger than 16 MiB" in proc.stderr
