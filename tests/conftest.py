"""Test isolation: every test gets its own global dir and home; nothing touches the real ~/.orb,
and no other MCP client's real config (~/.cursor, ~/.claude.json, ...) is ever read.

Also: the session starts ruff and mypy in the background (``tests/quality.py``) when the quality
tests are part of the run, and Hypothesis judges examples by what they do, never by how long they
took (its per-example deadline and slow-data health check are wall-clock judgements), on the same
examples every run.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from orbmcp import environment, log
from tests import quality
from tests.core.paths import call_path  # noqa: F401  (the fixture every call test runs on: both call paths)
from tests.servers import launch, npm

if TYPE_CHECKING:  # the SDK: imported by the tests that use it, not by xdist's controller
    from tests.memory import MemoryTransport

# npm keeps its cache under the home directory; tests that install Node packages keep the real one.
_NPM_CACHE = str(Path.home() / ".npm")
# The npm servers' install (tests/servers/npm.py) is shared by every test and every run: named
# from the real home now, before each test gets a home of its own (it would otherwise be
# installed again, ~6 s, for every test that uses one).
os.environ.setdefault(npm.CACHE_ENV, str(npm.default_cache_dir()))

# Derandomized: every run (CI's included) tries the same examples, so a failure is reproducible and
# a green run means the same thing each time.
settings.register_profile(
    "orbmcp", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile("orbmcp")

_QUALITY_TESTS = quality.ROOT / "tests" / "test_quality.py"
_quality_procs: list[subprocess.Popen[bytes]] = []
_quality_dir: Path | None = None


def _runs_quality_tests(config: pytest.Config) -> bool:
    """Whether this session's selection can include tests/test_quality.py (its tests carry no
    marker and no keyword filter is set); if in doubt, yes."""
    if config.option.keyword:
        return False
    markexpr = config.option.markexpr
    if markexpr:
        try:
            from _pytest.mark.expression import Expression

            if not Expression.compile(markexpr).evaluate(lambda name, **kwargs: False):
                return False
        except Exception:
            pass
    base = config.invocation_params.dir
    paths = [(base / arg.split("::", 1)[0]).resolve() for arg in config.args] or [_QUALITY_TESTS.parent]
    return any(path == _QUALITY_TESTS or path in _QUALITY_TESTS.parents for path in paths)


def pytest_sessionstart(session: pytest.Session) -> None:
    global _quality_dir
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        # Where tests run: the SDK-built test servers start as forks of one process that imported
        # the SDK once (tests/servers/forkserver.py), ~0.7 s less CPU per server start.
        launch.use_forkserver()
    # Only the process that runs the session does this: not each pytest-xdist worker.
    if hasattr(config, "workerinput"):
        return
    _compile_bytecode()
    if not _runs_quality_tests(config):
        return
    _quality_dir = Path(tempfile.mkdtemp(prefix="orbmcp-quality-"))
    _quality_procs.extend(quality.start(_quality_dir))


def _compile_bytecode() -> None:
    """Write the bytecode of orbmcp and the tests once, before any worker or subprocess imports
    them. With ``PYTHONDONTWRITEBYTECODE`` set (as in some CI images) nothing writes it on import,
    and each of the suite's ~300 orbmcp processes compiled its modules from source again (~0.15 s
    of CPU each); with it unset this only checks timestamps."""
    for package in (quality.ROOT / "orbmcp", quality.ROOT / "tests"):
        compileall.compile_dir(package, quiet=2)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Collect with pytest's cache of assertion-rewritten test modules written, whatever
    ``PYTHONDONTWRITEBYTECODE`` says. pytest rewrites the asserts of every test module it imports
    and only writes the result when bytecode may be written (it reads it either way): with the
    variable set, each xdist worker rewrote all ~150 test modules again every run (~4 s of CPU per
    process, half of its collection). The cache sits beside the bytecode ``_compile_bytecode``
    writes; pytest writes it atomically, so workers collecting at once do not clash."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = saved


def pytest_unconfigure(config: pytest.Config) -> None:
    quality.stop(_quality_procs)
    if _quality_dir is not None:
        shutil.rmtree(_quality_dir, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated_agent_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    agent = tmp_path_factory.mktemp("agent-home") / "agent"
    monkeypatch.setenv("ORB_AGENT_DIR", str(agent))
    # Other clients' config files are found from the home dir and these variables: an empty home
    # of the test's own, so a developer's real ~/.cursor/mcp.json never becomes a test's input.
    home = agent.parent / "home"
    home.mkdir()
    monkeypatch.setenv(environment.HOME, str(home))
    monkeypatch.setenv(environment.XDG_CONFIG_HOME, str(home / ".config"))
    for name in (environment.APPDATA, environment.PI_AGENT_DIR, environment.CODEX_HOME):
        monkeypatch.delenv(name, raising=False)
    if "npm_config_cache" not in os.environ:
        monkeypatch.setenv("npm_config_cache", _NPM_CACHE)
    # The suite behaves the same on a developer's terminal and in a CI job: none of orbmcp's own
    # variables (CI, NO_COLOR, GITHUB_STEP_SUMMARY, ORBMCP_NO_DAEMON, ...) leaks in from the outer
    # environment into a test or the processes it starts; a test that wants one sets it.
    for name in environment.VARIABLES:
        if name != environment.GLOBAL_DIR:
            monkeypatch.delenv(name, raising=False)
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)  # rich's: the width and colours a test expects
    # The debug log is configured once per process; each test starts unconfigured, as a new
    # process does, so one test's log directory or ORBMCP_DEBUG never carries over to the next.
    monkeypatch.setattr(log, "_state", log._State())
    yield agent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def in_memory() -> Iterator[MemoryTransport]:
    """Config entries of ``tests.memory.memory_entry`` connect to SDK servers in this event loop;
    the ``MemoryTransport``, whose ``opened`` lists the in-memory servers this test opened."""
    from tests.memory import installed

    with installed() as transport:
        yield transport
