"""The user's own input is bounded too: ``call -`` and ``k=@FILE`` read in chunks up to
``ORBMCP_MAX_INPUT_MIB`` (16 MiB by default), refuse more with exit 2, and a read that never ends
does not keep SIGTERM from ending the command."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from orbmcp import environment
from orbmcp.commands import bounded_input as arguments
from tests.cli import run_cli
from tests.core.live import raw_entry, write_config
from tests.timeouts import HANG_GUARD_S

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "mcp.json", {"r": raw_entry()})


def test_the_limit_is_16_mib_unless_the_environment_says_otherwise() -> None:
    assert environment.max_input_bytes({}) == 16 * 1024 * 1024
    assert environment.max_input_bytes({"ORBMCP_MAX_INPUT_MIB": "64"}) == 64 * 1024 * 1024
    for bad in ("0", "-1", "1e3", "lots", "5000"):
        assert environment.max_input_bytes({"ORBMCP_MAX_INPUT_MIB": bad}) == 16 * 1024 * 1024


def test_stdin_over_the_limit_is_exit_2(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORBMCP_MAX_INPUT_MIB", "1")
    body = '{"text": "' + "x" * (1024 * 1024) + '"}'
    result = run_cli("--config", str(config), "call", "r", "echo", "-", "--json", stdin=body)
    assert result.code == 2, result.stderr
    assert "stdin ('-') is larger than 1 MiB" in result.stderr and "ORBMCP_MAX_INPUT_MIB" in result.stderr
    fits = run_cli("--config", str(config), "call", "r", "echo", "-", stdin='{"text": "small"}')
    assert (fits.code, fits.stdout) == (0, "small\n")


def test_an_endless_file_argument_is_read_only_up_to_the_limit(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORBMCP_MAX_INPUT_MIB", "1")
    read_sizes: list[int] = []
    real = arguments.read_limited

    def counting(read, limit, stop=None):  # type: ignore[no-untyped-def]
        data = real(read, limit, stop)
        read_sizes.append(len(data))
        return data

    monkeypatch.setattr(arguments, "read_limited", counting)
    result = run_cli("--config", str(config), "call", "r", "echo", "text=@/dev/zero")
    assert result.code == 2
    assert "argument 'text': file '/dev/zero' is larger than 1 MiB" in result.stderr
    assert read_sizes == [1024 * 1024 + 1]  # one byte past the limit, never the rest


def test_a_large_regular_file_is_refused_by_its_size_without_reading(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)  # sparse
    monkeypatch.setattr(
        arguments, "read_limited", lambda *a: pytest.fail("read a file known to be too large")
    )
    result = run_cli("--config", str(config), "call", "r", "echo", f"text:=@{big}")
    assert result.code == 2 and "is larger than 16 MiB" in result.stderr


def test_file_arguments_are_found_as_the_parser_reads_them() -> None:
    tokens = ["a=@x", "b:=@y", "c=@@literal", "d:=@@z", "e=@", "-", "plain=v", "f=@x"]
    assert arguments.file_arguments(tokens) == {"x": "a", "y": "b", "@z": "d"}


def _limited_child() -> None:
    # A repro that ate 24 GB before the cap: inside a 2 GiB address space it cannot hurt CI.
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def cli_process(config: Path, *args: str, stdin: int | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ORBMCP_CONFIG": str(config), "ORBMCP_NO_DAEMON": "1", "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "orbmcp", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=env,
        preexec_fn=_limited_child,
    )


def test_stdin_from_dev_zero_stops_at_the_limit_in_a_real_process(config: Path) -> None:
    with open("/dev/zero", "rb") as zero:
        proc = cli_process(config, "call", "r", "echo", "-", stdin=zero.fileno())
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 2, err
    assert b"stdin ('-') is larger than 16 MiB" in err


@pytest.mark.parametrize("source", ["stdin", "fifo"])
async def test_sigterm_ends_a_command_blocked_reading_its_input(
    config: Path, tmp_path: Path, source: str
) -> None:
    read_end, write_end = os.pipe()  # the writer never writes and never closes
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody ever opens it for writing
    args = ["-"] if source == "stdin" else [f"text=@{fifo}"]
    waits = ("pipe_read",) if source == "stdin" else ("wait_for_partner", "fifo_open")
    proc = cli_process(config, "call", "r", "echo", *args, stdin=read_end)
    os.close(read_end)
    try:
        # Signalled once a thread of it sleeps in that read (its wait channel says so), so the
        # test is about a blocked read and not a command that had not started yet.
        with anyio.fail_after(HANG_GUARD_S):
            while not _blocked_in(proc.pid, waits):
                await anyio.sleep(0.02)
            proc.send_signal(signal.SIGTERM)
            while proc.poll() is None:
                await anyio.sleep(0.02)
        assert proc.stderr is not None
        err = proc.stderr.read()
    finally:
        os.close(write_end)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err == b"orbmcp: error: interrupted by SIGTERM; every server was stopped\n"


def _blocked_in(pid: int, waits: tuple[str, ...]) -> bool:
    """Some thread of ``pid`` sleeps in one of these kernel functions (its wait channel)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/wchan") as handle:
                if handle.read().endswith(waits):
                    return True
        except OSError:
            continue
    return False
