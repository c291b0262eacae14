"""The session daemon under large answers, careless and hostile clients, and config changes."""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from orbmcp.daemon.control import ask
from orbmcp.session import daemon_protocol as protocol
from tests.core.live import raw_entry
from tests.daemon import ROOT, Scoped, daemon, methods, wait_for
from tests.daemon.test_wire import frames, raw_exchange, serving
from tests.timeouts import HANG_GUARD_S

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")


def test_output_larger_than_a_frame_is_printed_whole(warm: Scoped) -> None:
    # 11 M characters with quotes, backslashes, newlines and non-ASCII: the `--json` answer as one
    # frame would be over the frame limit, yet what one-shot prints the daemon prints, byte for byte.
    warm.write({"r": raw_entry("--big-tool")})
    lines = [("--json", "call", "r", "big", "size=11000000"), ("call", "r", "big", "size=11000000")]
    cold = {line: warm.run_here(*line) for line in lines}
    as_one_frame = json.dumps({"t": "out", "data": cold[lines[0]].out}, ensure_ascii=False).encode()
    assert cold[lines[0]].code == 0 and len(as_one_frame) > protocol.MAX_FRAME
    for line in lines:
        served = warm.run(*line)
        assert (served.code, served.err) == (cold[line].code, cold[line].err), line
        assert served.out == cold[line].out, line


# -- careless and hostile clients, in process ------------------------------------------------------


def silent(path: Path) -> socket.socket:
    """A connection that says nothing."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(path))
    return sock


async def until(predicate: Callable[[], bool], what: str) -> None:
    with anyio.fail_after(HANG_GUARD_S, shield=False):
        while not predicate():
            await anyio.sleep(0.01)


async def test_a_connection_without_hello_is_closed(tmp_path: Path) -> None:
    async with serving(tmp_path, hello_timeout_s=0.2) as daemon:
        sock = silent(daemon.socket_file)
        with sock:
            assert await anyio.to_thread.run_sync(sock.recv, 100) == b""  # closed by the daemon
        # Said hello, then nothing: closed too.
        sock = silent(daemon.socket_file)
        with sock:
            protocol.send(sock, {"t": "hello", "protocol": protocol.PROTOCOL_VERSION})
            assert (await anyio.to_thread.run_sync(protocol.receive, sock) or {})["t"] == "hello"
            assert await anyio.to_thread.run_sync(sock.recv, 100) == b""
        assert (await anyio.to_thread.run_sync(ask, daemon.socket_file, {"t": "ping"})) == {"t": "pong"}


async def test_connections_over_the_cap_are_refused_with_a_line(tmp_path: Path) -> None:
    async with serving(tmp_path, max_connections=2, hello_timeout_s=600) as daemon:
        held = [silent(daemon.socket_file) for _ in range(2)]
        await until(lambda: daemon.connections == 2, "two connections")
        answer = frames(await anyio.to_thread.run_sync(raw_exchange, daemon.socket_file, b""))
        assert len(answer) == 1 and answer[0]["t"] == "error"
        assert "serving 2 connections, its limit" in str(answer[0]["message"])
        assert "--no-daemon" in str(answer[0]["message"])
        held.pop().close()
        await until(lambda: daemon.connections == 1, "a slot to free")
        assert (await anyio.to_thread.run_sync(ask, daemon.socket_file, {"t": "ping"})) == {"t": "pong"}
        for sock in held:
            sock.close()
        # Closed before the daemon stops: a peer's EOF racing the stop's cancellation makes anyio's
        # Unix stream set a cancelled future (an asyncio callback error the test runner reports).
        await until(lambda: daemon.connections == 0, "the connections to close")


async def test_a_silent_connection_does_not_keep_the_daemon_alive(tmp_path: Path) -> None:
    # The silent client closes only once the daemon has stopped: its EOF racing the stop's
    # cancellation makes anyio's Unix stream set a cancelled future (an asyncio callback error).
    with contextlib.ExitStack() as held:
        async with serving(tmp_path, idle_timeout_s=0.2, hello_timeout_s=600) as daemon:
            held.enter_context(silent(daemon.socket_file))
            await until(lambda: daemon.connections == 1, "the connection to be accepted")
            await until(daemon._stop.is_set, "the idle timeout")
            assert daemon._stop_reason == "idle timeout"


# -- out of file descriptors, in a daemon process of its own ---------------------------------------


def read_line(proc: subprocess.Popen[str], timeout: float = 30.0) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().strip() if ready else "<nothing within the timeout>"


@pytest.fixture
def limited(scoped: Scoped) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.daemon.limited_daemon",
                *("--home", str(scoped.home)),
                *("--project", str(scoped.project)),
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=scoped.env(),
            cwd=ROOT,
        )
        procs.append(proc)
        assert read_line(proc) == "ready"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=30)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_running_out_of_descriptors_waits_and_serves_again(
    scoped: Scoped, limited: Callable[..., subprocess.Popen[str]]
) -> None:
    scoped.write({})
    limit = 40
    proc = limited("--nofile", str(limit), "--hello-timeout", "600")
    held = [silent(scoped.socket) for _ in range(limit + 8)]  # the last ones wait in the backlog
    try:
        assert read_line(proc) == "accept-failed", proc.stderr.read() if proc.poll() is not None else ""
    finally:
        for sock in held:
            sock.close()
    status = None
    deadline = time.monotonic() + 30
    while status is None and time.monotonic() < deadline and proc.poll() is None:
        status = ask(scoped.socket, {"t": "status"}, timeout=30)
    assert proc.poll() is None and status is not None and status["t"] == "status"
    assert status["acceptFailures"] >= 1


def test_the_clients_input_limit_holds_in_the_daemon(warm: Scoped, tmp_path: Path) -> None:
    # ORBMCP_MAX_INPUT_MIB is the client's: a daemon started without it applies it as one-shot does.
    warm.write({"r": raw_entry()})
    big = json.dumps({"text": "x" * (2 * 1024 * 1024)})
    (tmp_path / "big.json").write_text(big, encoding="utf-8")
    small = json.dumps({"text": "fits"})
    cases = [
        (("call", "r", "echo", "-"), big, "1"),
        (("call", "r", "echo", f"text=@{tmp_path / 'big.json'}"), None, "1"),
        (("call", "r", "echo", "-"), small, "1"),
    ]
    cold = [warm.run_here(*line, stdin=stdin or "", ORBMCP_MAX_INPUT_MIB=mib) for line, stdin, mib in cases]
    assert [c.code for c in cold] == [2, 2, 0] and "larger than 1 MiB" in cold[0].err
    for (line, stdin, mib), one_shot in zip(cases, cold, strict=True):
        done = warm.run(*line, stdin=stdin, ORBMCP_MAX_INPUT_MIB=mib)
        assert (done.code, done.out, done.err) == (one_shot.code, one_shot.out, one_shot.err), line
    served = warm.run("daemon", "status", "--json").json()["clientsServed"]
    # More stdin allowed than one frame carries: the line runs one-shot, the daemon declines it.
    more = warm.run("call", "r", "echo", "-", stdin=small, ORBMCP_MAX_INPUT_MIB="64")
    assert (more.code, more.out) == (0, "fits\n")
    assert warm.run("daemon", "status", "--json").json()["clientsServed"] == served


# -- config changes ----------------------------------------------------------------------------------


def test_another_clients_config_created_after_start_is_seen(scoped: Scoped, tmp_path: Path) -> None:
    home = tmp_path / "home"
    scoped.extra_env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    scoped.write({"r": raw_entry()})
    with daemon(scoped):
        assert scoped.run("call", "r", "echo", "text=first").code == 0
        # Neither file existed when the daemon started; no orbmcp file changes.
        cursor = home / ".cursor" / "mcp.json"
        cursor.parent.mkdir(parents=True)
        cursor.write_text(json.dumps({"mcpServers": {"cur": raw_entry()}}), encoding="utf-8")
        vscode = home / ".config" / "Code" / "User" / "mcp.json"
        vscode.parent.mkdir(parents=True)
        vscode.write_text(
            json.dumps({"servers": {"vs-ev": {"type": "stdio", **raw_entry()}}}), encoding="utf-8"
        )
        for name in ("cur", "vs-ev"):
            warm = scoped.run("call", name, "echo", f"text={name}")
            assert (warm.code, warm.out) == (0, f"{name}\n"), warm.err


def test_a_call_cut_short_by_a_restart_says_why(warm: Scoped, tmp_path: Path) -> None:
    rec = tmp_path / "r.jsonl"
    warm.write({"r": raw_entry("--record", str(rec))})
    slow = warm.popen("call", "r", "never", "--timeout", "120")
    try:
        wait_for(lambda: "tools/call" in methods(rec), what="the slow call to reach the server")
        # Another client's command, after the definition changed: the session restarts r.
        warm.write({"r": raw_entry("--record", str(rec), env={"CHANGED": "1"})})
        after = warm.run("call", "r", "echo", "text=new")
        assert (after.code, after.out) == (0, "new\n"), after.err
        out, err = slow.communicate(timeout=60)
    finally:
        if slow.poll() is None:
            slow.kill()
            slow.communicate()
        assert slow.returncode == 4 and out == ""
        assert "server 'r' was restarted because its definition changed during tools/call" in err


# -- clients that never read ---------------------------------------------------------------------


def never_reading(scoped: Scoped, *argv: str) -> socket.socket:
    """A client that asks for a command and then reads nothing of its output."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(scoped.socket))
    protocol.send(sock, {"t": "hello", "protocol": protocol.PROTOCOL_VERSION})
    assert (protocol.receive(sock) or {}).get("t") == "hello"
    env = {"ORB_AGENT_DIR": str(scoped.home)}
    protocol.send(sock, {"t": "run", "argv": list(argv), "cwd": str(scoped.project), "env": env, "tty": {}})
    return sock


def test_clients_that_never_read_do_not_grow_the_daemon(scoped: Scoped) -> None:
    psutil = pytest.importorskip("psutil")
    # 20 answers of 6 MB (the frames a little more): one at a time from the one server, so no
    # bigger, to keep the test's run short; held in memory they would be over 120 MB.
    line = ("call", "r", "big", "size=5000000", "--timeout", "600")
    scoped.write({"r": raw_entry("--big-tool")})
    with daemon(scoped) as info:
        read = scoped.run(*line)  # one client that reads: the server is up, the answer known
        assert read.code == 0
        answer = len(read.out.encode())
        rss = psutil.Process(info["pid"]).memory_info().rss
        stuck = [never_reading(scoped, *line) for _ in range(20)]
        try:
            # Every answer is made and waits for its client (the kernel holds a little of each).
            wait_for(
                lambda: (
                    scoped.run("daemon", "status", "--json").json()["outputBacklogBytes"]
                    >= 20 * (answer - 1024 * 1024)
                ),
                timeout=600,
                what="the twenty answers to be made",
            )
            grown = psutil.Process(info["pid"]).memory_info().rss - rss
            # Measured: ~150 MiB when the answers wait in memory, ~60 MiB (transient parsing and
            # rendering) when they wait on disk.
            assert grown < 100 * 1024 * 1024, f"the daemon grew by {grown / 2**20:.0f} MiB"
        finally:
            for sock in stuck:
                sock.close()
        after = scoped.run("call", "r", "echo", "text=still")
        assert (after.code, after.out) == (0, "still\n")


async def read_frames(sock: socket.socket, count: int) -> list[dict[str, object]]:
    def read() -> list[dict[str, object]]:
        got = []
        for _ in range(count):
            message = protocol.receive(sock)
            assert message is not None
            got.append(message)
        return got

    return await anyio.to_thread.run_sync(read)


@pytest.mark.parametrize("spool_dir", ["private", "missing"])
async def test_a_backlog_waits_on_disk_and_arrives_in_order(tmp_path: Path, spool_dir: str) -> None:
    from anyio.abc import UNIXSocketStream

    from orbmcp.session.daemon_frames import FrameWriter

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    theirs.settimeout(30)
    stream = await UNIXSocketStream.from_socket(ours)
    # "missing": the spool file cannot be made; the frames wait in memory instead, still in order.
    directory = tmp_path if spool_dir == "private" else tmp_path / "missing"
    writer = FrameWriter(stream, spool_dir=str(directory), memory_limit=4096, spool_limit=1 << 30)
    texts = [f"{n}:" + 'é"\\\n' * 500 for n in range(200)]
    for text in texts:
        writer.send_text("out", text)
    assert writer.backlog > 200 * 2000
    assert (writer._spool is not None) == (spool_dir == "private")
    with theirs:
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            got = await read_frames(theirs, len(texts))
            writer.send_nowait({"t": "exit", "code": 0})  # after the spool drained: memory again
            assert await read_frames(theirs, 1) == [{"t": "exit", "code": 0}]
            writer.close()
    assert [m["data"] for m in got] == texts and writer.backlog == 0
    await stream.aclose()


async def test_a_client_that_never_reads_is_dropped_past_the_spool_limit(tmp_path: Path) -> None:
    from anyio.abc import UNIXSocketStream

    from orbmcp.session.daemon_frames import FrameWriter

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    stream = await UNIXSocketStream.from_socket(ours)
    writer = FrameWriter(stream, spool_dir=str(tmp_path), memory_limit=1024, spool_limit=64 * 1024)
    for _ in range(100):
        writer.send_text("out", "x" * 1024)
    assert writer.broken and writer.backlog == 0  # given up on; nothing of it kept
    with anyio.fail_after(HANG_GUARD_S):
        await writer.run()  # returns at once: nothing left to send to a dropped client
    theirs.close()
    await stream.aclose()
