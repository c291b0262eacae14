"""A server's question during a command the session daemon runs is asked on that client's terminal."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.core.live import stdio_entry
from tests.daemon import Scoped, daemon
from tests.frontends import Pty

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")


def test_the_clients_terminal_is_asked(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    scoped = Scoped(home=tmp_path / "agent", project=project)
    scoped.write({"a": stdio_entry("asks")})
    with daemon(scoped) as info:
        argv = [sys.executable, "-m", "orbmcp", "--project", str(project), "call", "a", "form"]
        pty = Pty(argv, scoped.env())
        try:
            pty.read_until(b"[Y]es, [d]ecline, [c]ancel: ", timeout=60)
            pty.send(b"y\n")
            for text in (b"Ada\n", b"y\n", *([b"\n"] * 11)):
                pty.read_until(b"> ", timeout=60)
                pty.send(text)
            pty.read_until(b"Send? [Y/n]: ", timeout=60)
            pty.send(b"y\n")
            code = pty.wait(60)
        finally:
            pty.close()
        assert code == 0
        result = json.loads(next(x for x in pty.buffer.decode().splitlines() if x.startswith("{")))
        assert result["content"] == {
            "agree": True,
            "color": "green",
            "count": 3,
            "fish": ["f1"],
            "name": "Ada",
        }
        quiet = Pty([*argv[:3], "--no-input", *argv[3:]], scoped.env())
        try:
            assert quiet.wait(60) == 0
        finally:
            quiet.close()
        assert b"[Y]es" not in quiet.buffer and b"declined: not interactive" in quiet.buffer
        status = scoped.run("daemon", "status", "--json").json()
        assert status["pid"] == info["pid"]  # the daemon asked, and its server stays up
        assert status["servers"] == [{"name": "a", "state": "ready"}]
