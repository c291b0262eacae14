"""The pytest plugin (``orbmcp.testing``), run by ``pytester`` against real test servers.

Every inner session runs in a subprocess: in process, pytester drops the modules an inner run
imported when it ends, which would leave this process with two copies of the SDK. The process is
also the point of two checks: which modules a session that never uses the fixtures imports, and
that the servers are gone once pytest has ended (liveness sockets report the death of every
process of the server's tree).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from tests.servers.launch import server_cmd
from tests.timeouts import generous_servers

pytest_plugins = ["pytester"]

# An inner session loads the orbmcp plugin (by its entry point, as a user's does) and anyio, and
# none of this venv's other plugins: xdist, pytest-cov and Hypothesis played no part in these tests
# and cost ~0.7 s of CPU at each inner start. Coverage still measures the inner process (coverage's
# own subprocess patch, pyproject's [tool.coverage.run]).
INNER = (
    "-p", "no:cacheprovider",
    "-p", "no:xdist", "-p", "no:xdist.looponfail", "-p", "no:pytest_cov", "-p", "no:hypothesispytest",
)  # fmt: skip


def _raw(*args: str) -> dict[str, object]:
    command, *argv = server_cmd("raw", "--answer-discover-error", "-32601", *args)
    return {"command": command, "args": argv}


def _everything() -> dict[str, object]:
    command, *argv = server_cmd("everything")
    return {"command": command, "args": argv}


def _config(directory: Path, servers: dict[str, object], name: str = "mcp.json") -> Path:
    path = directory / name
    path.write_text(json.dumps({"mcpServers": generous_servers(servers)}), encoding="utf-8")
    return path


def test_a_smoke_test_in_three_lines(pytester: pytest.Pytester) -> None:
    _config(pytester.path, {"ev": _everything()})
    pytester.makepyfile(
        test_smoke="""
        import pytest

        @pytest.mark.mcp_config("mcp.json")
        def test_add(mcp_call):
            assert mcp_call("ev", "add", a=2, b=3).text() == "5"
        """
    )
    result = pytester.runpytest_subprocess(*INNER)
    result.assert_outcomes(passed=1)


def test_one_server_serves_every_test_and_errors_read_well(pytester: pytest.Pytester, tmp_path: Path) -> None:
    record = tmp_path / "messages.jsonl"
    config = _config(tmp_path, {"r": _raw("--record", str(record)), "ev": _everything()}, "servers.json")
    pytester.makepyfile(
        test_many="""
        import pytest
        from orbmcp.testing import ToolCallFailed

        def test_first(mcp_call):
            assert mcp_call("r", "echo", text="one").text() == "one"

        def test_second(mcp_servers):
            assert mcp_servers.servers == ["r", "ev"]
            assert mcp_servers.start("r") == "ready"
            assert [t.name for t in mcp_servers.tools("r")] == ["echo", "never"]
            assert mcp_servers.call("r", "echo", {"text": "two"}).text() == "two"

        def test_an_error_result(mcp_call, mcp_servers):
            with pytest.raises(ToolCallFailed, match="ev/fail returned an error: .*boom"):
                mcp_call("ev", "fail", message="boom")
            assert mcp_servers.call("ev", "fail", {"message": "x"}, allow_error=True).is_error
            # The message pytest prints: the server's terminal sequences are not passed on.
            with pytest.raises(ToolCallFailed) as failed:
                mcp_call("ev", "fail", message="boom\\x1b]0;pwned\\x07\\x1b[31mred\\rover")
            assert "\\x1b" not in str(failed.value) and "\\r" not in str(failed.value)
            assert "boom" in str(failed.value) and "red" in str(failed.value)

        def test_an_unknown_server_names_it(mcp_call):
            mcp_call("nope", "echo")
        """
    )
    result = pytester.runpytest_subprocess(*INNER, f"--mcp-config={config}")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*unknown server 'nope'*"])
    initializes = [
        m for m in map(json.loads, record.read_text().splitlines()) if m.get("method") == "initialize"
    ]
    assert len(initializes) == 1  # one connection shared by every test of the session


def test_the_ini_option_and_the_nearest_marker(pytester: pytest.Pytester) -> None:
    _config(pytester.path, {"from-ini": _everything()}, "ini.json")
    (pytester.path / "sub").mkdir()
    _config(pytester.path / "sub", {"from-marker": _everything()})
    pytester.makeini("[pytest]\nmcp_config = ini.json\n")
    pytester.makepyfile(
        **{
            "sub/test_marked": """
            import pytest

            pytestmark = pytest.mark.mcp_config("mcp.json")

            def test_marker_wins(mcp_servers):
                assert mcp_servers.servers == ["from-marker"]
            """,
            "test_ini": """
            def test_ini(mcp_servers):
                assert mcp_servers.servers == ["from-ini"]

            import pytest

            @pytest.mark.mcp_config
            def test_a_marker_without_a_path(mcp_servers):
                pass
            """,
        }
    )
    result = pytester.runpytest_subprocess(*INNER)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*mcp_config needs the config file's path*"])


def test_the_plugin_is_inactive_until_used_and_stops_what_it_started(pytester: pytest.Pytester) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)
    host, port = listener.getsockname()
    _config(pytester.path, {"r": _raw("--liveness", f"{host}:{port}", "--spawn-child")})
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_nothing_heavy_is_loaded():
            assert not {"mcp", "httpx2", "orbmcp.core", "orbmcp.config", "orbmcp.testing.session"} & set(sys.modules)
        """,
        test_uses="""
        import pytest

        @pytest.mark.mcp_config("mcp.json")
        def test_call(mcp_call):
            assert mcp_call("r", "echo", text="x").text() == "x"
        """,
    )
    plain = pytester.runpytest_subprocess(*INNER, "test_plain.py")
    plain.assert_outcomes(passed=1)
    used = pytester.runpytest_subprocess(*INNER, "test_uses.py")
    used.assert_outcomes(passed=1)
    try:
        for _ in range(2):  # the server and its child registered; both are gone now: EOF
            conn, _addr = listener.accept()
            with conn:
                conn.settimeout(60)
                received = b""
                while chunk := conn.recv(4096):
                    received += chunk
                assert received.endswith(b"\n")
    finally:
        listener.close()
    assert sys.executable


def test_a_marker_names_one_server_by_its_command(pytester: pytest.Pytester) -> None:
    command = " ".join(server_cmd("everything"))
    pytester.makepyfile(
        test_adhoc=f"""
        import pytest

        @pytest.mark.mcp_server({command!r})
        def test_echo(mcp_call, mcp_servers):
            assert mcp_servers.servers == ["everything"]
            assert mcp_call("everything", "echo", text="hi").text() == "hi"

        @pytest.mark.mcp_server({command!r}, name="ev", env={{"ADHOC_VALUE": "from-the-marker"}})
        def test_named_with_env(mcp_call):
            assert mcp_call("ev", "env", name="ADHOC_VALUE").text() == "from-the-marker"

        @pytest.mark.mcp_server("")
        def test_empty(mcp_servers):
            pass

        @pytest.mark.mcp_server("ftp://nowhere", transport="sse")
        def test_bad_url(mcp_servers):
            pass
        """
    )
    result = pytester.runpytest_subprocess(*INNER)
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(["*mcp_server needs the server's command line or URL*"])
    result.stdout.fnmatch_lines(["*mcp_server: --sse 'ftp://nowhere': expected an http:// or https:// URL*"])
