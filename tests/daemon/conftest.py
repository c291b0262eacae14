"""The daemon tests' shared daemon: ``warm`` is a running session daemon that the tests of one
module share, for the tests whose subject is what a running daemon serves (its answers, its
sessions, its clients), not its own start, stop, crash or idle timeout. Starting a daemon (and the
CLI that starts and stops it) per test was most of these files' CPU.

Between tests every server leaves its session (the config emptied and applied), so nothing a test
started, stopped or left waiting reaches the next one; a test that fails stops the daemon, and the
next test gets a new one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon import Scoped, alive, scope_in


@pytest.fixture
def scoped(tmp_path: Path) -> Scoped:
    """A scope of the test's own (its daemon, when it starts one, is its own too)."""
    return scope_in(tmp_path)


@pytest.fixture(scope="module")
def _shared_daemons() -> Iterator[list[Scoped]]:
    held: list[Scoped] = []
    yield held
    for scoped in held:
        scoped.stop()


def _start_shared(tmp_path_factory: pytest.TempPathFactory) -> Scoped:
    base = tmp_path_factory.mktemp("warm")
    project, home = base / "project", base / "home"
    project.mkdir()
    home.mkdir()
    # One home for every client of the shared daemon (the autouse fixture gives each test its own).
    scoped = Scoped(home=base / "agent", project=project)
    scoped.extra_env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    scoped.write({})
    scoped.start()
    return scoped


@pytest.fixture
def warm(
    _shared_daemons: list[Scoped], tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Scoped]:
    """A scope whose daemon is running, shared with the module's other ``warm`` tests."""
    current = _shared_daemons[-1] if _shared_daemons else None
    pid = None if current is None else current.daemon_pid()
    if current is None or pid is None or not alive(pid):
        current = _start_shared(tmp_path_factory)
        _shared_daemons.append(current)
    saved_env = dict(current.extra_env)
    failed = request.session.testsfailed
    yield current
    current.extra_env = saved_env
    if request.session.testsfailed != failed:
        current.stop()
        _shared_daemons.remove(current)
        return
    # Every server leaves the session: what a test stopped, started or left waiting is gone.
    current.write({})
    emptied = current.run("status", "--json")
    assert (emptied.code, emptied.json()) == (0, []), emptied.err
