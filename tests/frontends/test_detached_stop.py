"""A one-shot command of the orbmcp program prints, exits, and leaves its servers' stop to a
detached process: the caller sees EOF at exit, and every server process is gone after."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from orbmcp import log
from tests.core.live import cli_env, logged, raw_entry, write_config
from tests.servers.launch import LivenessServer
from tests.timeouts import HANG_GUARD_S, LONG_GUARD_S


def _env(global_dir: Path) -> dict[str, str]:
    return cli_env({"ORB_AGENT_DIR": str(global_dir), "ORBMCP_DEBUG": "1", "ORBMCP_NO_DAEMON": "1"})


async def test_a_stubborn_server_is_stopped_by_the_detached_stop_after_orbmcp_exits(tmp_path: Path) -> None:
    global_dir = tmp_path / "g"
    log_file = global_dir / log.LOG_DIR_NAME / log.LOG_FILE_NAME
    async with LivenessServer() as live:
        # Ignores stdin EOF and SIGTERM, and has a child: only SIGKILL to the group ends it.
        entry = raw_entry("--ignore-sigterm", "--linger", "--spawn-child", "--liveness", live.address)
        config = write_config(tmp_path / "mcp.json", {"stubborn": entry})
        argv = [
            sys.executable,
            "-m",
            "orbmcp",
            "--config",
            str(config),
            "call",
            "stubborn",
            "echo",
            "text=hi",
        ]
        with anyio.fail_after(LONG_GUARD_S):
            # run_process returns at orbmcp's exit *and* EOF on its stdout and stderr: nothing
            # that outlives orbmcp holds them.
            done = await anyio.run_process(argv, env=_env(global_dir), check=False)
        assert (done.returncode, done.stdout) == (0, b"hi\n"), done.stderr
        await live.wait_registered(2, 10)
        await live.wait_all_dead(30)
        with anyio.fail_after(HANG_GUARD_S):
            while not logged(log_file, "process.detached_stop", "stubborn"):
                await anyio.sleep(0.05)  # polling a file the detached process writes, bounded above
        handed = logged(log_file, "process.handed_off", "stubborn")
        stops = logged(log_file, "process.detached_stop")
    assert len(handed) == 1
    # The detached stop began only once orbmcp had exited, then went the whole way.
    assert stops[0]["phase"] == "parent_exited"
    assert [(s.get("server"), s["phase"]) for s in stops[1:]] == [("stubborn", "killed")]
    assert stops[1]["pid"] == handed[0]["pid"]
    assert not list((global_dir / "procs").glob("*.json"))  # its record removed with it


async def test_a_server_that_exits_on_stdin_eof_is_recorded_as_exited(tmp_path: Path) -> None:
    global_dir = tmp_path / "g"
    log_file = global_dir / log.LOG_DIR_NAME / log.LOG_FILE_NAME
    config = write_config(tmp_path / "mcp.json", {"plain": raw_entry()})
    argv = [sys.executable, "-m", "orbmcp", "--config", str(config), "call", "plain", "echo", "text=hi"]
    with anyio.fail_after(LONG_GUARD_S):
        done = await anyio.run_process(argv, env=_env(global_dir), check=False)
        assert done.returncode == 0, done.stderr
        # Its stdin closes when the session ends; a server that exited before orbmcp's own exit
        # has nothing left to hand off (orbmcp logged the hand-off before exiting, if any).
        if logged(log_file, "process.handed_off", "plain"):
            while not any(s.get("server") == "plain" for s in logged(log_file, "process.detached_stop")):
                await anyio.sleep(0.05)  # polling a file the detached process writes, bounded above
            stop = next(s for s in logged(log_file, "process.detached_stop") if s.get("server") == "plain")
            assert stop["phase"] == "exited"
    assert not list((global_dir / "procs").glob("*.json"))


def test_an_embedders_process_never_hands_off(tmp_path: Path) -> None:
    """In-process (tests, embedders) the stop is done before the command returns, as ever."""
    from tests.cli import run_cli

    global_dir = tmp_path / "g"
    config = write_config(tmp_path / "mcp.json", {"plain": raw_entry()})
    result = run_cli("--config", str(config), "call", "plain", "echo", "text=hi", env=_env(global_dir))
    assert (result.code, result.stdout) == (0, "hi\n"), result.stderr
    assert not logged(global_dir / log.LOG_DIR_NAME / log.LOG_FILE_NAME, "process.handed_off")
    assert not list((global_dir / "procs").glob("*.json"))
