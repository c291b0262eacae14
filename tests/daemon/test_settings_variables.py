"""The ``ORBMCP_*`` settings variables are the client's: a session daemon runs a command only for a
client that states the same ones it runs with; any other line runs one-shot, with its own."""

from __future__ import annotations

import os

import pytest

from tests.core.live import raw_entry
from tests.daemon import Scoped, daemon

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")


def test_a_client_with_other_settings_variables_runs_one_shot(scoped: Scoped) -> None:
    scoped.write({"r": raw_entry()})
    with daemon(scoped):

        def served() -> int:
            return int(scoped.run("daemon", "status", "--json").json()["clientsServed"])

        before = served()
        same = scoped.run("status", "r", "--json")
        assert same.code == 0, same.err
        assert served() == before + 1  # the daemon ran it
        other = scoped.run("status", "r", "--json", ORBMCP_REQUEST_TIMEOUT_MS="1234")
        assert other.code == 0, other.err
        assert served() == before + 1  # declined: it ran one-shot, with the client's setting
        bad = scoped.run("status", "r", ORBMCP_MAX_RETRIES="many")
        assert (bad.code, bad.out) == (3, "")
        assert "ORBMCP_MAX_RETRIES must be an integer from 0 to 10" in bad.err
