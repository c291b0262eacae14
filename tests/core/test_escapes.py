"""No process escapes: helpers that leave the server's process group (setsid) die with the server,
whenever they were started — at start-up, during a call, on stdin EOF by a server that exits at
once — and after orbmcp itself was SIGKILLed (the parent-death signal, then the next run's reaper).
Death is proven by liveness sockets, never by sleeps."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from orbmcp.config.paths import global_dir
from orbmcp.core.processes import process as process_module
from orbmcp.core.tooling.calls import call_tool
from tests.core.live import cli_argv, cli_env, enable_debug_log, logged, managed, stdio_entry, write_config
from tests.daemon import Scoped
from tests.servers.launch import LivenessServer
from tests.timeouts import HANG_GUARD_S, LONG_GUARD_S, scaled

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="walks /proc and sets PR_SET_PDEATHSIG")


def hostile(live: LivenessServer, *flags: str, **extra: object) -> dict[str, object]:
    return stdio_entry(
        "hostile", "--answer-discover-error", "-32601", "--liveness", live.address, *flags, **extra
    )


# How long a lingering server's stop waits after closing its stdin, in the tests whose helper
# starts only then (the stop ends as soon as the server is gone otherwise).
HELPER_START_GRACE_S = scaled(10.0)


def sid(pid: int) -> int:
    return os.getsid(pid)


@linux_only
@pytest.mark.parametrize(
    ("flags", "helper"),
    [
        (("--helper-at-start",), "start-helper"),
        (("--helper-on-call",), "call-helper-1"),
        (("--helper-on-eof",), "eof-helper"),  # the server exits right after: the helper is init's
        (("--helper-on-eof", "--linger"), "eof-helper"),  # found by the walk right before SIGTERM
    ],
)
async def test_a_setsid_helper_dies_with_its_server(
    tmp_path: Path, flags: tuple[str, ...], helper: str
) -> None:
    log_file = enable_debug_log(tmp_path)
    async with LivenessServer() as live:
        config = write_config(tmp_path / "mcp.json", {"h": hostile(live, *flags)})
        async with managed(config) as manager:
            with anyio.fail_after(HANG_GUARD_S):
                sup = await manager.ready("h")
                if "--helper-on-call" in flags:
                    await call_tool(sup, "echo", {"text": "x"})
                await live.wait_registered(2 if "--helper-on-eof" not in flags else 1, 15)
                # The helper starts once stdin closes and must be up before the stop's walk: a
                # loaded machine may need more than the default 2 s grace to start Python.
                manager.runtime.stdin_grace_s = HELPER_START_GRACE_S
                with anyio.fail_after(20 + HELPER_START_GRACE_S):
                    await manager.stop("h")
        if "--helper-on-eof" in flags:
            # It was started during the stop and registered before the server went on (its line
            # may still be on its way to this process's liveness server).
            await live.wait_registered(2, 15)
        roles = live.roles()
        assert sid(roles[helper]) != roles["server"] if live.alive_pids() else True
        await live.wait_all_dead(10)
    escaped = {record["pid"] for record in logged(log_file, "process.escaped", "h")}
    assert roles[helper] in escaped


@linux_only
async def test_the_walk_before_sigterm_finds_a_helper_without_the_tag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tags switched off: only walking the tree again right before SIGTERM can find a helper the
    # server started when its stdin closed (a walk at the start of the stop is too early).
    monkeypatch.setattr(process_module, "tagged_processes", lambda *a, **k: [])
    async with LivenessServer() as live:
        config = write_config(tmp_path / "mcp.json", {"h": hostile(live, "--helper-on-eof", "--linger")})
        async with managed(config) as manager:
            with anyio.fail_after(20 + HELPER_START_GRACE_S):
                await manager.ready("h")
                manager.runtime.stdin_grace_s = HELPER_START_GRACE_S  # see above
                await manager.stop("h")
        await live.wait_registered(2, 15)
        assert "eof-helper" in live.roles()
        await live.wait_all_dead(10)


def records() -> list[Path]:
    return sorted((global_dir() / "procs").glob("*.json"))


@linux_only
@pytest.mark.parametrize("leader", ["takes-the-signal", "ignores-sigterm"])
async def test_after_orbmcp_is_sigkilled_nothing_of_the_server_survives_the_next_run(
    tmp_path: Path, leader: str
) -> None:
    flags = ["--helper-at-start", "--linger"] + (["--ignore-sigterm"] if leader == "ignores-sigterm" else [])
    async with LivenessServer() as live:
        config = write_config(tmp_path / "crash.json", {"h": hostile(live, *flags, timeoutMs=60000)})
        proc = await anyio.open_process(cli_argv(config, "status"), cwd=tmp_path, env=cli_env())
        try:
            await live.wait_registered(2, 20)
            with anyio.fail_after(HANG_GUARD_S):
                while len(records()) != 1:
                    await anyio.sleep(0.02)
        finally:
            proc.send_signal(signal.SIGKILL)
            with anyio.fail_after(HANG_GUARD_S):
                await proc.wait()
            await proc.aclose()
        roles = live.roles()
        record = json.loads(records()[0].read_text())
        assert record["tag"] and record["start_ticks"] >= 0
        if leader == "takes-the-signal":
            # The parent-death signal ended the server; its setsid helper is init's now.
            with anyio.fail_after(HANG_GUARD_S):
                while roles["server"] in live.alive_pids():
                    await anyio.sleep(0.02)
        assert roles["start-helper"] in live.alive_pids()
        # The next run with any stdio server reaps (a lazy one: nothing is started).
        later = write_config(tmp_path / "later.json", {"other": stdio_entry("raw", lifecycle="lazy")})
        with anyio.fail_after(HANG_GUARD_S):
            result = await anyio.run_process(
                cli_argv(later, "status"), cwd=tmp_path, env=cli_env(), check=False
            )
        assert result.returncode == 0, result.stderr
        await live.wait_all_dead(10)
    assert records() == []


@linux_only
async def test_ctrl_c_during_start_up_leaves_no_helper(tmp_path: Path) -> None:
    # The server starts a setsid helper and never answers initialize: Ctrl-C lands mid-connect.
    async with LivenessServer() as live:
        config = write_config(
            tmp_path / "mcp.json", {"h": hostile(live, "--helper-at-start", "--hang", timeoutMs=60000)}
        )
        proc = await anyio.open_process(cli_argv(config, "status"), cwd=tmp_path, env=cli_env())
        try:
            await live.wait_registered(2, 20)
            proc.send_signal(signal.SIGINT)
            with anyio.fail_after(HANG_GUARD_S):
                code = await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await proc.aclose()
        assert code == 130
        await live.wait_all_dead(30)
    with anyio.fail_after(HANG_GUARD_S):
        while records():
            await anyio.sleep(0.02)  # the one-shot program's detached stop removes them at the end


@linux_only
async def test_a_server_the_daemon_owns_gets_sigterm_when_the_daemon_is_sigkilled(tmp_path: Path) -> None:
    # ``--linger`` keeps the server running after stdin EOF and no later run reaps: only the
    # parent-death signal, tied to the daemon's event-loop thread, can end it.
    scoped = Scoped(home=tmp_path / "agent", project=tmp_path / "project")
    scoped.project.mkdir()
    async with LivenessServer() as live:
        scoped.write({"h": hostile(live, "--linger", lifecycle="lazy")})
        try:
            with anyio.fail_after(LONG_GUARD_S):
                started = await anyio.run_process(
                    scoped.argv("daemon", "start", "--json"),
                    env=scoped.env(),
                    cwd=scoped.project,
                    check=False,
                )
                assert started.returncode == 0, started.stderr
                daemon_pid = json.loads(started.stdout)["pid"]
                up = await anyio.run_process(
                    scoped.argv("start", "h"), env=scoped.env(), cwd=scoped.project, check=False
                )
                assert up.returncode == 0, up.stderr
            await live.wait_registered(1, 20)
            server = live.roles()["server"]
            assert os.getppid() != server and daemon_pid != server
            os.kill(daemon_pid, signal.SIGKILL)
            await live.wait_all_dead(20)
        finally:
            await anyio.to_thread.run_sync(scoped.stop)


@linux_only
@pytest.mark.parametrize("server", ["exits-on-eof", "lingers"])
async def test_the_one_shot_programs_detached_stop_leaves_no_helper(tmp_path: Path, server: str) -> None:
    # The orbmcp program hands its servers' stop to a detached process and exits. A helper the
    # server starts on stdin EOF is found there too: by its tag once its parent has exited, by the
    # walk right before SIGTERM while the server lingers.
    # It ignores SIGTERM: the parent-death signal reaches it with its stdin EOF when orbmcp exits,
    # and the helper it starts on that EOF is what this test is about.
    flags = ("--helper-on-eof", "--ignore-sigterm") + (("--linger",) if server == "lingers" else ())
    async with LivenessServer() as live:
        config = write_config(tmp_path / "mcp.json", {"h": hostile(live, *flags)})
        env = cli_env({"ORB_AGENT_DIR": str(tmp_path / "g"), "ORBMCP_NO_DAEMON": "1"})
        argv = [sys.executable, "-m", "orbmcp", "--config", str(config), "call", "h", "echo", "text=hi"]
        with anyio.fail_after(LONG_GUARD_S):
            done = await anyio.run_process(argv, env=env, cwd=tmp_path, check=False)
        assert (done.returncode, done.stdout) == (0, b"hi\n"), done.stderr
        await live.wait_registered(2, 20)
        assert "eof-helper" in live.roles()
        await live.wait_all_dead(30)
    with anyio.fail_after(HANG_GUARD_S):
        while list((tmp_path / "g" / "procs").glob("*.json")):
            await anyio.sleep(0.02)  # the detached process removes the record once all is gone
