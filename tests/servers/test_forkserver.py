"""The fork server the suite starts its SDK-built test servers through (``forkserver.py``,
``sdk_site.start()``): the server is a fork behind a stand-in that keeps the client's view of a
process of its own (its pipes, its signals, its exit status, its death)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest

from tests.daemon import alive, wait_for
from tests.servers.launch import FORKSERVER_ENV, server_cmd, start_forkserver
from tests.timeouts import HANG_GUARD_S

pytestmark = pytest.mark.skipif(
    not hasattr(os, "pidfd_open"), reason="the fork server's minder needs pidfd_open (Linux 5.3+)"
)


@pytest.fixture(scope="module")
def forkserver() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    process, socket_path = start_forkserver()
    wait_for(lambda: os.path.exists(socket_path), what="the fork server to listen")
    yield process, socket_path
    assert process.stdin is not None
    process.stdin.close()  # its end
    assert process.wait(HANG_GUARD_S) == 0
    assert not os.path.exists(socket_path)


class Stdio:
    """``everything.py`` started as a client starts it, spoken to in JSON-RPC lines."""

    def __init__(self, markers: Path, socket_path: str) -> None:
        env = {**os.environ, FORKSERVER_ENV: socket_path, "ORB_TEST_MARKER_DIR": str(markers)}
        self.proc = subprocess.Popen(
            server_cmd("everything"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self.markers = markers
        self.ids = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed stdout"
            message = json.loads(line)
            if message.get("id") == self.ids:
                return dict(message)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def server_pid(self) -> int:
        """The pid of the process that runs the server's tools."""
        info = {"name": "t", "version": "1"}
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        done = self.request("tools/call", {"name": "sleep", "arguments": {"seconds": 0}})
        assert "result" in done, done
        return int((self.markers / "sleep-started").read_text())


def test_the_server_is_a_fork_behind_its_stand_in_and_ends_on_eof(
    forkserver: tuple[subprocess.Popen[bytes], str], tmp_path: Path
) -> None:
    server = Stdio(tmp_path, forkserver[1])
    pid = server.server_pid()
    assert pid != server.proc.pid
    assert psutil.Process(pid).parent().parent().pid == forkserver[0].pid  # fork server -> minder -> server
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert server.proc.wait(HANG_GUARD_S) == 0
    wait_for(lambda: not alive(pid), what="the server to end")


def test_a_signal_goes_to_the_server_and_the_stand_in_ends_by_it(
    forkserver: tuple[subprocess.Popen[bytes], str], tmp_path: Path
) -> None:
    server = Stdio(tmp_path, forkserver[1])
    pid = server.server_pid()
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(HANG_GUARD_S) == -signal.SIGTERM
    assert not alive(pid)  # the stand-in ended only after its server


def test_a_killed_stand_in_takes_its_server_along(
    forkserver: tuple[subprocess.Popen[bytes], str], tmp_path: Path
) -> None:
    server = Stdio(tmp_path, forkserver[1])
    pid = server.server_pid()
    server.proc.kill()
    server.proc.wait(HANG_GUARD_S)
    wait_for(lambda: not alive(pid), what="the server of a killed stand-in to end")


def test_with_no_fork_server_listening_the_server_runs_in_its_own_process(tmp_path: Path) -> None:
    server = Stdio(tmp_path, str(tmp_path / "no-such-socket"))
    assert server.server_pid() == server.proc.pid
    server.proc.kill()
    server.proc.wait(HANG_GUARD_S)
