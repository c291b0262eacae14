"""The debug log: off means nothing on disk; on means a private, capped, redacted JSON Lines file."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from orbmcp import log

TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    # Module state is process-wide; each test starts unconfigured and the old state comes back after.
    monkeypatch.setattr(log, "_state", log._State())


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def enable(global_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ORBMCP_DEBUG", "1")
    log.configure(global_dir)
    return global_dir / "logs" / "orbmcp.log"


def test_off_by_default_creates_nothing(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    log.configure(agent)
    log.log_event("server.state", server="s", message="m")
    assert not log.is_enabled()
    assert not agent.exists()


def test_unconfigured_reads_the_environment_and_stays_off(_isolated_agent_dir: Path) -> None:
    log.log_event("server.state", server="s")
    assert not log.is_enabled()
    assert not _isolated_agent_dir.exists()


def test_loading_the_config_points_the_log_at_the_global_dir(
    _isolated_agent_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from orbmcp.config.loader import load_config

    monkeypatch.setenv("ORBMCP_DEBUG", "yes")
    log.log_event("server.state", server="before")  # nobody said where yet: nothing is written
    load_config(cwd=tmp_path)
    log.log_event("server.state", server="s")
    assert records(_isolated_agent_dir / "logs" / "orbmcp.log")[0]["server"] == "s"


@pytest.mark.parametrize(("value", "on"), [("1", True), ("true", True), (" YES ", True), ("On", True),
                                           ("0", False), ("false", False), ("", False), ("no", False)])  # fmt: skip
def test_debug_variable_values(value: str, on: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORBMCP_DEBUG", value)
    log.configure(tmp_path / "agent")
    assert log.is_enabled() is on


def test_explicit_enabled_overrides_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORBMCP_DEBUG", "1")
    log.configure(tmp_path / "agent", enabled=False)
    log.log_event("x")
    assert not (tmp_path / "agent").exists()
    log.configure(tmp_path / "agent", enabled=True)
    log.log_event("x")
    assert (tmp_path / "agent" / "logs" / "orbmcp.log").exists()


def test_record_shape_and_allow_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = enable(tmp_path / "agent", monkeypatch)
    log.log_event(
        "server.state",
        server="github",
        message="Server github state starting -> ready",
        from_="starting",
        to="ready",
        ms=412,
        attempt=2,
        tools=["a", "b"],
        token="tok-should-not-appear",
        headers={"X": "y"},
        env={"GITHUB_TOKEN": "gh-secret-value"},
    )
    log.log_event("bare")
    first, second = records(path)
    assert set(first) == {"ts", "level", "event", "server", "message", "from", "to", "ms", "attempt", "tools"}
    assert TS.match(str(first["ts"]))
    assert first["level"] == "info"
    assert first["event"] == "server.state"
    assert first["from"] == "starting" and first["to"] == "ready" and first["ms"] == 412
    assert first["tools"] == ["a", "b"]
    assert second == {"ts": second["ts"], "level": "info", "event": "bare", "server": None, "message": None}
    text = path.read_text()
    assert "tok-should-not-appear" not in text and "gh-secret-value" not in text


def test_private_modes_even_with_umask_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = enable(tmp_path / "agent", monkeypatch)
    old = os.umask(0)
    try:
        log.log_event("x")
    finally:
        os.umask(old)
    assert mode(path.parent) == 0o700
    assert mode(path.parent.parent) == 0o700  # the global dir, created here
    assert mode(path) == 0o600


def test_existing_loose_modes_are_tightened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = tmp_path / "agent" / "logs"
    logs.mkdir(parents=True)
    logs.chmod(0o755)
    (logs / "orbmcp.log").write_text("")
    (logs / "orbmcp.log").chmod(0o644)
    path = enable(tmp_path / "agent", monkeypatch)
    log.log_event("x")
    assert mode(logs) == 0o700
    assert mode(path) == 0o600
    assert len(records(path)) == 1


def test_every_string_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = enable(tmp_path / "agent", monkeypatch)
    log.log_event(
        "auth.refresh",
        level="warn",
        server="s",
        message="sent Authorization: Bearer SECRETbearer123 and refresh_token=SECRETrefresh456",
        url="https://user:SECRETpw789@as.example/token?code=SECRETcode000&q=ok",
        error=RuntimeError("client_secret=SECRETclient111"),
        reason={"access_token": "SECRETaccess222", "note": "fine"},
        tools=["password=SECRETtool333"],
        code="SECRETcodeSplxlOBeZQQYbYS6",
    )
    log.log_event("tool.error", code="invalid_params", status="error")
    text = path.read_text()
    assert "SECRET" not in text
    record, plain = records(path)
    assert (plain["code"], plain["status"]) == ("invalid_params", "error")
    assert record["code"] == "<redacted>"
    assert record["level"] == "warn"
    assert record["url"] == "https://<redacted>:<redacted>@as.example/token?code=<redacted>&q=ok"
    assert record["error"] == "RuntimeError: client_secret=<redacted>"
    assert record["reason"] == {"access_token": "<redacted>", "note": "fine"}


@pytest.mark.parametrize("field", ["server", "message", "reason"])
def test_injected_newlines_stay_inside_one_record(
    field: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = enable(tmp_path / "agent", monkeypatch)
    evil = 'evil\n{"forged":1}\r\n2026-01-01 INFO forged\u2028\x85\x1b[2J'
    log.log_event("server.stderr", **{field: evil})
    raw = path.read_bytes()
    assert raw.count(b"\n") == 1 and raw.endswith(b"\n")
    assert b"\r" not in raw and raw.isascii()
    assert len(path.read_text().splitlines()) == 1
    (record,) = records(path)
    assert record[field] == evil
    assert "forged" not in record


def test_rotates_at_the_limit_keeping_one_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log, "MAX_BYTES", 2000)
    path = enable(tmp_path / "agent", monkeypatch)
    for i in range(60):
        log.log_event("tick", message="x" * 100, count=i)
    backup = path.with_name("orbmcp.log.1")
    assert backup.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == ["orbmcp.log", "orbmcp.log.1", "orbmcp.log.lock"]
    assert path.stat().st_size <= 2000 and backup.stat().st_size <= 2000
    assert mode(backup) == 0o600
    current, previous = records(path), records(backup)
    assert current[-1]["count"] == 59
    # The backup holds the records written just before the current file started.
    assert previous[-1]["count"] == int(str(current[0]["count"])) - 1


def test_unwritable_location_never_raises_and_disables_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent"
    agent.write_text("a file where the directory should be")
    enable(agent, monkeypatch)
    log.log_event("x", message="m")
    assert not log.is_enabled()
    agent.unlink()
    log.log_event("y")  # would succeed now, but the process gave up after the first failure
    assert not agent.exists()


def test_symlinked_log_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    logs = tmp_path / "agent" / "logs"
    logs.mkdir(parents=True, mode=0o700)
    (logs / "orbmcp.log").symlink_to(victim)
    enable(tmp_path / "agent", monkeypatch)
    log.log_event("x", message="m")
    assert victim.read_text() == "precious"
    assert not log.is_enabled()


def test_symlinked_logs_dir_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "logs").symlink_to(elsewhere)
    enable(tmp_path / "agent", monkeypatch)
    log.log_event("x")
    assert list(elsewhere.iterdir()) == []


def test_concurrent_writers_produce_whole_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = enable(tmp_path / "agent", monkeypatch)

    def write(n: int) -> None:
        for i in range(100):
            log.log_event("tick", server=f"s{n}", count=i, message="y" * 50)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    got = records(path)
    assert len(got) == 800
    assert {(r["server"], r["count"]) for r in got} == {(f"s{n}", i) for n in range(8) for i in range(100)}


def test_disabled_log_does_no_formatting_and_is_cheap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log.configure(tmp_path / "agent", enabled=False)

    class Loud:
        def __str__(self) -> str:
            raise AssertionError("formatted while disabled")

    def untouched(*args: object, **kwargs: object) -> None:
        raise AssertionError("the disabled log reached the logging machinery")

    # Cheap means: the enabled check, then nothing; no logger, no record, no formatting.
    monkeypatch.setattr(log, "get_logger", untouched)
    monkeypatch.setattr(log, "_format_record", untouched)
    for _ in range(3):
        log.log_event("tick", server="s", message="m", error=Loud())
    assert not (tmp_path / "agent").exists()


def test_unserialisable_values_do_not_break_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = enable(tmp_path / "agent", monkeypatch)
    log.log_event("x", ms=float("nan"), count=True, pid=None, reason=object(), scope={"b", "a"})
    (record,) = records(path)
    assert record["ms"] == "nan" and record["count"] is True and record["pid"] is None
    assert str(record["reason"]).startswith("<object object")
    assert record["scope"] == ["a", "b"]


WRITER = """
import sys
from pathlib import Path
from orbmcp import log
log.MAX_BYTES = 8000
log.configure(Path(sys.argv[1]), enabled=True)
for i in range(300):
    log.log_event("tick", server=sys.argv[2], count=i, message="z" * 60)
"""


def test_two_processes_share_one_capped_log(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(agent), name], stderr=subprocess.PIPE)
        for name in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    logs = agent / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["orbmcp.log", "orbmcp.log.1", "orbmcp.log.lock"]
    for path in (logs / "orbmcp.log", logs / "orbmcp.log.1"):
        assert path.stat().st_size <= 8000
        got = records(path)  # a torn or interleaved line would not parse
        assert got and all(r["event"] == "tick" for r in got)
    # Oldest first across backup then current: per writer, counts only go up, none twice, and the
    # very last write of the run is the newest line.
    survivors = records(logs / "orbmcp.log.1") + records(logs / "orbmcp.log")
    for name in ("a", "b"):
        counts = [r["count"] for r in survivors if r["server"] == name]
        assert counts == sorted(set(counts))  # type: ignore[type-var]
    assert survivors[-1]["count"] == 299


def test_a_value_that_cannot_be_formatted_is_dropped_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = enable(tmp_path / "agent", monkeypatch)

    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("boom")

    log.log_event("x", message=Broken())  # type: ignore[arg-type]
    log.log_event("after")
    assert [r["event"] for r in records(path)] == ["after"]
    assert log.is_enabled()
