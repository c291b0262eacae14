"""Test isolation: every test gets its own global dir; nothing touches the real ~/.orb."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orbmcp import log


@pytest.fixture(autouse=True)
def _isolated_agent_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    agent = tmp_path_factory.mktemp("agent-home") / "agent"
    monkeypatch.setenv("ORB_AGENT_DIR", str(agent))
    monkeypatch.delenv("ORBMCP_CONFIG", raising=False)
    monkeypatch.delenv("ORBMCP_DEBUG", raising=False)
    monkeypatch.delenv("ORBMCP_PROJECT", raising=False)
    # The debug log is configured once per process; each test starts unconfigured, as a new
    # process does, so one test's log directory or ORBMCP_DEBUG never carries over to the next.
    monkeypatch.setattr(log, "_state", log._State())
    yield agent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
