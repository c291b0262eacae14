"""Every call test runs on both ``tools/call`` paths (``orbmcp.core.tooling.call_paths``).

The ``call_path`` fixture (registered in ``tests/conftest.py``) is parametrized over "raw" and
"sdk". On "sdk" the raw relay is turned off, so every call takes the SDK's client session. On
"raw" each stdio connection the test makes speaks the 2025 era (``mode="legacy"``, no probe: the
raw relay serves 2025-era sessions, and most SDK-built test servers would otherwise negotiate
2026-07-28), so every call the relay can take goes raw. Which path ran is proven by the paths'
counters, never assumed: at the end of the test every call that reached a path took the one the
test ran on, and at least one did.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orbmcp.core.tooling import call_paths
from orbmcp.core.wire import era

PATHS = ("raw", "sdk")


class PathProbe:
    """Which path the test runs on, and how many calls each path was chosen for since it began."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._start = {path.name: path.taken for path in (call_paths.RAW, call_paths.SDK)}

    def taken(self) -> dict[str, int]:
        return {path.name: path.taken - self._start[path.name] for path in (call_paths.RAW, call_paths.SDK)}

    @property
    def raw(self) -> bool:
        return self.name == "raw"


@pytest.fixture(params=PATHS)
def call_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[PathProbe]:
    name = request.param
    if name == "sdk":
        monkeypatch.setattr(call_paths.RAW, "enabled", False)
    else:
        monkeypatch.setattr(era, "client_mode_for", lambda cached: "legacy")
        monkeypatch.setattr(era, "discover_timeout_for", lambda cached: None)
    probe = PathProbe(name)
    yield probe
    taken = probe.taken()
    other = next(path for path in PATHS if path != name)
    assert taken[other] == 0, f"calls took the {other} path in a test run on the {name} path: {taken}"
    assert taken[name] > 0, f"no call reached the {name} path: {taken}"
