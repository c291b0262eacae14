"""Ad-hoc servers: ``--stdio``, ``--http``, ``--sse`` or a bare URL instead of a configured name.

Real servers throughout: the SDK test server over stdio, Streamable HTTP and SSE; npm's
server-everything over stdio, Streamable HTTP and SSE (skipped, saying why, without npm); and
``raw.py``'s liveness sockets proving that no process of the server's tree outlives the command.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from orbmcp.commands import adhoc
from orbmcp.fastpath.argv import ProgramLine
from orbmcp.fastpath.daemon_client import forwarded_command
from tests.cli import run_cli
from tests.servers.launch import http_server_process, server_cmd
from tests.servers.npm import npm_server

EVERYTHING = shlex.join(server_cmd("everything"))
# The stdlib server (no SDK import, ~0.03 s of CPU to start) where a command needs only a tool.
RAW = shlex.join(server_cmd("raw", "--answer-discover-error", "-32601"))


# -- names and the command line -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("npx -y @modelcontextprotocol/server-everything", "everything"),
        ("npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio", "everything"),
        ("python -m my_server", "my_server"),
        ("node /x/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "everything"),
        ("uvx mcp-server-time", "time"),
        ("docker run -i --rm mcp/fetch", "fetch"),
        ("/usr/bin/python3 -S tests/servers/light.py", "light"),
        ("weather-mcp", "weather"),
        ("'unclosed", "unclosed"),
        ("", "server"),
    ],
)
def test_a_command_names_its_server(command: str, name: str) -> None:
    assert adhoc.name_for_command(command) == name


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://mcp.deepwiki.com/mcp", "deepwiki"),
        ("https://api.githubcopilot.com/mcp/", "githubcopilot"),
        ("http://127.0.0.1:3001/mcp", "127-0-0-1"),
        ("http://localhost:8080/sse", "localhost"),
        ("http://[::1]:80/mcp", "1"),
        ("http://[bad/", "server"),
    ],
)
def test_a_url_names_its_server(url: str, name: str) -> None:
    assert adhoc.name_for_url(url) == name


def test_the_name_goes_where_a_configured_servers_would() -> None:
    assert adhoc.place_server(["call", "--stdio", "python -m x", "echo", "text=hi"]) == [
        "call", "--stdio", "python -m x", "x", "echo", "text=hi",
    ]  # fmt: skip
    assert adhoc.place_server(["call", "--stdio", "python -m x", "x", "echo"]) == [
        "call", "--stdio", "python -m x", "x", "echo",
    ]  # fmt: skip
    assert adhoc.place_server(["tools", "https://mcp.deepwiki.com/mcp"]) == [
        "tools", "deepwiki", "--http", "https://mcp.deepwiki.com/mcp",
    ]  # fmt: skip
    assert adhoc.place_server(["--no-color", "read", "--stdio=python -m x", "--name", "n", "mem://a"]) == [
        "--no-color", "read", "--stdio=python -m x", "--name", "n", "n", "mem://a",
    ]  # fmt: skip
    assert adhoc.place_server(["check", "--sse", "http://h/sse", "--call", "h/echo"]) == [
        "check", "--sse", "http://h/sse", "--call", "h/echo", "h",
    ]  # fmt: skip
    # Commands without a server position, and lines without a target, are left alone.
    for line in (["add", "x", "https://h/mcp"], ["tools", "everything"], ["nope"], ["config", "show"]):
        assert adhoc.place_server(line) == line


def test_a_line_with_an_ad_hoc_server_never_goes_to_the_daemon() -> None:
    assert forwarded_command(ProgramLine(["call", "--stdio", "python -m x", "echo"])) is None
    assert forwarded_command(ProgramLine(["tools", "https://h.example/mcp"])) is None
    assert forwarded_command(ProgramLine(["tools", "--sse=http://h/sse"])) is None
    assert forwarded_command(ProgramLine(["serve", "--server", "https://h.example/mcp"])) is None
    assert forwarded_command(ProgramLine(["serve", "--server-stdio", "python -m x"])) is None
    assert forwarded_command(ProgramLine(["tools", "everything"])) == ("tools",)
    assert forwarded_command(ProgramLine(["serve"])) == ("serve",)


# -- the SDK test server -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("tools", "--stdio", RAW), "echo(text: string)"),
        (("call", "--stdio", EVERYTHING, "add", "a=2", "b=3"), "5"),
        (("call", "--stdio", RAW, "--name", "ev", "ev", "echo", "text=named"), "named"),
        (("resources", "--stdio", EVERYTHING), "mem://hello"),
        (("read", "--stdio", EVERYTHING, "mem://hello"), "hello world"),
        (("prompts", "--stdio", EVERYTHING), "greet"),
        (("prompt", "--stdio", EVERYTHING, "greet", "name=Ada"), "Please greet Ada warmly."),
        (("status", "--stdio", RAW), "State:  ready"),
        (("check", "--stdio", RAW, "--call", "raw/echo text=hi", "--expect", "hi"), "check passed"),
    ],
)
def test_every_command_takes_a_stdio_server(args: tuple[str, ...], expected: str) -> None:
    done = run_cli(*args)
    assert done.code == 0, done.stderr
    assert expected in done.stdout


def test_env_goes_to_the_server_and_config_servers_stay_out(tmp_path: Path) -> None:
    agent = Path(os.environ["ORB_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    broken = {"command": "/nonexistent/never-started"}
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {"broken": broken}}), encoding="utf-8")
    done = run_cli(
        "call", "--stdio", EVERYTHING, "--env", "ADHOC_VALUE=from-the-line", "env", "name=ADHOC_VALUE"
    )
    assert done.code == 0, done.stderr
    assert done.stdout.strip() == "from-the-line"
    listed = run_cli("status", "--stdio", EVERYTHING, "--json")
    assert listed.code == 0, listed.stderr
    assert listed.json()["name"] == "everything"
    # The configured (and broken) server is not this command's: only the one typed is checked.
    checked = run_cli("check", "--stdio", EVERYTHING, "--json")
    assert checked.code == 0, checked.stderr
    assert [s["name"] for s in checked.json()["servers"]] == ["everything"]


@pytest.mark.parametrize("sse", [False, True])
def test_http_and_sse_servers_by_url(sse: bool) -> None:
    with http_server_process(["--sse", "0"] if sse else []) as server:
        option = "--sse" if sse else "--http"
        done = run_cli("call", option, server.url, "echo", "text=over-http")
        assert done.code == 0, done.stderr
        assert done.stdout.strip() == "over-http"
        if not sse:  # a bare URL where the server's name goes
            bare = run_cli("tools", server.url, "--header", "X-Trace=1", "--json")
            assert bare.code == 0, bare.stderr
            assert {t["server"] for t in bare.json()} == {"127-0-0-1"}


def test_bad_targets_are_usage_errors_that_run_nothing() -> None:
    cases = [
        (("tools", "--stdio", ""), "--stdio needs a command"),
        (("tools", "--stdio", "'unclosed"), "--stdio"),
        (("tools", "--http", "ftp://h/x"), "expected an http:// or https:// URL"),
        (("tools", "--stdio", "x", "--sse", "http://h/sse"), "give one of --stdio, --http and --sse"),
        (("tools", "--env", "A=1"), "--env describe a server given with --stdio"),
        (("tools", "--stdio", "x", "--env", "novalue"), "expected NAME=VALUE"),
        (("tools", "--stdio", "x", "--header", "A=1"), "--header applies to an HTTP server"),
    ]
    for args, message in cases:
        done = run_cli(*args)
        assert done.code == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)


def test_a_server_that_fails_fails_as_a_configured_one_does() -> None:
    done = run_cli("tools", "--stdio", "/nonexistent/mcp-server --flag")
    assert done.code == 4, done.stderr
    assert "mcp-server" in done.stderr


def test_a_shared_session_refuses_an_ad_hoc_server() -> None:
    # The REPL's session stays up: its servers are the config's, never one typed for a command.
    done = run_cli("shell", stdin=f"tools --stdio '{EVERYTHING}'\n")
    assert "run a server for one command, not in a shared session" in done.stdout + done.stderr
    assert "echo(text: string)" not in done.stdout


def test_no_process_of_the_servers_tree_outlives_the_command() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)
    host, port = listener.getsockname()
    raw = shlex.join(
        server_cmd(
            "raw", "--answer-discover-error", "-32601", "--liveness", f"{host}:{port}", "--spawn-child"
        )
    )
    try:
        done = run_cli("call", "--stdio", raw, "--name", "r", "echo", "text=x")
        assert done.code == 0, done.stderr
        assert done.stdout.strip() == "x"
        for _ in range(2):  # the server and its child registered; both are gone now: EOF
            conn, _addr = listener.accept()
            with conn:
                conn.settimeout(60)
                received = b""
                while chunk := conn.recv(4096):
                    received += chunk
                assert received.endswith(b"\n")
    finally:
        listener.close()


# -- server-everything from npm ------------------------------------------------------------------


@pytest.fixture
def everything_npm() -> list[str]:
    server, why = npm_server()
    if server is None:
        pytest.skip(f"server-everything from npm is not available: {why}")
    return [server.command, *server.args]


@contextmanager
def _npm_http(argv: list[str], mode: str) -> Iterator[int]:
    """server-everything serving ``mode`` (streamableHttp, sse) on a free loopback port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [*argv, mode],
        env={**os.environ, "PORT": str(port)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        seen = b""
        deadline = time.monotonic() + 60
        while b"port" not in seen.lower() or not seen.endswith(b"\n"):
            left = deadline - time.monotonic()
            assert left > 0, f"server-everything {mode} did not say it listens: {seen!r}"
            if select.select([proc.stderr], [], [], left)[0]:
                chunk = os.read(proc.stderr.fileno(), 4096)
                assert chunk, f"server-everything {mode} exited ({proc.wait()}): {seen!r}"
                seen += chunk
        assert str(port).encode() in seen, seen
        yield port
    finally:
        proc.kill()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.slow
def test_server_everything_over_stdio(everything_npm: list[str]) -> None:
    done = run_cli("call", "--stdio", shlex.join(everything_npm), "echo", "message=hi")
    assert done.code == 0, done.stderr
    assert "hi" in done.stdout
    listed = run_cli("tools", "--stdio", shlex.join(everything_npm), "--json")
    assert listed.code == 0, listed.stderr
    assert {t["server"] for t in listed.json()} == {"everything"}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "option", "path"), [("streamableHttp", "--http", "/mcp"), ("sse", "--sse", "/sse")]
)
def test_server_everything_over_http(everything_npm: list[str], mode: str, option: str, path: str) -> None:
    with _npm_http(everything_npm, mode) as port:
        url = f"http://127.0.0.1:{port}{path}"
        done = run_cli("call", option, url, "--name", "everything", "echo", "message=over-the-wire")
        assert done.code == 0, done.stderr
        assert "over-the-wire" in done.stdout
