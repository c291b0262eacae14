"""Process trees end to end: stop, signals to orbmcp itself, a SIGKILLed run reaped by the next one,
recycled pids left alone, and no fd leak over repeated start/stop. Death is proven with liveness
sockets (EOF on a process's connection), never with sleeps.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import psutil
import pytest
from anyio.abc import Process

from orbmcp.config.paths import global_dir
from orbmcp.core.processes.reaper import GroupRecord, GroupRegistry
from orbmcp.core.session.state import State
from tests.core.live import (
    cli_argv,
    cli_env,
    managed,
    raw_entry,
    recorded_methods,
    stdio_entry,
    wait_until,
    write_config,
)
from tests.servers.launch import LivenessServer, server_cmd
from tests.timeouts import HANG_GUARD_S, scaled


def procs_records() -> list[Path]:
    return sorted((global_dir() / "procs").glob("*.json"))


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_sh_launcher_and_every_descendant_die_on_stop(tmp_path: Path) -> None:
    async with LivenessServer() as live:
        server = server_cmd(
            "raw", "--answer-discover-error", "-32601", "--spawn-grandchild", "--liveness", live.address
        )
        # A launcher that does not exec (like npx): sh stays the group leader and waits.
        launcher = {"command": "sh", "args": ["-c", '"$0" "$@"; exit $?', *server]}
        config = write_config(tmp_path / "mcp.json", {"tree": launcher})
        async with managed(config) as manager:
            with anyio.fail_after(HANG_GUARD_S):
                sup = await manager.ready("tree")
            await live.wait_registered(3, 10)
            assert set(live.roles()) == {"server", "child", "grandchild"}
            assert sup.process is not None
            sh_pid = sup.process.pid
            assert psutil.Process(sh_pid).name() in ("sh", "dash", "bash")
            assert len(procs_records()) == 1  # recorded while it runs
            with anyio.fail_after(HANG_GUARD_S):
                await manager.stop("tree")
            await live.wait_all_dead(30)
            assert gone(sh_pid)
            assert sup.state == State.STOPPED
            assert manager.tools.counts("tree") == (2, 0)
            assert procs_records() == []


async def test_descendants_that_left_the_process_group_die_on_stop_too(tmp_path: Path) -> None:
    # The child calls setsid (as `detached: true` helpers do) and spawns a grandchild in its
    # new session; a group kill reaches neither, so stop finds them by walking the tree.
    from orbmcp import log

    log.configure(tmp_path / "debug", enabled=True)
    try:
        async with LivenessServer() as live:
            entry = raw_entry("--spawn-grandchild", "--setsid-child", "--liveness", live.address)
            config = write_config(tmp_path / "mcp.json", {"daemonish": entry})
            async with managed(config) as manager:
                with anyio.fail_after(HANG_GUARD_S):
                    sup = await manager.ready("daemonish")
                await live.wait_registered(3, 10)
                assert sup.process is not None
                pgid = sup.process.pgid
                escaped = [p for p in live.peers if p.role != "server"]
                assert escaped and all(os.getpgid(p.pid) != pgid for p in escaped)
                with anyio.fail_after(HANG_GUARD_S):
                    await manager.stop("daemonish")
                await live.wait_all_dead(30)
        records = [
            json.loads(line) for line in (tmp_path / "debug" / "logs" / "orbmcp.log").read_text().splitlines()
        ]
        logged = {r.get("pid") for r in records if r.get("event") == "process.escaped"}
        assert logged == {p.pid for p in escaped}
    finally:
        log.configure(tmp_path / "debug", enabled=False)


async def test_sigterm_ignoring_tree_is_killed_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[signal.Signals] = []
    real_killpg = os.killpg

    def killpg(pgid: int, sig: int) -> None:
        if sig != 0:  # signal 0 only asks whether the group is alive
            sent.append(signal.Signals(sig))
        real_killpg(pgid, sig)

    monkeypatch.setattr(os, "killpg", killpg)
    async with LivenessServer() as live:
        entry = raw_entry("--ignore-sigterm", "--linger", "--spawn-child", "--liveness", live.address)
        config = write_config(tmp_path / "mcp.json", {"stubborn": entry})
        async with managed(config) as manager:
            with anyio.fail_after(HANG_GUARD_S):
                await manager.ready("stubborn")
            await live.wait_registered(2, 10)
            with anyio.fail_after(HANG_GUARD_S):
                await manager.stop("stubborn")
            await live.wait_all_dead(30)
    # stdin EOF (ignored: --linger), then SIGTERM (ignored), then SIGKILL.
    assert sent == [signal.SIGTERM, signal.SIGKILL]


def open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


async def test_no_fd_leak_over_twenty_start_stop_cycles(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "mcp.json",
        {
            "plain": raw_entry(lifecycle="lazy"),
            # Its child inherits the server's pipes and outlives it until the group is killed.
            "keeper": raw_entry("--spawn-child", "--child-keeps-pipes", lifecycle="lazy"),
        },
    )
    async with managed(config) as manager:
        for name in ("plain", "keeper"):  # warm up: the SDK import, worker threads, caches
            await manager.ready(name)
            await manager.stop(name)
        baseline = open_fds()
        with anyio.fail_after(scaled(40)):
            for i in range(20):
                name = ("plain", "keeper")[i % 2]
                sup = await manager.start(name)  # an explicit start after each explicit stop
                assert sup.state == State.READY
                await manager.stop(name)
                assert sup.process is None
        leaked = open_fds() - baseline
    assert leaked == set(), [
        os.readlink(f"/proc/self/fd/{fd}") for fd in leaked if os.path.exists(f"/proc/self/fd/{fd}")
    ]


# --- orbmcp itself interrupted or killed ------------------------------------------------------


async def _spawn_cli(config: Path, *args: str, cwd: Path) -> Process:
    return await anyio.open_process(
        cli_argv(config, *args),
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


async def _read_all(proc: Process) -> tuple[str, str]:
    assert proc.stdout is not None and proc.stderr is not None
    out, err = b"", b""
    async with anyio.create_task_group() as tg:

        async def drain_out() -> None:
            nonlocal out
            async for chunk in proc.stdout:  # type: ignore[union-attr]
                out += chunk

        async def drain_err() -> None:
            nonlocal err
            async for chunk in proc.stderr:  # type: ignore[union-attr]
                err += chunk

        tg.start_soon(drain_out)
        tg.start_soon(drain_err)
    return out.decode(), err.decode()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
async def test_signal_to_orbmcp_stops_every_child_ready_or_connecting(
    tmp_path: Path, sig: signal.Signals
) -> None:
    record = tmp_path / "ready.jsonl"
    async with LivenessServer() as live:
        config = write_config(
            tmp_path / "mcp.json",
            {
                "ready": raw_entry("--spawn-child", "--liveness", live.address, "--record", str(record)),
                "connecting": stdio_entry(
                    "raw", "--hang", "--spawn-child", "--liveness", live.address, timeoutMs=60000
                ),
            },
        )
        proc = await _spawn_cli(config, "status", cwd=tmp_path)
        try:
            await live.wait_registered(4, 15)
            await wait_until(lambda: "tools/list" in recorded_methods(record), 15, "the ready server")
            proc.send_signal(sig)
            with anyio.fail_after(HANG_GUARD_S):
                out, err = await _read_all(proc)
                code = await proc.wait()
            await live.wait_all_dead(30)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert code == 130, err
    assert f"interrupted by {sig.name}; every server was stopped" in err
    assert out == ""
    assert procs_records() == []


async def test_sigkilled_run_is_reaped_by_the_next_one(tmp_path: Path) -> None:
    async with LivenessServer() as live:
        lingering = stdio_entry(
            "raw", "--hang", "--linger", "--spawn-child", "--liveness", live.address, timeoutMs=60000
        )
        config = write_config(tmp_path / "crash.json", {"lingering": lingering})
        proc = await _spawn_cli(config, "status", cwd=tmp_path)
        try:
            await live.wait_registered(2, 15)
            await wait_until(lambda: len(procs_records()) == 1, 10, "the group record")
        finally:
            proc.kill()
            with anyio.fail_after(HANG_GUARD_S):
                await proc.wait()
        # orbmcp is gone without stopping anything. On Linux the server itself gets the
        # parent-death signal (SIGTERM) orbmcp's launcher set; its child lives on, recorded on disk.
        roles = live.roles()
        if sys.platform == "linux":
            await wait_until(lambda: roles["server"] not in live.alive_pids(), 5, "the parent-death signal")
        assert roles["child"] in live.alive_pids()
        assert len(procs_records()) == 1
        later = write_config(tmp_path / "later.json", {"other": raw_entry(lifecycle="lazy")})
        with anyio.fail_after(HANG_GUARD_S):
            result = await anyio.run_process(
                cli_argv(later, "status", "--json"), cwd=tmp_path, env=cli_env(), check=False
            )
        assert result.returncode == 0, result.stderr
        await live.wait_all_dead(30)
    assert procs_records() == []


async def test_a_recycled_pid_in_a_stale_record_is_never_killed(tmp_path: Path) -> None:
    async with LivenessServer() as live:
        victim = subprocess.Popen(
            [*server_cmd("raw"), "--liveness-only", "--liveness", live.address, "--role", "victim"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
        )
        try:
            await live.wait_registered(1, 10)
            dead_owner = subprocess.Popen([sys.executable, "-c", "pass"])
            dead_owner.wait()
            registry = GroupRegistry(global_dir())
            real_start = psutil.Process(victim.pid).create_time()
            config = write_config(tmp_path / "mcp.json", {"other": raw_entry(lifecycle="lazy")})

            def stale(create_time: float) -> Path:
                return registry.write_record(
                    GroupRecord("ghost", victim.pid, victim.pid, create_time, dead_owner.pid, 1.0)
                )

            # Same pid, different start time: someone else's process now. It must survive.
            stale(real_start - 1000.0)
            async with managed(config):
                pass
            assert procs_records() == []
            assert live.alive_pids() == [victim.pid]
            assert victim.poll() is None

            # The control: the same record with the right start time is ours, and is reaped.
            stale(real_start)
            async with managed(config):
                pass
            await live.wait_all_dead(30)
            assert procs_records() == []
        finally:
            if victim.poll() is None:
                victim.kill()
            victim.wait()
