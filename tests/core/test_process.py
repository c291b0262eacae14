"""stdio process trees: spawn, stop, stderr tail, fd hygiene and the stale-group reaper.

Death is proven with liveness sockets, not sleeps: every process of a test tree connects to a
loopback listener and keeps the connection open; a process is dead once its connection reads EOF.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import psutil
import pytest
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

import orbmcp
import orbmcp.core.processes.process as process_module
from orbmcp.core.processes.process import ManagedProcess, exit_reason
from orbmcp.core.processes.proctree import open_pidfd
from orbmcp.core.processes.reaper import GroupRecord, GroupRegistry, ReapedGroup
from orbmcp.core.processes.spawn import SpawnSpec, open_process, spawn
from orbmcp.core.processes.stderr_tail import StderrTail
from orbmcp.errors import ConnectionFailed
from tests.timeouts import HANG_GUARD_S, scaled

GRACE = 0.3
REPO_ROOT = Path(orbmcp.__file__).resolve().parent.parent

# argv: PORT ROLE MODE [CHILD_MODE [GRANDCHILD_MODE ...]]
# MODE: eof (exit 0 on stdin EOF), hang (ignore EOF), ignore-term (ignore EOF and SIGTERM),
# exit (exit at once after spawning its child). A SIGTERM that is not ignored sends "TERM" on the
# liveness socket before exiting, so a test can tell whether one arrived. "ping" is answered with
# "pong" by processes that serve their socket.
TREE = textwrap.dedent(
    """
    import os, signal, socket, subprocess, sys, time

    port, role, mode, chain = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    sock = socket.create_connection(("127.0.0.1", port))

    def on_term(signum, frame):
        sock.sendall(b"TERM\\n")
        os._exit(143)

    # Before announcing itself: once the test has seen the line, the handler is in place.
    signal.signal(signal.SIGTERM, signal.SIG_IGN if mode == "ignore-term" else on_term)
    sock.sendall(f"{role} {os.getpid()}\\n".encode())
    if chain:
        subprocess.Popen([sys.executable, __file__, str(port), role + ".child", *chain])
    if mode == "exit":
        sys.exit(0)
    if mode == "eof":
        sys.stdin.buffer.read()
        sys.exit(0)
    while True:
        data = sock.recv(64)
        if not data:
            while True:
                time.sleep(3600)
        if b"ping" in data:
            sock.sendall(b"pong\\n")
    """
)


@dataclass
class Peer:
    role: str
    pid: int
    stream: SocketStream
    data: bytearray = field(default_factory=bytearray)
    dead: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)


class Liveness:
    def __init__(self, port: int) -> None:
        self.port = port
        self.peers: dict[str, Peer] = {}
        self._arrived = anyio.Event()

    async def handle(self, stream: SocketStream) -> None:
        buffered = BufferedByteReceiveStream(stream)
        role, pid = (await buffered.receive_until(b"\n", 200)).decode().split()
        peer = Peer(role, int(pid), stream, bytearray(buffered.buffer))
        self.peers[role] = peer
        self._arrived.set()
        self._arrived = anyio.Event()
        try:
            while True:
                peer.data += await stream.receive()
                peer.changed.set()
                peer.changed = anyio.Event()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            pass
        peer.dead.set()
        peer.changed.set()

    async def wait_for(self, *roles: str, timeout: float = 10) -> list[Peer]:
        with anyio.fail_after(timeout):
            while not all(role in self.peers for role in roles):
                await self._arrived.wait()
        return [self.peers[role] for role in roles]

    async def wait_dead(self, *roles: str, timeout: float = 30) -> None:
        with anyio.fail_after(timeout):
            for role in roles:
                await self.peers[role].dead.wait()

    async def ping(self, role: str, timeout: float = 30) -> bool:
        peer = self.peers[role]
        seen = len(peer.data)
        await peer.stream.send(b"ping\n")
        with anyio.fail_after(timeout):
            while b"pong" not in peer.data[seen:]:
                if peer.dead.is_set():
                    return False
                await peer.changed.wait()
        return True


@asynccontextmanager
async def liveness() -> AsyncIterator[Liveness]:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as tg:
        live = Liveness(listener.extra(SocketAttribute.local_port))
        tg.start_soon(listener.serve, live.handle)
        try:
            yield live
        finally:
            tg.cancel_scope.cancel()


@pytest.fixture
def tree_script(tmp_path: Path) -> Path:
    path = tmp_path / "tree.py"
    path.write_text(TREE)
    return path


@pytest.fixture
def kill_after() -> Iterator[list[int]]:
    """Process groups to SIGKILL at teardown, so a failing test leaks nothing into the run."""
    groups: list[int] = []
    yield groups
    for pgid in groups:
        with suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def tree_spec(script: Path, port: int, mode: str, *chain: str) -> SpawnSpec:
    return SpawnSpec(
        name="tree",
        command=sys.executable,
        args=[str(script), str(port), "server", mode, *chain],
        env={},
        cwd=None,
    )


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def read_line(stream: BufferedByteReceiveStream, timeout: float = 10) -> bytes:
    with anyio.fail_after(timeout):
        return await stream.receive_until(b"\n", 1 << 20)


# A grace period that running out could never pass for a prompt stop: a stop that returns inside
# STOP_BOUND_S did not sit one out. (stop() is shielded, so a wrong path fails the bound only once
# the grace is over: 30 s, not an hour.) It is also the room a process that exits on stdin EOF gets
# on a loaded machine before a SIGTERM would change the outcome a test checks.
LONG_GRACE = scaled(30.0)
STOP_BOUND_S = scaled(10.0)


async def stop_within_bound(
    proc: ManagedProcess, stdin_grace: float = GRACE, term_grace: float = GRACE
) -> None:
    with anyio.fail_after(STOP_BOUND_S):
        await proc.stop(stdin_grace=stdin_grace, term_grace=term_grace)


@pytest.fixture
def group_signals(monkeypatch: pytest.MonkeyPatch) -> list[signal.Signals]:
    """The signals a stop sends to process groups, in order (liveness probes, signal 0, aside)."""
    sent: list[signal.Signals] = []
    real_killpg = os.killpg

    def killpg(pgid: int, sig: int) -> None:
        if sig != 0:
            sent.append(signal.Signals(sig))
        real_killpg(pgid, sig)

    monkeypatch.setattr(os, "killpg", killpg)
    return sent


# --- tree stop -------------------------------------------------------------------------------------


async def test_stop_kills_server_child_and_grandchild(
    tree_script: Path, kill_after: list[int], group_signals: list[signal.Signals]
) -> None:
    async with liveness() as live, anyio.create_task_group() as tg:
        proc = await spawn(tree_spec(tree_script, live.port, "hang", "hang", "hang"), task_group=tg)
        kill_after.append(proc.pgid)
        roles = ("server", "server.child", "server.child.child")
        await live.wait_for(*roles)
        await stop_within_bound(proc)
        await live.wait_dead(*roles)
    assert group_signals == [signal.SIGTERM]  # the SIGTERM was enough: no SIGKILL
    assert proc.returncode == 143
    assert all(b"TERM" in live.peers[role].data for role in roles)


async def test_sh_launcher_and_its_server_both_die(
    tree_script: Path, kill_after: list[int], group_signals: list[signal.Signals]
) -> None:
    async with liveness() as live, anyio.create_task_group() as tg:
        # Like npx/bun run: the launcher does not exec the server, it spawns it and waits.
        script = f'"{sys.executable}" "{tree_script}" {live.port} server hang hang; echo launcher-done'
        spec = SpawnSpec(name="launcher", command="sh", args=["-c", script], env={}, cwd=None)
        proc = await spawn(spec, task_group=tg)
        kill_after.append(proc.pgid)
        await live.wait_for("server", "server.child")
        await stop_within_bound(proc)
        await live.wait_dead("server", "server.child")
    assert group_signals == [signal.SIGTERM]
    assert proc.returncode is not None


async def test_sigterm_ignoring_tree_is_killed_after_the_grace(
    tree_script: Path, kill_after: list[int], group_signals: list[signal.Signals]
) -> None:
    async with liveness() as live, anyio.create_task_group() as tg:
        proc = await spawn(tree_spec(tree_script, live.port, "ignore-term", "ignore-term"), task_group=tg)
        kill_after.append(proc.pgid)
        await live.wait_for("server", "server.child")
        await stop_within_bound(proc)
        await live.wait_dead("server", "server.child")
    # stdin EOF, then SIGTERM, then (both ignored) SIGKILL: the escalation, step by step.
    assert group_signals == [signal.SIGTERM, signal.SIGKILL]
    assert proc.returncode == -signal.SIGKILL


async def test_server_that_exits_on_stdin_eof_gets_no_signal(
    tree_script: Path, kill_after: list[int], group_signals: list[signal.Signals]
) -> None:
    async with liveness() as live, anyio.create_task_group() as tg:
        proc = await spawn(tree_spec(tree_script, live.port, "eof"), task_group=tg)
        kill_after.append(proc.pgid)
        await live.wait_for("server")
        # The exit ended the wait: an hour-long grace never ran out.
        await stop_within_bound(proc, stdin_grace=LONG_GRACE, term_grace=LONG_GRACE)
        await live.wait_dead("server")
    assert proc.returncode == 0
    assert b"TERM" not in live.peers["server"].data
    assert group_signals == []


async def test_children_of_a_leader_that_exited_on_eof_are_terminated(
    tree_script: Path, kill_after: list[int]
) -> None:
    # The SDK sends no signal when the leader exits within the grace; its children then survive.
    async with liveness() as live, anyio.create_task_group() as tg:
        proc = await spawn(tree_spec(tree_script, live.port, "eof", "hang"), task_group=tg)
        kill_after.append(proc.pgid)
        await live.wait_for("server", "server.child")
        await stop_within_bound(proc, stdin_grace=LONG_GRACE, term_grace=GRACE)
        await live.wait_dead("server", "server.child")
    assert proc.returncode == 0
    assert b"TERM" not in live.peers["server"].data
    assert b"TERM" in live.peers["server.child"].data


async def test_group_kill_reaches_the_child_of_a_dead_leader(
    tree_script: Path, kill_after: list[int]
) -> None:
    async with liveness() as live, anyio.create_task_group() as tg:
        proc = await spawn(tree_spec(tree_script, live.port, "exit", "hang"), task_group=tg)
        kill_after.append(proc.pgid)
        await live.wait_for("server", "server.child")
        with anyio.fail_after(HANG_GUARD_S):
            assert await proc.wait() == 0
        assert not live.peers["server.child"].dead.is_set()
        # The leader was already gone: no stdin grace (an hour) to sit out.
        await stop_within_bound(proc, stdin_grace=LONG_GRACE, term_grace=GRACE)
        await live.wait_dead("server.child")
    assert b"TERM" in live.peers["server.child"].data


async def test_second_concurrent_stop_escalates_to_sigkill(
    tree_script: Path, kill_after: list[int], group_signals: list[signal.Signals]
) -> None:
    async with liveness() as live, anyio.create_task_group() as tg:
        proc = await spawn(tree_spec(tree_script, live.port, "ignore-term", "ignore-term"), task_group=tg)
        kill_after.append(proc.pgid)
        await live.wait_for("server", "server.child")
        # Both stops would sit out hour-long graces; the second one's SIGKILL ends the first at once.
        with anyio.fail_after(STOP_BOUND_S):
            async with anyio.create_task_group() as stops:
                stops.start_soon(lambda: proc.stop(stdin_grace=LONG_GRACE, term_grace=LONG_GRACE))
                while not proc.stopping:
                    await anyio.sleep(0.001)
                await proc.stop(stdin_grace=LONG_GRACE, term_grace=LONG_GRACE)
        await live.wait_dead("server", "server.child")
    assert group_signals[0] == signal.SIGKILL  # straight to SIGKILL, no SIGTERM grace first
    assert proc.returncode == -signal.SIGKILL


async def test_stop_completes_even_when_the_caller_is_cancelled(
    tree_script: Path, kill_after: list[int], group_signals: list[signal.Signals]
) -> None:
    async with liveness() as live, anyio.create_task_group() as tg:
        proc = await spawn(tree_spec(tree_script, live.port, "hang", "hang"), task_group=tg)
        kill_after.append(proc.pgid)
        await live.wait_for("server", "server.child")
        with anyio.fail_after(HANG_GUARD_S), anyio.move_on_after(0.01):
            await proc.stop(stdin_grace=GRACE, term_grace=GRACE)
        assert proc.returncode == 143  # reaped before stop() returned, cancellation or not
        await live.wait_dead("server", "server.child")
        sent = list(group_signals)
        await stop_within_bound(proc, stdin_grace=LONG_GRACE, term_grace=LONG_GRACE)  # idempotent
        assert group_signals == sent  # nothing left to do: no signal, no grace


# --- pipes --------------------------------------------------------------------------------------


async def test_stdin_and_stdout_carry_bytes_both_ways() -> None:
    spec = SpawnSpec("cat", "cat", [], {}, None)
    payload = b"".join(b'{"jsonrpc": "2.0", "id": %d}\n' % i for i in range(40_000))  # ~1 MB
    async with anyio.create_task_group() as tg:
        proc = await spawn(spec, task_group=tg)
        received = bytearray()

        async def read_all() -> None:
            with suppress(anyio.EndOfStream):
                while True:
                    received.extend(await proc.stdout.receive())

        with anyio.fail_after(HANG_GUARD_S):
            async with anyio.create_task_group() as io:
                io.start_soon(read_all)
                # Far more than a pipe holds: the writer must wait for the reader, in order.
                await proc.stdin.send(payload)
                await proc.stdin.aclose()
        assert bytes(received) == payload
        with anyio.fail_after(HANG_GUARD_S):
            assert await proc.wait() == 0
        with pytest.raises(anyio.ClosedResourceError):
            await proc.stdin.send(b"late\n")
        await stop_within_bound(proc)
    with pytest.raises(anyio.ClosedResourceError):
        await proc.stdout.receive()
    await proc.stdout.aclose()  # closing twice is harmless


async def test_writing_to_a_server_that_exited_is_a_broken_stream() -> None:
    spec = SpawnSpec("quits", "sh", ["-c", "exit 0"], {}, None)
    async with anyio.create_task_group() as tg:
        proc = await spawn(spec, task_group=tg)
        with anyio.fail_after(HANG_GUARD_S):
            await proc.wait()
            with pytest.raises(anyio.BrokenResourceError):
                await proc.stdin.send(b"x" * 200_000)
            with pytest.raises(anyio.BrokenResourceError):
                await proc.stdin.send(b"y")
        await stop_within_bound(proc)


async def test_server_blocked_writing_stdout_still_sees_stdin_eof() -> None:
    # Nobody reads its stdout: it blocks on a full pipe and only reaches its stdin read (and
    # exits 0) because stop() discards stdout while it waits.
    code = "import sys; sys.stdout.write('x' * 2_000_000); sys.stdout.flush(); sys.stdin.read()"
    spec = SpawnSpec("wedged", sys.executable, ["-c", code], {}, None)
    async with open_process(spec, stdin_grace=LONG_GRACE, term_grace=GRACE) as proc:
        pass
    assert proc.returncode == 0  # its own exit, not the SIGTERM after the stdin grace


async def test_exit_is_noticed_without_pidfd_support(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_module, "open_pidfd", lambda pid: -1)  # as on macOS
    spec = SpawnSpec("five", "sh", ["-c", "exit 5"], {}, None)
    async with open_process(spec) as proc:
        with anyio.fail_after(HANG_GUARD_S):
            assert await proc.wait() == 5
    assert exit_reason(5) == "exited with code 5"


async def test_open_process_stops_the_tree_and_reraises_unwrapped(
    tree_script: Path, kill_after: list[int]
) -> None:
    async with liveness() as live:
        with pytest.raises(KeyError, match="boom"):
            async with open_process(
                tree_spec(tree_script, live.port, "hang", "hang"), stdin_grace=GRACE, term_grace=GRACE
            ) as proc:
                kill_after.append(proc.pgid)
                await live.wait_for("server", "server.child")
                raise KeyError("boom")
        await live.wait_dead("server", "server.child")
    assert proc.returncode == 143


async def test_spawn_into_a_closed_task_group_leaves_nothing_behind(tmp_path: Path) -> None:
    registry = GroupRegistry(tmp_path / "state")
    async with anyio.create_task_group() as finished:
        pass
    children_before = {child.pid for child in psutil.Process().children()}
    fds_before = open_fds()
    with pytest.raises(RuntimeError):
        await spawn(SpawnSpec("late", "sleep", ["1000"], {}, None), task_group=finished, registry=registry)
    assert open_fds() == fds_before
    assert {child.pid for child in psutil.Process().children()} == children_before
    assert not list(registry.directory.glob("*.json"))


# --- fds, environment, spawn errors ----------------------------------------


def is_gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def _cycle(index: int, kill_after: list[int]) -> None:
    # Even cycles: a background grandchild holds the inherited stdout/stderr pipes after the
    # leader exits on stdin EOF. Odd cycles: a plain filter that exits on EOF.
    if index % 2 == 0:
        spec = SpawnSpec("holder", "sh", ["-c", "sleep 1000 & echo $!; read line; exit 0"], {}, None)
    else:
        spec = SpawnSpec("cat", "sh", ["-c", "echo $$; exec cat"], {}, None)
    async with open_process(spec, stdin_grace=LONG_GRACE, term_grace=GRACE) as proc:
        kill_after.append(proc.pgid)
        last_member = int(await read_line(BufferedByteReceiveStream(proc.stdout)))
    assert proc.returncode == 0
    assert is_gone(last_member)
    with pytest.raises(anyio.ClosedResourceError):
        await proc.stdout.receive()


async def test_no_fd_leak_over_twenty_start_stop_cycles(kill_after: list[int]) -> None:
    await _cycle(0, kill_after)  # warm-up: the event loop opens its own fds lazily
    baseline = open_fds()
    for index in range(20):
        await _cycle(index, kill_after)
    assert open_fds() <= baseline


async def test_child_inherits_the_environment_with_overrides_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORBMCP_T_INHERITED", "from-parent")
    monkeypatch.setenv("ORBMCP_T_OVERRIDDEN", "from-parent")
    keys = ["ORBMCP_T_INHERITED", "ORBMCP_T_OVERRIDDEN", "ORBMCP_T_ADDED", "PATH"]
    code = f"import json, os; print(json.dumps([os.getcwd(), {{k: os.environ.get(k) for k in {keys!r}}}]))"
    spec = SpawnSpec(
        name="env",
        command=sys.executable,
        args=["-c", code],
        env={"ORBMCP_T_OVERRIDDEN": "from-config", "ORBMCP_T_ADDED": "added"},
        cwd=str(tmp_path),
    )
    async with open_process(spec, stdin_grace=LONG_GRACE, term_grace=GRACE) as proc:
        cwd, env = json.loads(await read_line(BufferedByteReceiveStream(proc.stdout)))
    assert cwd == str(tmp_path)
    assert env == {
        "ORBMCP_T_INHERITED": "from-parent",
        "ORBMCP_T_OVERRIDDEN": "from-config",
        "ORBMCP_T_ADDED": "added",
        "PATH": os.environ["PATH"],
    }


@pytest.mark.parametrize(
    "case",
    [
        "not-on-path",
        "missing-file",
        "not-executable",
        "not-a-program",
        "missing-cwd",
        "empty",
        "broken-link",
        "broken-link-on-path",
    ],
)
async def test_spawn_failure_is_one_line_and_leaves_nothing_behind(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\necho hi\n")
    plain.chmod(0o644)
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\x01\x02\x03 not a program")
    garbage.chmod(0o755)
    link = tmp_path / "bin" / "orbmcp-linked-xyz"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "uninstalled" / "server")  # a package manager removed its target
    monkeypatch.setenv("PATH", f"{link.parent}{os.pathsep}{os.environ['PATH']}")
    command, cwd = {
        "broken-link": (str(link), None),
        "broken-link-on-path": ("orbmcp-linked-xyz", None),
        "not-on-path": ("orbmcp-no-such-command-xyz", None),
        "missing-file": (str(tmp_path / "absent"), None),
        "not-executable": (str(plain), None),
        "not-a-program": (str(garbage), None),
        "missing-cwd": ("sh", str(tmp_path / "gone")),
        "empty": ("", None),
    }[case]
    broken = f"is a broken symlink to {tmp_path / 'uninstalled' / 'server'} (which does not exist)"
    expected = {
        "broken-link": f"server 'x': command {link} {broken}",
        "broken-link-on-path": f"server 'x': command orbmcp-linked-xyz ({link}) {broken}",
        "not-on-path": "server 'x': command not found: orbmcp-no-such-command-xyz",
        "missing-file": f"server 'x': command not found: {tmp_path / 'absent'}",
        "not-executable": f"server 'x': command is not executable: {plain}",
        "not-a-program": f"server 'x': cannot run command {garbage}: Exec format error",
        "missing-cwd": f"server 'x': cwd does not exist: {tmp_path / 'gone'}",
        "empty": "server 'x': empty command",
    }[case]
    registry = GroupRegistry(tmp_path / "state")
    children_before = {child.pid for child in psutil.Process().children()}
    fds_before = open_fds()
    async with anyio.create_task_group() as tg:
        with pytest.raises(ConnectionFailed) as caught:
            await spawn(SpawnSpec("x", command, [], {}, cwd), task_group=tg, registry=registry)
    assert str(caught.value) == expected
    assert "\n" not in str(caught.value)
    assert caught.value.server == "x"
    not_found = case in ("not-on-path", "missing-file", "broken-link", "broken-link-on-path")
    assert caught.value.reason == ("command_not_found" if not_found else "spawn_failed")
    assert open_fds() == fds_before
    assert {child.pid for child in psutil.Process().children()} == children_before
    assert not registry.directory.exists()  # nothing was recorded


# --- stderr (bounds, redaction, control characters) ----------------------------------------------

FLOOD = textwrap.dedent(
    """
    import sys
    err = sys.stderr.buffer
    block = (b"x" * 999 + b"\\n") * 1024
    for _ in range(50):
        err.write(block)
    err.write(b"y" * 3_000_000 + b"\\n")
    err.write(b"\\x1b[31mfinal\\x1b[0m token=hunter2\\x07\\n")
    err.flush()
    sys.stdout.write("done\\n")
    sys.stdout.flush()
    sys.stdin.buffer.read()
    """
)


async def test_stderr_flood_neither_deadlocks_nor_grows_memory(tmp_path: Path) -> None:
    script = tmp_path / "flood.py"
    script.write_text(FLOOD)
    spec = SpawnSpec("flood", sys.executable, [str(script)], {}, None)
    tracemalloc.start()
    try:
        async with open_process(
            spec,
            redact=lambda s: s.replace("hunter2", "[REDACTED]"),
            stdin_grace=LONG_GRACE,
            term_grace=GRACE,
        ) as proc:
            # The child writes ~53 MB to stderr before its stdout line: without a drain it blocks.
            assert await read_line(BufferedByteReceiveStream(proc.stdout), timeout=60) == b"done"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    lines = proc.stderr_tail.lines()
    assert proc.returncode == 0
    assert peak < 8 * 1024 * 1024
    assert len(lines) == 100
    assert all(len(line) <= 2000 for line in lines)
    assert lines[-2] == "y" * 1999 + "…"
    assert lines[-1] == "final token=[REDACTED]\u2407"  # colours gone; the bell shown, not rung


async def test_stderr_tail_of_a_crashed_server_is_clean_and_redacted() -> None:
    script = (
        r'printf "\033[1mbold\033[0m secret=abc\r\n" >&2; printf "\n\n" >&2; '
        r'printf "10%%\r50%%\r100%%\n" >&2; printf "last words" >&2; exit 3'
    )
    spec = SpawnSpec("crash", "sh", ["-c", script], {}, None)
    async with anyio.create_task_group() as tg:
        proc = await spawn(spec, task_group=tg, redact=lambda s: s.replace("abc", "***"))
        with anyio.fail_after(HANG_GUARD_S):
            assert await proc.wait() == 3
        await stop_within_bound(proc)
    assert proc.stderr_tail.lines() == ["bold secret=***", "100%", "last words"]
    assert exit_reason(3) == "exited with code 3"


def test_stderr_tail_reassembles_chunks_and_bounds_lines() -> None:
    tail = StderrTail(max_lines=4, max_line_chars=10)
    tail.feed(b"first li")
    tail.feed(b"ne\nsecond\nthi")
    tail.feed(b"rd line is much too long\x00\n\xff b\xe2\x80\xaec\n")
    tail.feed(b"\x1b]0;title\x07osc\x1b[0m gone\n\xc2\x9b\tkept tab\n")
    tail.feed(b"partial")
    # orbmcp.text's rules: escape sequences go, a bidi override and a C1 control show as U+FFFD.
    assert tail.lines() == ["third lin\u2026", "\ufffd b\ufffdc", "osc gone", "\ufffd kept tab"]
    tail.flush()
    assert tail.lines() == ["\ufffd b\ufffdc", "osc gone", "\ufffd kept tab", "partial"]
    tail.feed(b"".join(b"%d\n" % i for i in range(1000)))
    assert tail.lines() == ["996", "997", "998", "999"]
    tail.feed(b"z" * 100_000)
    tail.feed(b"z" * 100_000 + b"\n")
    assert tail.lines()[-1] == "z" * 9 + "\u2026"


@pytest.mark.parametrize(
    ("code", "text"),
    [(0, "exited with code 0"), (-signal.SIGKILL, "killed by SIGKILL"), (-200, "killed by signal 200")],
)
def test_exit_reason(code: int, text: str) -> None:
    assert exit_reason(code) == text


# --- registry and reaper ------------------------------------------------------------------------


async def test_registry_records_a_live_group_privately_and_forgets_it_on_stop(
    tree_script: Path, tmp_path: Path, kill_after: list[int]
) -> None:
    state = tmp_path / "state"
    registry = GroupRegistry(state)
    registry.directory.mkdir(parents=True, mode=0o755)
    registry.directory.chmod(0o755)
    async with liveness() as live, anyio.create_task_group() as tg:
        proc = await spawn(tree_spec(tree_script, live.port, "eof"), task_group=tg, registry=registry)
        kill_after.append(proc.pgid)
        [record_path] = list(registry.directory.glob("*.json"))
        record = json.loads(record_path.read_text())
        assert stat.S_IMODE(record_path.stat().st_mode) == 0o600
        assert stat.S_IMODE(registry.directory.stat().st_mode) == 0o700
        assert not list(registry.directory.glob(".*"))  # no temp file left by the atomic write
        assert record["server"] == "tree"
        assert record["pid"] == record["pgid"] == proc.pid
        assert record["create_time"] == psutil.Process(proc.pid).create_time()
        assert record["owner_pid"] == os.getpid()
        await stop_within_bound(proc)
    assert not record_path.exists()


OWNER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import anyio

    from orbmcp.core.processes.spawn import SpawnSpec, spawn
    from orbmcp.core.processes.reaper import GroupRegistry

    async def main():
        state, script, port, mode, *chain = sys.argv[1:]
        spec = SpawnSpec("victim", sys.executable, [script, port, "server", mode, *chain], {}, None)
        async with anyio.create_task_group() as tg:
            await spawn(spec, task_group=tg, registry=GroupRegistry(Path(state)))
            await anyio.sleep_forever()

    anyio.run(main)
    """
)


async def exited(peer: Peer) -> None:
    """Until ``peer`` has finished exiting, not only closed its files.

    Its liveness EOF comes while the kernel is still taking the process down: in that moment it
    is neither a zombie nor gone, so a scan counts it as running and signals it (the reaping test
    failed so once in ~30 full runs). Its pidfd turns readable once the exit is done.
    """
    with anyio.fail_after(HANG_GUARD_S):
        await peer.dead.wait()
        pidfd = open_pidfd(peer.pid)
        if pidfd < 0:  # already reaped (or no pidfds, off Linux)
            return
        try:
            await anyio.wait_readable(pidfd)
        finally:
            os.close(pidfd)


@pytest.mark.parametrize("leader", ["alive", "exited", "ignores-term"])
async def test_reap_stale_kills_the_group_a_crashed_owner_left(
    leader: str, tree_script: Path, tmp_path: Path, kill_after: list[int]
) -> None:
    state = tmp_path / "state"
    owner_script = tmp_path / "owner.py"
    owner_script.write_text(OWNER)
    mode, child_mode = {
        "alive": ("hang", "hang"),
        "exited": ("exit", "hang"),
        "ignores-term": ("ignore-term",) * 2,
    }[leader]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    async with liveness() as live:
        argv = [
            sys.executable,
            str(owner_script),
            str(state),
            str(tree_script),
            str(live.port),
            mode,
            child_mode,
        ]
        owner = await anyio.open_process(argv, env=env, stdin=subprocess.DEVNULL)
        async with owner:
            server, child = await live.wait_for("server", "server.child", timeout=20)
            kill_after.append(server.pid)
            owner.kill()  # the crash: no stop() runs, the group outlives its owner
            with anyio.fail_after(HANG_GUARD_S):
                await owner.wait()
        # A leader that exits by itself, and (Linux) one that takes the parent-death signal
        # (SIGTERM) orbmcp's launcher set for it: either is gone before the next run looks.
        dies_with_owner = leader == "exited" or (leader == "alive" and sys.platform == "linux")
        if dies_with_owner:
            await exited(server)
        assert not child.dead.is_set()
        assert len(list((state / "procs").glob("*.json"))) == 1

        reaped = await anyio.to_thread.run_sync(
            lambda: GroupRegistry(state).reap_stale(term_grace=GRACE, kill_grace=GRACE)
        )
        await live.wait_dead("server", "server.child")
    [group] = reaped
    assert (group.server, group.pgid, group.leader_pid) == ("victim", server.pid, server.pid)
    expected_killed = {child.pid} if dies_with_owner else {server.pid, child.pid}
    assert set(group.killed) == expected_killed
    assert (b"TERM" in child.data) == (leader != "ignores-term")
    assert not list((state / "procs").glob("*.json"))


async def test_reap_stale_never_touches_a_recycled_pid_or_a_live_owner(
    tree_script: Path, tmp_path: Path, kill_after: list[int]
) -> None:
    registry = GroupRegistry(tmp_path / "state")
    dead_owner = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    dead_owner_pid = int(dead_owner.stdout)
    me = psutil.Process()
    async with liveness() as live:
        # An unrelated process in its own group: the record's leader pid now belongs to it.
        bystander = subprocess.Popen(
            [sys.executable, str(tree_script), str(live.port), "server", "hang"], start_new_session=True
        )
        kill_after.append(bystander.pid)
        try:
            await live.wait_for("server")
            real_start = psutil.Process(bystander.pid).create_time()
            recycled = registry.write_record(
                GroupRecord("recycled", bystander.pid, bystander.pid, real_start - 100.0, dead_owner_pid, 1.0)
            )
            # Exactly right about the group, but its owner (this test) is alive: not stale.
            owned = registry.write_record(
                GroupRecord("owned", bystander.pid, bystander.pid, real_start, me.pid, me.create_time())
            )
            reaped = await anyio.to_thread.run_sync(lambda: registry.reap_stale(term_grace=GRACE))
            assert reaped == [ReapedGroup("recycled", bystander.pid, bystander.pid, ())]
            assert not recycled.exists()
            assert owned.exists()
            assert await live.ping("server")  # it would be dead had any signal reached it
            assert bystander.poll() is None
        finally:
            bystander.kill()
            bystander.wait()


def test_process_records_are_not_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A record names live processes, worthless once the machine restarts: spawn, which writes it
    # on the event loop, does not wait for the disk.
    flushed: list[int] = []
    monkeypatch.setattr(os, "fsync", flushed.append)
    path = GroupRegistry(tmp_path / "state").write_record(GroupRecord("s", 100, 100, 1.0, 200, 2.0))
    assert flushed == []
    assert GroupRecord.from_json(json.loads(path.read_text())) == GroupRecord("s", 100, 100, 1.0, 200, 2.0)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_reap_stale_drops_unreadable_records(tmp_path: Path) -> None:
    registry = GroupRegistry(tmp_path / "state")
    registry.directory.mkdir(parents=True)
    (registry.directory / "garbage.json").write_text("{not json")
    (registry.directory / "other.json").write_text(json.dumps({"version": 1, "pid": "x"}))
    crashed_write = registry.directory / ".1-2.json.tmp-1-dead"
    crashed_write.write_text("{")
    os.utime(crashed_write, (time.time() - 7200, time.time() - 7200))
    in_flight = registry.directory / ".1-3.json.tmp-1-live"
    in_flight.write_text("{")
    assert registry.reap_stale() == []
    assert sorted(registry.directory.iterdir()) == [in_flight]
