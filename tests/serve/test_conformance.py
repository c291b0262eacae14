"""The conformance suite's server scenarios against ``orbmcp serve --http --names raw``.

The suite test (marked ``conformance``: its own CI step) installs Node 22 and the suite through
``scripts/conformance.sh`` and runs every server scenario it lists through ``--server``; it is
skipped, with the reason, when they cannot be installed. The other tests check, without Node, the
proxy that adds the token (the suite cannot send headers) and how scenarios are judged.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from tests.auth.test_conformance import SCRIPT, _install_or_skip, _script
from tests.serve import conformance

SERVER_SUITE_TIMEOUT_S = 900
_LINE = re.compile(r"^(PASS|FAIL) (\S+)")


@pytest.mark.slow
@pytest.mark.conformance
def test_every_server_scenario_passes_against_serve(tmp_path: Path) -> None:
    _install_or_skip()
    proc = _script("--server", timeout=SERVER_SUITE_TIMEOUT_S, env={"TMPDIR": str(tmp_path)})
    verdicts = {m.group(2): m.group(1) for line in proc.stdout.splitlines() if (m := _LINE.match(line))}
    report = proc.stdout + proc.stderr[-3000:]
    assert len(verdicts) >= 32, report  # 0.1.16 has 32 server scenarios
    assert [s for s, v in verdicts.items() if v != "PASS"] == [], report
    assert f"conformance (server): {len(verdicts)} of {len(verdicts)} scenarios passed" in proc.stdout
    assert proc.returncode == 0
    assert SCRIPT.exists()


def test_scenarios_are_judged_by_their_checks(tmp_path: Path) -> None:
    def checks(*statuses: str) -> Path:
        out = tmp_path / "-".join(statuses or ("none",))
        out.mkdir()
        (out / "checks.json").write_text(json.dumps([{"id": s.lower(), "status": s} for s in statuses]))
        return out

    assert conformance._judge(0, checks("SUCCESS", "INFO")) == "pass"
    assert conformance._judge(0, checks("INFO")).endswith("no SUCCESS check")
    assert "WARNING warning" in conformance._judge(0, checks("SUCCESS", "WARNING"))
    assert conformance._judge(1, checks("SUCCESS")).startswith("suite exit 1")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert conformance._judge(0, empty) == "no checks.json (suite exit 0)"


def test_the_proxy_adds_the_token_and_changes_nothing_else() -> None:
    async def scenario() -> list[bytes]:
        seen: list[bytes] = []

        async def target(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            for _ in range(2):
                head = await reader.readuntil(b"\r\n\r\n")
                length = (
                    int(re.search(rb"content-length: (\d+)", head, re.I).group(1)) if b"ength" in head else 0
                )
                body = await reader.readexactly(length) if length else b""
                if b"chunked" in head.lower():
                    body = await reader.readuntil(b"0\r\n\r\n")
                seen.append(head + body)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                await writer.drain()
            writer.close()

        server = await asyncio.start_server(target, "127.0.0.1", 0)
        async with server:
            proxy = await conformance.start_proxy(server.sockets[0].getsockname()[1], "t0ken")
            async with proxy:
                reader, writer = await asyncio.open_connection("127.0.0.1", proxy.sockets[0].getsockname()[1])
                writer.write(
                    b"POST /mcp HTTP/1.1\r\nHost: localhost:1\r\nOrigin: http://evil.example\r\n"
                    b"Authorization: Bearer forged\r\ncontent-length: 2\r\n\r\n{}"
                    b"POST /mcp HTTP/1.1\r\nHost: localhost:1\r\ntransfer-encoding: chunked\r\n\r\n"
                    b"2\r\n{}\r\n0\r\n\r\n"
                )
                await writer.drain()
                answers = await asyncio.wait_for(
                    reader.readuntil(b"okHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"), 30
                )
                assert answers.count(b"200 OK") == 2
                writer.close()
        return seen

    first, second = asyncio.run(scenario())
    assert b"Authorization: Bearer t0ken\r\n" in first and b"forged" not in first
    assert b"Host: localhost:1\r\n" in first and b"Origin: http://evil.example\r\n" in first
    assert first.endswith(b"\r\n\r\n{}")
    assert b"Authorization: Bearer t0ken\r\n" in second and second.endswith(b"2\r\n{}\r\n0\r\n\r\n")
