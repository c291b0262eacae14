"""One daemon per user and configuration: every directory shares it, projects keep their own
sessions inside it, and it can live as long as an agent (``--owner-pid``). Real daemons, real
clients in real directories, real server processes counted with psutil."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from orbmcp.session import daemon_protocol as protocol
from tests.core.live import raw_entry, stdio_entry
from tests.daemon import Scoped, alive, methods
from tests.timeouts import HANG_GUARD_S, generous_servers

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")


def directories(tmp_path: Path, count: int) -> list[Scoped]:
    """``count`` directories of one user (one global dir); none adds configuration."""
    out = []
    for n in range(count):
        project = tmp_path / f"dir{n}"
        project.mkdir()
        out.append(Scoped(home=tmp_path / "agent", project=project))
    return out


def server_processes(marker: str) -> list[psutil.Process]:
    """Running processes whose command line names ``marker`` (a server's own record file)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if marker in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def daemon_processes(home: Path) -> list[psutil.Process]:
    """Session daemons serving ``home`` (``daemon start --foreground`` with that global dir)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "environ", "status"]):
        cmdline = proc.info["cmdline"] or []
        environ = proc.info["environ"] or {}
        if (
            "--foreground" in cmdline
            and "daemon" in cmdline
            and environ.get("ORB_AGENT_DIR") == str(home)
            and proc.info["status"] != psutil.STATUS_ZOMBIE
        ):
            found.append(proc)
    return found


def test_three_directories_share_one_daemon_and_one_process_per_server(tmp_path: Path) -> None:
    dirs = directories(tmp_path, 3)
    recs = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b")}
    dirs[0].write({name: raw_entry("--record", str(rec)) for name, rec in recs.items()}, daemon="auto")
    try:
        for n, scoped in enumerate(dirs):
            for name in recs:
                run = scoped.run("call", name, "echo", f"text={name}{n}")
                assert (run.code, run.out) == (0, f"{name}{n}\n"), run.err
        assert len(daemon_processes(dirs[0].home)) == 1
        assert {scoped.socket for scoped in dirs} == {dirs[0].socket}
        for name, rec in recs.items():
            assert len(server_processes(str(rec))) == 1, name
            assert methods(rec).count("initialize") == 1  # one session served the three directories
            assert methods(rec).count("tools/call") == 3
    finally:
        dirs[0].stop()
        for proc in daemon_processes(dirs[0].home):  # daemons of other directories, were there any
            proc.terminate()


def test_projects_get_their_own_servers_inside_the_same_daemon(tmp_path: Path) -> None:
    plain, first, second = directories(tmp_path, 3)
    plain.write({"g": raw_entry("--record", str(tmp_path / "g.jsonl"))})
    for scoped in (first, second):
        (scoped.project / ".orb").mkdir()
        entry = raw_entry("--record", str(scoped.project / "p.jsonl"), lifecycle="lazy")
        (scoped.project / ".orb" / "mcp.json").write_text(
            json.dumps({"mcpServers": generous_servers({"p": entry})})
        )
    info = plain.start()
    try:
        assert second.run("trust", "--yes").code == 0
        untrusted = first.run("call", "p", "echo", "text=no")
        assert untrusted.code != 0 and "trust" in (untrusted.out + untrusted.err).lower()
        assert plain.run("call", "p", "echo", "text=no").code != 0  # the shared session has no "p"
        run = second.run("call", "p", "echo", "text=mine")
        assert (run.code, run.out) == (0, "mine\n"), run.err
        assert first.run("trust", "--yes").code == 0
        assert first.run("call", "p", "echo", "text=first").out == "first\n"
        # One name in two projects: two servers, each its project's.
        assert methods(first.project / "p.jsonl").count("tools/call") == 1
        assert methods(second.project / "p.jsonl").count("tools/call") == 1
        status = plain.run("daemon", "status", "--json").json()
        assert status["pid"] == info["pid"] and len(daemon_processes(plain.home)) == 1
        assert {p["dir"] for p in status["projects"]} == {str(first.project), str(second.project)}
        assert [s["name"] for s in status["servers"]] == ["g"]
        text = plain.run("daemon", "status").out
        lines = {line.strip() for line in text.splitlines()}
        for scoped in (first, second):
            (row,) = [line for line in lines if line.startswith(f"project {scoped.project}: ")]
            assert "p ready" in row
    finally:
        plain.stop()
    for scoped in (first, second):  # a clean stop stopped the projects' servers too
        assert server_processes(str(scoped.project / "p.jsonl")) == []


def test_a_directory_that_gains_a_project_file_gets_its_session_on_the_next_command(tmp_path: Path) -> None:
    # The daemon remembers where a directory's project files would be; whether they exist is
    # asked on every command.
    plain, grows = directories(tmp_path, 2)
    plain.write({"g": raw_entry("--record", str(tmp_path / "g.jsonl"))})
    plain.start()
    try:
        assert grows.run("call", "g", "echo", "text=shared").out == "shared\n"
        assert plain.run("daemon", "status", "--json").json()["projects"] == []
        (grows.project / ".orb").mkdir()
        entry = raw_entry("--record", str(grows.project / "p.jsonl"), lifecycle="lazy")
        (grows.project / ".orb" / "mcp.json").write_text(
            json.dumps({"mcpServers": generous_servers({"p": entry})})
        )
        assert grows.run("trust", "--yes").code == 0
        run = grows.run("call", "p", "echo", "text=mine")
        assert (run.code, run.out) == (0, "mine\n"), run.err
        projects = plain.run("daemon", "status", "--json").json()["projects"]
        assert [p["dir"] for p in projects] == [str(grows.project)]
        (grows.project / ".orb" / "mcp.json").unlink()
        assert grows.run("call", "p", "echo", "text=gone").code != 0  # the shared session again
        assert grows.run("call", "g", "echo", "text=back").out == "back\n"
    finally:
        plain.stop()


def test_the_daemon_ends_with_its_owner_and_stops_its_servers(tmp_path: Path) -> None:
    (scoped,) = directories(tmp_path, 1)
    rec = tmp_path / "r.jsonl"
    scoped.write({"r": raw_entry("--record", str(rec))})
    owner = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        info = scoped.start("--owner-pid", str(owner.pid))
        assert info["ownerPid"] == owner.pid
        assert scoped.run("call", "r", "echo", "text=x").out == "x\n"
        daemon = psutil.Process(info["pid"])
        (server,) = server_processes(str(rec))
        assert "ends with its owner" in scoped.run("daemon", "status").out
    finally:
        owner.kill()
        owner.wait(timeout=HANG_GUARD_S)
    try:
        gone, _ = psutil.wait_procs([daemon, server], timeout=HANG_GUARD_S)
        assert {p.pid for p in gone} == {daemon.pid, server.pid}
        assert not scoped.socket.exists()
    finally:
        scoped.stop()


def test_an_owner_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    (scoped,) = directories(tmp_path, 1)
    scoped.write({"r": raw_entry()})
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=HANG_GUARD_S)
    run = scoped.run("daemon", "start", "--owner-pid", str(dead.pid))
    assert run.code == 2 and f"--owner-pid {dead.pid}" in run.err and scoped.daemon_pid() is None


def run_in_daemon(sock: Path, line: str, cwd: Path, home: Path) -> tuple[int, str]:
    """``orbmcp slash LINE`` sent into the daemon as a forwarded command (what an agent's
    long-running client does): its exit code and output."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(HANG_GUARD_S)
        conn.connect(str(sock))
        protocol.send(conn, {"t": "hello", "protocol": protocol.PROTOCOL_VERSION})
        hello = protocol.receive(conn)
        assert hello is not None and hello["t"] == "hello"
        env = {"ORB_AGENT_DIR": str(home)}
        protocol.send(conn, {"t": "run", "argv": ["slash", line], "cwd": str(cwd), "env": env})
        out: list[str] = []
        while True:
            frame: dict[str, Any] | None = protocol.receive(conn)
            assert frame is not None, "the daemon closed the connection before the command ended"
            if frame["t"] in ("out", "err"):
                out.append(str(frame.get("data", "")))
            elif frame["t"] == "exit":
                return int(frame["code"]), "".join(out)
            else:
                raise AssertionError(f"unexpected frame {frame}")


def test_daemon_status_and_stop_run_inside_the_daemon_answer_about_it(tmp_path: Path) -> None:
    (scoped,) = directories(tmp_path, 1)
    scoped.write({"r": raw_entry()})
    info = scoped.start()
    try:
        code, text = run_in_daemon(scoped.socket, "/mcp daemon status", scoped.project, scoped.home)
        assert code == 0 and f"pid {info['pid']}" in text and "No session daemon" not in text
        code, text = run_in_daemon(scoped.socket, "/mcp daemon stop", scoped.project, scoped.home)
        assert code == 0 and "stopped" in text
        psutil.Process(info["pid"]).wait(timeout=HANG_GUARD_S)
        assert not scoped.socket.exists()
        after = scoped.run("call", "r", "echo", "text=x")
        assert (after.out, after.err) == ("x\n", "")  # no stale "the daemon is gone" line
    finally:
        scoped.stop()


def test_slash_daemon_stop_never_starts_a_daemon(tmp_path: Path) -> None:
    (scoped,) = directories(tmp_path, 1)
    scoped.write({"r": raw_entry()}, daemon="auto")
    try:
        stop = scoped.run("slash", "/mcp daemon stop")
        assert stop.code == 0 and "started the session daemon" not in stop.err
        assert scoped.daemon_pid() is None and daemon_processes(scoped.home) == []
        status = scoped.run("slash", "/mcp daemon status")
        assert "No session daemon" in status.out and scoped.daemon_pid() is None
        info = scoped.start()
        shown = scoped.run("slash", "/mcp daemon status")
        assert f"pid {info['pid']}" in shown.out
        stopped = scoped.run("slash", "/mcp daemon stop")
        assert stopped.code == 0 and stopped.err == "" and not alive(info["pid"])
        assert scoped.run("slash", "/mcp daemon status").err == ""
    finally:
        scoped.stop()


def test_the_shared_session_never_makes_a_commands_directory_a_root(tmp_path: Path) -> None:
    """One session for every directory, and none of them becomes a root (issue 24: roots only where
    configured): the server is told it has no roots from any directory, as one-shot tells it."""
    dirs = directories(tmp_path, 2)
    dirs[0].write({"a": stdio_entry("asks")})
    info = dirs[0].start()
    try:
        for scoped in (*dirs, dirs[0]):
            run = scoped.run("call", "a", "roots")
            assert run.code == 4 and "List roots not supported" in run.err, run.err
            assert scoped.project.as_uri() not in run.out + run.err
        status = dirs[1].run("daemon", "status", "--json").json()
        assert status["pid"] == info["pid"] and status["projects"] == []
    finally:
        dirs[0].stop()


def test_a_daemon_started_in_a_project_keeps_its_servers_to_that_project(tmp_path: Path) -> None:
    project, plain = directories(tmp_path, 2)
    plain.write({"g": raw_entry()})
    (project.project / ".orb").mkdir()
    entry = raw_entry("--record", str(tmp_path / "p.jsonl"), lifecycle="lazy")
    (project.project / ".orb" / "mcp.json").write_text(
        json.dumps({"mcpServers": generous_servers({"p": entry})})
    )
    assert project.run("trust", "--yes").code == 0
    project.start()
    try:
        assert project.run("call", "p", "echo", "text=here").out == "here\n"
        elsewhere = plain.run("call", "p", "echo", "text=there")
        assert elsewhere.code != 0 and "p" in elsewhere.err
        assert [s["name"] for s in plain.run("status", "--json").json()] == ["g"]
    finally:
        plain.stop()


def test_restart_inside_the_daemon_is_refused_with_the_way_out(warm: Scoped) -> None:
    warm.write({"r": raw_entry()})
    pid = warm.daemon_pid()
    code, text = run_in_daemon(warm.socket, "/mcp daemon restart", warm.project, warm.home)
    assert code == 2 and "`orbmcp daemon restart` in a shell" in text
    assert pid is not None and alive(pid) and warm.daemon_pid() == pid


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "psutil"])
async def test_the_owner_handle_returns_when_the_process_ends(pidfd: bool) -> None:
    import anyio

    from orbmcp.daemon.owner import OwnerGone, OwnerHandle

    owner = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    handle = OwnerHandle(owner.pid, pidfd=pidfd)
    ended = anyio.Event()

    async def watch() -> None:
        await handle.wait()
        ended.set()

    with anyio.fail_after(HANG_GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            assert not ended.is_set()
            assert owner.stdin is not None
            owner.stdin.close()  # it reads EOF and exits
            await ended.wait()
    owner.wait(timeout=HANG_GUARD_S)
    with pytest.raises(OwnerGone, match="no process has pid"):
        OwnerHandle(owner.pid, pidfd=pidfd)
    with pytest.raises(OwnerGone, match="not a process id"):
        OwnerHandle(0)


def test_one_config_file_is_one_daemon_whatever_the_directory(tmp_path: Path) -> None:
    dirs = directories(tmp_path, 2)
    rec = tmp_path / "r.jsonl"
    config = tmp_path / "only.json"
    config.write_text(json.dumps({"mcpServers": generous_servers({"r": raw_entry("--record", str(rec))})}))
    (dirs[1].project / ".orb").mkdir()  # a project file is ignored under --config
    (dirs[1].project / ".orb" / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    started = dirs[0].run("--config", str(config), "daemon", "start", "--json")
    assert started.code == 0, started.err
    try:
        for n, scoped in enumerate(dirs):
            run = scoped.run("--config", str(config), "call", "r", "echo", f"text={n}")
            assert (run.code, run.out) == (0, f"{n}\n"), run.err
        assert methods(rec).count("initialize") == 1
        status = dirs[1].run("--config", str(config), "daemon", "status", "--json").json()
        assert status["pid"] == started.json()["pid"] and status["projects"] == []
    finally:
        dirs[0].run("--config", str(config), "daemon", "stop")
