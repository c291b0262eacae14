"""The suite's one timeout scale (``tests/timeouts.py``)."""

from __future__ import annotations

import pytest

from tests import timeouts


def test_the_scale_is_one_unless_asked_and_a_bad_value_says_what_it_wants() -> None:
    assert timeouts.read_scale({}) == 1.0
    assert timeouts.read_scale({timeouts.SCALE_ENV: " 2.5 "}) == 2.5
    for bad in ("0", "-1", "nan", "inf", "1e9", "fast"):
        with pytest.raises(ValueError, match=f"{timeouts.SCALE_ENV}=.*expected a number above 0"):
            timeouts.read_scale({timeouts.SCALE_ENV: bad})


def test_test_configs_get_the_generous_connect_timeout_unless_they_state_one() -> None:
    servers = {
        "stdio": {"command": "x"},
        "http": {"url": "http://127.0.0.1:1/mcp"},
        "subject": {"command": "x", "timeoutMs": 300},
        "broken": "not an object",
        "empty": {},
    }
    assert timeouts.generous_servers(servers) == {
        "stdio": {"command": "x", "timeoutMs": timeouts.CONNECT_TIMEOUT_MS},
        "http": {"url": "http://127.0.0.1:1/mcp", "timeoutMs": timeouts.CONNECT_TIMEOUT_MS},
        "subject": {"command": "x", "timeoutMs": 300},
        "broken": "not an object",
        "empty": {},
    }
    assert round(timeouts.scaled(60) * 1000) == timeouts.CONNECT_TIMEOUT_MS
