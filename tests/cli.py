"""The CLI run in-process, for tests: ``run_cli("status", "--json")`` -> ``CliResult``.

``orbmcp.fastpath.entry.run`` never exits the process, so a test can run a whole command line in
the test's interpreter: no interpreter start, no second SDK import. For the length of the run the
helper swaps in the command's environment, working directory and standard streams (stdin a pipe
that is at EOF after ``stdin``; stdout and stderr pipes that are not terminals), and afterwards
restores them and the process-wide state a run leaves behind: the debug-log configuration and its
handlers, the signal handlers, the garbage collector's settings, the switch interval and the
warning filters. (The SDK's loggers stay quietened, as they would for the rest of a real process.)

Call it from a synchronous test: connecting commands run their own event loop (``anyio.run``) and
listen for signals, which only the main thread can do. Tests where the process itself is the point
(signals, closed pipes, a terminal, exit-time behaviour, which modules a start-up imports) start a
real ``python -m orbmcp`` instead.
"""

from __future__ import annotations

import gc
import io
import json
import logging
import os
import signal
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from orbmcp import log as orb_log
from orbmcp.fastpath import entry as cli
from tests.timeouts import scaled

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# A command line that never returns fails its test after this long (longer than any timeout a
# test config sets, 60 s on the suite's scale) instead of hanging the whole run.
RUN_BOUND_S = scaled(120.0)


class CliTimedOut(BaseException):
    """Raised into a run that outlived its bound. A BaseException, so that the CLI's own error
    boundary, which turns every Exception into exit status 70, lets it through."""


@dataclass(frozen=True)
class CliResult:
    """What one command line did: its exit status and everything it wrote."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    stdin: str | TextIO = "",
    timeout: float = RUN_BOUND_S,
) -> CliResult:
    """Run ``orbmcp ARGS`` in this process and return its status and output.

    ``env`` is the command's whole environment (as for a subprocess); by default the test's own
    (with its isolated ``ORB_AGENT_DIR``). ``cwd`` defaults to the current directory. ``stdin`` is
    what the command reads, or a stream that answers its prompts (it may look at what the command
    wrote so far: ``sys.stderr.buffer.getvalue()`` during the run). A run that takes longer than
    ``timeout`` seconds raises ``CliTimedOut``.
    """
    out, err = _pipe(b""), _pipe(b"")
    given = _pipe(stdin.encode()) if isinstance(stdin, str) else stdin
    with _command_environment(env), _working_directory(cwd), _process_state_restored():
        with _standard_streams(given, out, err), _bounded(timeout, args):
            code = cli.run(list(args))
    return CliResult(code, _text(out), _text(err))


@contextmanager
def _bounded(seconds: float, args: tuple[str, ...]) -> Iterator[None]:
    """SIGALRM after ``seconds`` raises ``CliTimedOut`` in the run (the main thread)."""

    def expired(signum: int, frame: object) -> None:
        raise CliTimedOut(f"orbmcp {' '.join(args)} did not return within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _pipe(data: bytes) -> io.TextIOWrapper:
    """A text stream like a pipe's: UTF-8, not a terminal, no file descriptor."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    return raw.getvalue().decode("utf-8", errors="replace")


@contextmanager
def _command_environment(env: Mapping[str, str] | None) -> Iterator[None]:
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _working_directory(cwd: Path | str | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


@contextmanager
def _standard_streams(stdin: TextIO, stdout: TextIO, stderr: TextIO) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


@contextmanager
def _process_state_restored() -> Iterator[None]:
    """Whatever one run changes process-wide is put back, so runs cannot leak into each other."""
    handlers = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    gc_enabled, gc_thresholds, switch_interval = gc.isenabled(), gc.get_threshold(), sys.getswitchinterval()
    orbmcp_logger = logging.getLogger(orb_log.ROOT_LOGGER)
    orbmcp_handlers, orbmcp_level = list(orbmcp_logger.handlers), orbmcp_logger.level
    log_state = orb_log._state
    # A fresh debug-log configuration: the run points it at its own global dir, as a new process does.
    orb_log._state = orb_log._State()
    try:
        with warnings.catch_warnings():
            yield
    finally:
        orb_log._state = log_state
        orbmcp_logger.handlers[:] = orbmcp_handlers
        orbmcp_logger.setLevel(orbmcp_level)
        for sig, handler in handlers.items():
            if handler is not None:
                signal.signal(sig, handler)
        sys.setswitchinterval(switch_interval)
        # The SDK import freezes what it built (gc.freeze); that is harmless to keep.
        gc.set_threshold(*gc_thresholds)
        if gc_enabled:
            gc.enable()
