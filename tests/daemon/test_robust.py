"""The session daemon under large answers, careless and hostile clients, and config changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orbmcp.daemon import protocol
from tests.core.live import raw_entry
from tests.daemon import Scoped, daemon

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")


@pytest.fixture
def scoped(tmp_path: Path) -> Scoped:
    project = tmp_path / "project"
    project.mkdir()
    return Scoped(home=tmp_path / "agent", project=project)


def test_output_larger_than_a_frame_is_printed_whole(scoped: Scoped) -> None:
    # 11 M characters with quotes, backslashes, newlines and non-ASCII: the `--json` answer as one
    # frame would be over the frame limit, yet what one-shot prints the daemon prints, byte for byte.
    scoped.write({"r": raw_entry("--big-tool")})
    lines = [("--json", "call", "r", "big", "size=11000000"), ("call", "r", "big", "size=11000000")]
    cold = {line: scoped.run("--no-daemon", *line) for line in lines}
    as_one_frame = json.dumps({"t": "out", "data": cold[lines[0]].out}, ensure_ascii=False).encode()
    assert cold[lines[0]].code == 0 and len(as_one_frame) > protocol.MAX_FRAME
    with daemon(scoped):
        for line in lines:
            warm = scoped.run(*line)
            assert (warm.code, warm.err) == (cold[line].code, cold[line].err), line
            assert warm.out == cold[line].out, line
