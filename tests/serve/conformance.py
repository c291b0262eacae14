"""The MCP conformance suite's server scenarios against ``orbmcp serve --http --names raw``.

    python -m tests.serve.conformance --node NODE --suite SUITE_JS [SCENARIO ...]

Starts ``orbmcp serve --http 127.0.0.1:0 --names raw`` over ``tests/servers/reference.py`` (the SDK
server with what the scenarios call), then runs each server scenario (all the suite lists, or
those named) one at a time with ``conformance server --url``. The suite cannot send headers, so it
talks to a loopback proxy that adds ``Authorization: Bearer <token>`` to each request and changes
nothing else (the Host and Origin the suite sends reach serve as sent). Prints one line per
scenario, ``PASS`` or ``FAIL (why)``, then a summary; exits 1 when any failed. A scenario passes
when the suite exits 0 and its checks hold at least one SUCCESS and no FAILURE or WARNING.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_TIMEOUT_S = 120
START_TIMEOUT_S = 120
_CHUNK = 64 * 1024


# -- the proxy that adds the token -----------------------------------------------------------------


async def _relay_requests(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, authorization: bytes
) -> None:
    """HTTP/1.1 requests from the suite, each with our Authorization header and nothing else changed."""
    while True:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            break
        lines = head[:-4].split(b"\r\n")
        kept = [line for line in lines[1:] if not line.lower().startswith(b"authorization:")]
        writer.write(b"\r\n".join([lines[0], *kept, authorization, b"", b""]))
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in kept)}
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            while True:
                size_line = await reader.readuntil(b"\r\n")
                writer.write(size_line)
                size = int(size_line.split(b";")[0], 16)
                writer.write(await reader.readexactly(size + 2))
                if size == 0:
                    break
        elif (length := int(headers.get(b"content-length", b"0"))) > 0:
            writer.write(await reader.readexactly(length))
        await writer.drain()
    with contextlib.suppress(OSError):
        writer.write_eof()


async def _relay_bytes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(OSError):
        writer.close()


async def start_proxy(target_port: int, token: str) -> asyncio.Server:
    authorization = f"Authorization: Bearer {token}".encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
        try:
            await asyncio.gather(
                _relay_requests(reader, up_writer, authorization),
                _relay_bytes(up_reader, writer),
                return_exceptions=True,
            )
        except asyncio.CancelledError:
            pass  # the proxy closes with a stream still open (an SSE GET): nothing to relay any more
        finally:
            up_writer.close()
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


# -- serve -----------------------------------------------------------------------------------------


def _write_config(directory: Path) -> Path:
    entry = {"command": sys.executable, "args": [str(ROOT / "tests" / "servers" / "reference.py")]}
    path = directory / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"reference": entry}}), encoding="utf-8")
    return path


def _start_serve(config: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    argv = [sys.executable, "-m", "orbmcp", "--no-daemon", "--config", str(config)]
    serve = subprocess.Popen(
        [*argv, "serve", "--http", "127.0.0.1:0", "--names", "raw"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert serve.stderr is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    line = b""
    while b"serving MCP at " not in line:
        if time.monotonic() > deadline or serve.poll() is not None:
            serve.kill()
            raise RuntimeError(f"orbmcp serve did not start: {line.decode(errors='replace')}")
        line = serve.stderr.readline()
    match = re.search(rb"serving MCP at (\S+)", line)
    assert match is not None
    return serve, match.group(1).decode()


def _judge(code: int, out: Path) -> str:
    found = sorted(out.rglob("checks.json"))
    if not found:
        return f"no checks.json (suite exit {code})"
    checks = json.loads(found[-1].read_text(encoding="utf-8"))
    bad = [
        f"{c.get('status')} {c.get('id')}: {c.get('errorMessage', '')}"
        for c in checks
        if c.get("status") in ("FAILURE", "WARNING")
    ]
    successes = sum(1 for c in checks if c.get("status") == "SUCCESS")
    if code == 0 and successes and not bad:
        return "pass"
    return f"suite exit {code}; " + ("; ".join(bad[:3]) if bad else "no SUCCESS check")


def server_scenarios(node: str, suite: str) -> list[str]:
    listing = subprocess.run([node, suite, "list"], capture_output=True, text=True, check=False, timeout=60)
    section = listing.stdout.split("Server scenarios", 1)[-1].split("Client scenarios", 1)[0]
    return re.findall(r"^\s+- (\S+)", section, flags=re.MULTILINE)


async def run(node: str, suite: str, scenarios: list[str], workdir: Path) -> dict[str, str]:
    env = {**os.environ, "ORB_AGENT_DIR": str(workdir / "agent")}
    env.pop("ORBMCP_DEBUG", None)
    serve, url = await asyncio.to_thread(_start_serve, _write_config(workdir), env)
    try:
        token = (workdir / "agent" / "serve-token").read_text(encoding="ascii").strip()
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        proxy = await start_proxy(port, token)
        proxy_url = f"http://127.0.0.1:{proxy.sockets[0].getsockname()[1]}/mcp"
        verdicts: dict[str, str] = {}
        async with proxy:
            for index, scenario in enumerate(scenarios, 1):
                out = workdir / f"{index:02d}-{scenario}"
                out.mkdir()
                process = await asyncio.create_subprocess_exec(
                    node,
                    suite,
                    "server",
                    "--url",
                    proxy_url,
                    "--scenario",
                    scenario,
                    "-o",
                    str(out),
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                try:
                    code = await asyncio.wait_for(process.wait(), SCENARIO_TIMEOUT_S)
                except TimeoutError:
                    process.kill()
                    code = await process.wait()
                verdicts[scenario] = _judge(code, out)
                print(
                    ("PASS " if verdicts[scenario] == "pass" else "FAIL ")
                    + scenario
                    + ("" if verdicts[scenario] == "pass" else f" ({verdicts[scenario]})"),
                    flush=True,
                )
        return verdicts
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--node", required=True)
    parser.add_argument("--suite", required=True)
    parser.add_argument("scenarios", nargs="*")
    args = parser.parse_args(argv)
    scenarios = args.scenarios or server_scenarios(args.node, args.suite)
    if not scenarios:
        print("conformance: the suite lists no server scenarios", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="orbmcp-serve-conformance-") as tmp:
        verdicts = asyncio.run(run(args.node, args.suite, scenarios, Path(tmp)))
    passed = sum(1 for v in verdicts.values() if v == "pass")
    print(f"conformance (server): {passed} of {len(verdicts)} scenarios passed")
    return 0 if passed == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
