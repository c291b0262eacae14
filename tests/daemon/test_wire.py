"""The daemon's socket, in process: frames, hostile input, refused peers, the stdlib client."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orbmcp.daemon.control import ask, idle_timeout_s
from orbmcp.daemon.policy import digest, env_digests, slash_runs_here
from orbmcp.daemon.server import DEFAULT_IDLE_TIMEOUT_S, AlreadyRunning, Daemon
from orbmcp.errors import UsageError
from orbmcp.fastpath.argv import ProgramLine, runs_in_daemon
from orbmcp.fastpath.daemon_client import forwarded_command, maybe_forward
from orbmcp.session import daemon_protocol as protocol
from orbmcp.session.daemon_frames import FrameWriter
from orbmcp.session.daemon_scope import (
    MAX_SOCKET_PATH,
    UnsafeDirectory,
    check_private_dir,
    current_scope,
    make_private_dir,
    socket_path,
)
from tests.timeouts import HANG_GUARD_S


@asynccontextmanager
async def serving(tmp_path: Path, **kwargs: object) -> AsyncIterator[Daemon]:
    (tmp_path / "agent").mkdir(exist_ok=True)
    scope = current_scope(environ={"ORB_AGENT_DIR": str(tmp_path / "agent")}, cwd=tmp_path)
    sock = Path("/tmp") / f"orbmcp-test-{os.getpid()}-{os.urandom(4).hex()}" / "d.sock"
    kwargs.setdefault("idle_timeout_s", None)
    daemon = Daemon(scope, environ={}, cwd=tmp_path, socket_file=sock, **kwargs)  # type: ignore[arg-type]
    daemon.acquire()
    try:
        async with anyio.create_task_group() as tg:
            ready = anyio.Event()
            tg.start_soon(lambda: daemon.serve(on_ready=ready.set))
            with anyio.fail_after(HANG_GUARD_S):
                await ready.wait()
            yield daemon
            daemon.request_stop("test over")
    finally:
        daemon.release()
        shutil.rmtree(sock.parent, ignore_errors=True)


def raw_exchange(path: Path, data: bytes) -> bytes:
    """Send bytes, half-close, read everything the daemon answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except BrokenPipeError:
            pass  # the daemon answered and closed before we wrote (a refusal): its answer is still here
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:
            pass  # the daemon closed on us with our garbage still unread: that is its answer too
    return b"".join(chunks)


def frames(data: bytes) -> list[dict[str, object]]:
    out = []
    while len(data) >= 4:
        (length,) = struct.unpack(">I", data[:4])
        out.append(json.loads(data[4 : 4 + length]))
        data = data[4 + length :]
    return out


async def test_status_over_the_socket(tmp_path: Path) -> None:
    async with serving(tmp_path) as daemon:
        answer = await anyio.to_thread.run_sync(ask, daemon.socket_file, {"t": "status"})
        assert answer is not None and answer["pid"] == os.getpid() and answer["servers"] == []
        assert (await anyio.to_thread.run_sync(ask, daemon.socket_file, {"t": "ping"})) == {"t": "pong"}


async def test_bad_frames_end_that_connection_only(tmp_path: Path) -> None:
    async with serving(tmp_path) as daemon:
        hello = protocol.encode({"t": "hello", "protocol": protocol.PROTOCOL_VERSION})
        cases = [
            b"\xff\xff\xff\xff",  # oversized length
            struct.pack(">I", 10) + b"{",  # truncated
            struct.pack(">I", 3) + b"abc",  # not JSON
            protocol.encode({"no": "type"}),  # not a typed object
            hello + protocol.encode({"t": "frobnicate"}),  # unknown request
            hello + protocol.encode({"t": "run", "argv": "not a list"}),
        ]
        for data in cases:
            answer = frames(await anyio.to_thread.run_sync(raw_exchange, daemon.socket_file, data))
            assert answer and answer[-1]["t"] == "error", data
        status = await anyio.to_thread.run_sync(ask, daemon.socket_file, {"t": "status"})
        assert status is not None and status["t"] == "status"


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(payload=st.binary(max_size=300))
def test_fuzzed_bytes_never_stop_the_daemon(tmp_path_factory: pytest.TempPathFactory, payload: bytes) -> None:
    async def scenario() -> None:
        async with serving(tmp_path_factory.mktemp("fuzz")) as daemon:
            for data in (
                payload,
                protocol.encode({"t": "hello", "protocol": protocol.PROTOCOL_VERSION}) + payload,
            ):
                await anyio.to_thread.run_sync(raw_exchange, daemon.socket_file, data)
            status = await anyio.to_thread.run_sync(ask, daemon.socket_file, {"t": "status"})
            assert status is not None and status["t"] == "status"

    anyio.run(scenario)


async def test_another_users_connection_is_refused(tmp_path: Path) -> None:
    async with serving(tmp_path, allowed_uid=os.getuid() + 1) as daemon:
        answer = frames(await anyio.to_thread.run_sync(raw_exchange, daemon.socket_file, b""))
        assert answer == [{"t": "error", "message": "not your daemon"}]
        assert daemon.refused == 1
        daemon.allowed_uid = os.getuid()  # the daemon itself is unharmed
        assert (await anyio.to_thread.run_sync(ask, daemon.socket_file, {"t": "ping"})) == {"t": "pong"}


async def test_one_daemon_per_scope(tmp_path: Path) -> None:
    async with serving(tmp_path) as daemon:
        second = Daemon(daemon.scope, environ={}, cwd=tmp_path, socket_file=daemon.socket_file)
        with pytest.raises(AlreadyRunning):
            second.acquire()


def test_an_unsafe_runtime_directory_is_refused_with_its_path(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o777)
    with pytest.raises(UnsafeDirectory, match=str(loose)):
        check_private_dir(loose)
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    with pytest.raises(UnsafeDirectory, match="not a directory"):
        check_private_dir(link)
    fresh = tmp_path / "fresh"
    make_private_dir(fresh)
    assert oct(fresh.stat().st_mode & 0o777) == "0o700"


def test_socket_paths_stay_under_the_os_limit(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 150)
    deep.mkdir()
    scope = current_scope(environ={"ORB_AGENT_DIR": str(deep)}, cwd=deep)
    path = socket_path(scope, {"XDG_RUNTIME_DIR": str(deep)})
    assert len(os.fsencode(path)) <= MAX_SOCKET_PATH
    other = current_scope(environ={"ORB_AGENT_DIR": str(deep / "x")}, cwd=deep)
    assert socket_path(other, {"XDG_RUNTIME_DIR": str(deep)}) != path  # scopes never share one


def test_which_lines_go_to_the_daemon() -> None:
    def forwarded(*argv: str) -> tuple[str, ...] | None:
        return forwarded_command(ProgramLine(argv))

    assert forwarded("call", "s", "t") == ("call",)
    assert forwarded("status", "--project", "p") == ("status",)
    assert forwarded("slash", "/mcp") == ("slash",)
    assert forwarded("complete", "x") == ("complete",)
    assert forwarded("config", "show") is None  # never connects
    assert forwarded("daemon", "status") is None
    assert forwarded("shell") is None
    line = ProgramLine(["--json", "call", "s", "--no-color", "t", "--", "--help"])
    assert (line.json, line.no_color, line.help, line.words) == (
        True,
        True,
        False,
        ["call", "s", "t", "--", "--help"],
    )
    assert ProgramLine(["call", "--help"]).help and ProgramLine(["status", "--no-daemon"]).no_daemon
    assert not runs_in_daemon(("daemon", "start"))
    assert maybe_forward(["status"], {"ORBMCP_NO_DAEMON": "1"}) is None
    # The agent protocol and the command list run in the caller's process, never in the daemon.
    assert slash_runs_here(["slash", "--stdio"]) and slash_runs_here(["slash", "--list", "--json"])
    assert slash_runs_here(["slash", "/mcp daemon stop"])
    assert not slash_runs_here(["slash", "/mcp call s t --stdio"])


def test_variables_are_compared_by_salted_digest_only() -> None:
    digests = env_digests({"A": "secret", "B": ""}, ["A", "B", "C"], "nonce")
    assert digests == {"A": digest("nonce", "secret"), "B": digest("nonce", ""), "C": None}
    assert "secret" not in json.dumps(digests) and digest("other", "secret") != digests["A"]


@pytest.mark.parametrize(
    ("text", "seconds"), [("30m", 1800), ("90s", 90), ("1.5h", 5400), ("0", 0), ("250ms", 0.25), ("12", 12)]
)
def test_durations(text: str, seconds: float) -> None:
    assert idle_timeout_s(text) == seconds


@pytest.mark.parametrize("text", ["soon", "9" * 400, "-5m", "5 weeks"])
def test_a_bad_duration_is_a_usage_error(text: str) -> None:
    # An overflowing number ("9" * 400 seconds is infinite as a float) is refused too.
    with pytest.raises(
        UsageError, match=r"--idle-timeout: expected a duration like 30m, 90s, 1h or 0 \(never\)"
    ):
        idle_timeout_s(text)
    assert idle_timeout_s(None) == DEFAULT_IDLE_TIMEOUT_S


async def test_the_remote_console_asks_the_client() -> None:
    from orbmcp.daemon.remote import Answers, RemoteConsole

    sent: list[dict[str, object]] = []

    class Writer:
        def send_nowait(self, message: dict[str, object]) -> None:
            sent.append(message)

        send_text = FrameWriter.send_text

    answers = Answers()
    console = RemoteConsole(Writer(), answers, tty={"stdout": True}, env={"TERM": "x"}, columns=80)  # type: ignore[arg-type]
    assert console.readline() is None  # on the event loop: nobody may block it
    console.write_out("text")
    assert sent[-1] == {"t": "out", "data": "text"}
    assert console.open_url("https://example.test/a") and sent[-1]["t"] == "open_url"

    async def answer_when_asked() -> None:
        while not any(m.get("t") == "readline" for m in sent):
            await anyio.sleep(0.001)
        qid = next(m["id"] for m in sent if m.get("t") == "readline")
        answers.deliver({"t": "answer", "id": qid, "value": "typed\n"})

    async with anyio.create_task_group() as tg:
        tg.start_soon(answer_when_asked)
        with anyio.fail_after(HANG_GUARD_S):
            line = await anyio.to_thread.run_sync(console.readline)
    assert line == "typed\n"

    async def stdin_answer(data: dict[str, object]) -> None:
        while not any(m.get("t") == "read_stdin" for m in sent[-1:]):
            await anyio.sleep(0.001)
        answers.deliver({"t": "stdin", "id": sent[-1]["id"], **data})

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdin_answer, {"data": "{}"})
        assert console.read_stdin is not None
        assert await console.read_stdin() == "{}"
    async with anyio.create_task_group() as tg:
        tg.start_soon(stdin_answer, {"data": None, "tooLarge": True})
        with pytest.raises(UsageError, match=r"stdin \('-'\) is larger than 16 MiB"):
            await console.read_stdin()
    # The client's own ORBMCP_MAX_INPUT_MIB: more than it allows is refused as one-shot refuses it.
    console = RemoteConsole(Writer(), answers, tty={}, env={}, columns=None, input_limit=1024 * 1024)  # type: ignore[arg-type]
    async with anyio.create_task_group() as tg:
        tg.start_soon(stdin_answer, {"data": "é" * (600 * 1024)})
        assert console.read_stdin is not None
        with pytest.raises(UsageError, match=r"stdin \('-'\) is larger than 1 MiB"):
            await console.read_stdin()
    answers.abandon()  # the client went away: nothing in flight is left waiting
