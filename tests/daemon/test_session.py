"""The session daemon end to end: real daemons, real clients, real servers, over the real socket."""

from __future__ import annotations

import json
import os
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.core.live import raw_entry, stdio_entry
from tests.daemon import Scoped, accepting, alive, daemon, methods, records, wait_for

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")


def test_start_status_stop(scoped: Scoped, tmp_path: Path) -> None:
    scoped.write({"r": raw_entry("--record", str(tmp_path / "r.jsonl"))})
    assert scoped.run("daemon", "status").code == 1  # not running: scripts can ask
    info = scoped.start("--idle-timeout", "0")
    assert info["action"] == "started" and info["running"] and info["idleTimeoutS"] == 0
    pid = info["pid"]
    assert alive(pid) and scoped.socket.exists()
    assert oct(scoped.socket.stat().st_mode & 0o777) == "0o600"
    assert oct(scoped.socket.parent.stat().st_mode & 0o777) == "0o700"
    again = scoped.start()
    assert again["action"] == "already-running" and again["pid"] == pid

    status = scoped.run("daemon", "status", "--json")
    assert status.code == 0
    body = status.json()
    assert body["pid"] == pid and body["servers"] == [{"name": "r", "state": body["servers"][0]["state"]}]
    assert body["residentMemoryBytes"] > 0 and body["scope"]["projectDir"] == str(scoped.project)
    text = scoped.run("daemon", "status").out
    assert f"pid {pid}" in text and "idle timeout: never" in text

    stopped = scoped.run("daemon", "stop", "--json")
    assert stopped.code == 0 and stopped.json()["action"] == "stopped"
    wait_for(lambda: not alive(pid), what="the daemon to exit")
    assert not scoped.socket.exists()
    assert scoped.run("daemon", "stop", "--json").json()["action"] == "not-running"


def test_a_server_started_in_one_process_serves_calls_from_others(warm: Scoped, tmp_path: Path) -> None:
    rec = tmp_path / "r.jsonl"
    warm.write({"r": raw_entry("--record", str(rec), lifecycle="lazy")})
    started = warm.run("start", "r")
    assert started.code == 0 and "State:  ready" in started.out
    assert "one-shot" not in started.out  # it stays connected
    for n in range(3):
        call = warm.run("call", "r", "echo", f"text=hi{n}")
        assert (call.code, call.out) == (0, f"hi{n}\n")
    assert methods(rec).count("initialize") == 1  # one server process served every call
    status = warm.run("status")
    assert f"(daemon: pid {warm.daemon_pid()})" in status.out and "ready" in status.out
    assert "one-shot" not in status.out


def test_a_stop_sticks_across_invocations(warm: Scoped, tmp_path: Path) -> None:
    rec = tmp_path / "r.jsonl"
    warm.write({"r": raw_entry("--record", str(rec))})
    assert warm.run("call", "r", "echo", "text=a").code == 0
    assert warm.run("stop", "r").code == 0
    refused = warm.run("call", "r", "echo", "text=b")
    assert refused.code == 4 and "stopped in this session" in refused.err
    assert "orbmcp start r" in refused.err
    assert " stopped " in warm.run("status").out
    assert warm.run("start", "r").code == 0
    assert warm.run("call", "r", "echo", "text=c").out == "c\n"
    assert methods(rec).count("initialize") == 2  # stopped once, started once


def test_twenty_concurrent_clients_on_two_servers(warm: Scoped, tmp_path: Path) -> None:
    recs = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b")}
    warm.write({name: raw_entry("--record", str(rec)) for name, rec in recs.items()})

    def one(n: int) -> tuple[int, str, str]:
        server = "ab"[n % 2]
        run = warm.run("call", server, "echo", f"text={server}{n}")
        return run.code, run.out, run.err

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(one, range(20)))
    assert [(code, out) for code, out, _ in results] == [(0, f"{'ab'[n % 2]}{n}\n") for n in range(20)]
    for rec in recs.values():  # one process per server, whatever the number of clients
        assert methods(rec).count("initialize") == 1
        assert methods(rec).count("tools/call") == 10


def test_a_hung_server_does_not_hold_up_another(warm: Scoped, tmp_path: Path) -> None:
    hung_rec = tmp_path / "h.jsonl"
    warm.write(
        {
            "h": raw_entry("--record", str(hung_rec), lifecycle="lazy", timeoutMs=60000),
            "a": raw_entry(),
        }
    )
    warm.run("start", "a")
    slow = warm.popen("call", "h", "never")  # connects h, then waits on a call that never ends
    try:
        wait_for(lambda: "tools/call" in methods(hung_rec), what="h to receive its call")
        fast = warm.run("call", "a", "echo", "text=free")
        assert (fast.code, fast.out) == (0, "free\n")
        assert slow.poll() is None  # still waiting on h
    finally:
        slow.send_signal(signal.SIGINT)
        slow.communicate(timeout=30)


def test_ctrl_c_cancels_that_client_only(warm: Scoped, tmp_path: Path) -> None:
    rec = tmp_path / "r.jsonl"
    warm.write({"r": raw_entry("--record", str(rec))})
    waiting = warm.popen("call", "r", "never")
    wait_for(lambda: "tools/call" in methods(rec), what="the call to reach the server")
    other = warm.run("call", "r", "echo", "text=meanwhile")  # another client, same server
    assert (other.code, other.out) == (0, "meanwhile\n")
    assert waiting.poll() is None
    waiting.send_signal(signal.SIGINT)
    out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 130 and out == ""
    assert "interrupted by SIGINT" in err
    # The server saw the cancellation of that request, and keeps serving everyone else.
    wait_for(lambda: "notifications/cancelled" in methods(rec), what="the cancellation")
    never_id = next(m["id"] for m in records(rec) if m.get("params", {}).get("name") == "never")
    cancelled = [m for m in records(rec) if m.get("method") == "notifications/cancelled"]
    assert cancelled[-1]["params"]["requestId"] == never_id
    after = warm.run("call", "r", "echo", "text=still")
    assert (after.code, after.out) == (0, "still\n")
    assert methods(rec).count("initialize") == 1


def test_config_edits_reach_the_running_session(warm: Scoped, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    warm.write({"r": raw_entry("--record", str(first))})
    assert warm.run("call", "r", "echo", "text=1").code == 0
    # A new server, and a changed definition: the next command sees both.
    warm.write({"r": raw_entry("--record", str(second)), "n": raw_entry()})
    assert warm.run("call", "n", "echo", "text=new").out == "new\n"
    assert warm.run("call", "r", "echo", "text=2").out == "2\n"
    assert "initialize" in methods(second)  # the changed r is a new process
    assert "tools/call" not in methods(first)[methods(first).index("tools/call") + 1 :]
    # Removed: gone from the session.
    warm.write({"n": raw_entry()})
    gone = warm.run("call", "r", "echo", "text=3")
    assert gone.code == 2 and "unknown server 'r'" in gone.err
    # A config error in an entry is shown to the client that made the session reload.
    warm.write({"n": raw_entry(), "bad": {"command": 5}})
    warned = warm.run("status")
    assert "bad" in warned.err or "bad" in warned.out


def test_an_eager_server_added_to_a_daemon_started_without_servers_connects(
    scoped: Scoped, tmp_path: Path
) -> None:
    # The daemon made its Manager only on the reload: made from the new config, apply_config saw
    # nothing added and the eager server stayed stopped until a call connected it.
    rec = tmp_path / "eager.jsonl"
    scoped.write({})
    with daemon(scoped):
        scoped.write({"e": raw_entry("--record", str(rec))})
        assert scoped.run("status").code == 0  # the command that makes the daemon reload
        wait_for(lambda: "initialize" in methods(rec), what="the daemon to connect the eager server")


def test_a_changed_variable_is_named_with_the_fix(scoped: Scoped) -> None:
    scoped.write({"r": {**raw_entry(), "env": {"TOKEN": "${DEMO_TOKEN}"}}})
    scoped.extra_env["DEMO_TOKEN"] = "one"
    with daemon(scoped):
        same = scoped.run("call", "r", "echo", "text=x")
        assert same.code == 0 and "DEMO_TOKEN" not in same.err
        drift = scoped.run("call", "r", "echo", "text=y", DEMO_TOKEN="two")
        assert drift.code == 0 and drift.out == "y\n"
        assert "$DEMO_TOKEN differs" in drift.err and "orbmcp daemon restart" in drift.err
        assert "two" not in drift.err and "one" not in drift.err


def test_output_and_exit_codes_equal_the_one_shot_run(scoped: Scoped) -> None:
    scoped.write({"r": raw_entry(), "off": {**raw_entry(), "enabled": False}})
    lines = [
        ("tools",),
        ("tools", "r", "--json"),
        ("call", "r", "echo", "text=same"),
        ("--json", "call", "r", "echo", "text=same"),
        ("call", "r", "nope"),
        ("--json", "call", "r", "nope"),
        ("call", "ghost", "echo"),
        ("status", "--json"),
        ("slash", "/mcp --json"),
        ("slash", "/mcp:frob"),
        ("complete", "/mcp:st"),
        ("call", "r", "echo", "--args", "{not json"),
        ("serve", "--server", "ghost"),
        ("serve", "--stdio", "--http", "8765"),
        ("serve", "--names", "odd"),
        ("serve", "--print-token"),
        ("call", "r", "echo", "txt=x"),
        ("tools", "r", "echo", "--json"),
        ("check", "--call", "r/echo text=x --expect x"),
        ("--json", "check", "r", "off"),
        ("enable", "ghost"),
        ("--json", "disable", "ghost"),
    ]
    one_shot = {line: scoped.run_here(*line) for line in lines}
    with daemon(scoped):
        for line in lines:
            warm = scoped.run(*line)
            cold = one_shot[line]
            assert (warm.code, warm.out, warm.err) == (cold.code, cold.out, cold.err), line


def test_enable_and_disable_switch_the_daemons_live_server(scoped: Scoped) -> None:
    scoped.write({"r": raw_entry(), "s": raw_entry(lifecycle="lazy")})
    with daemon(scoped):
        assert json.loads(scoped.run("status", "--json").out)[0]["state"] == "ready"
        off = scoped.run("disable", "r", "--json")
        assert off.code == 0 and off.json()["state"] == "stopped", off.err
        assert json.loads(scoped.config.read_text())["mcpServers"]["r"]["enabled"] is False
        rows = {row["name"]: row for row in json.loads(scoped.run("status", "--json").out)}
        assert (rows["r"]["state"], rows["r"]["lifecycle"]) == ("disabled", "lazy (disabled)")
        on = scoped.run("slash", "/mcp:enable s --json")
        assert on.code == 0 and json.loads(on.out)["state"] == "ready"  # a lazy one starts when enabled
        assert scoped.run("enable", "r").code == 0
        states = {row["name"]: row["state"] for row in json.loads(scoped.run("status", "--json").out)}
        assert states == {"r": "ready", "s": "ready"}


def test_a_servers_questions_are_answered_the_same_in_the_daemon(warm: Scoped) -> None:
    """Without a terminal both decline, say so the same way, and complete from the server alike."""
    warm.write({"a": stdio_entry("asks")})
    lines = [
        ("call", "a", "form"),
        ("--json", "call", "a", "form"),
        ("call", "a", "roots"),
        ("read", "a", "mem://note"),
        ("complete", "orbmcp prompt a completable department=E"),
        ("complete", "orbmcp read a mem://items/b"),
    ]
    one_shot = {line: warm.run_here(*line) for line in lines}
    for line in lines:
        served = warm.run(*line)
        cold = one_shot[line]
        assert (served.code, served.out, served.err) == (cold.code, cold.out, cold.err), line
    assert "declined: not interactive" in one_shot[lines[0]].out
    assert one_shot[lines[4]].out == "department=Engineering\n"


def test_slash_and_complete_see_the_live_session(warm: Scoped) -> None:
    warm.write({"r": raw_entry(lifecycle="lazy"), "s": raw_entry(lifecycle="lazy")})
    assert warm.run("slash", "/mcp:start r").code == 0
    assert warm.run("complete", "/mcp:stop ").out.split() == ["r"]  # only what runs
    assert warm.run("complete", "orbmcp call r e").out.split() == ["echo"]
    assert warm.run("slash", "/mcp:stop r").code == 0
    assert json.loads(warm.run("slash", "/mcp --json").out)[0]["state"] == "stopped"


def test_the_idle_timeout_stops_the_daemon_and_its_servers(scoped: Scoped, tmp_path: Path) -> None:
    rec = tmp_path / "r.jsonl"
    scoped.write({"r": raw_entry("--record", str(rec))})
    info = scoped.start("--idle-timeout", "5s")  # long enough that start-up under load is not idle
    try:
        assert scoped.run("call", "r", "echo", "text=x").code == 0
        wait_for(lambda: not alive(info["pid"]), timeout=60, what="the idle daemon to exit")
        assert not scoped.socket.exists()
    finally:
        scoped.stop()


def test_a_stale_socket_is_removed_and_the_command_runs_one_shot(scoped: Scoped) -> None:
    scoped.write({"r": raw_entry()})
    info = scoped.start()
    os.kill(info["pid"], signal.SIGKILL)
    wait_for(lambda: not alive(info["pid"]), what="the killed daemon")
    wait_for(lambda: not accepting(scoped.socket), what="the killed daemon's socket to close")
    assert scoped.socket.exists()
    run = scoped.run("call", "r", "echo", "text=cold")
    assert (run.code, run.out) == (0, "cold\n")
    assert "session daemon of this scope is gone" in run.err
    assert not scoped.socket.exists()
    again = scoped.run("call", "r", "echo", "text=quiet")
    assert again.err == ""  # said once


def test_auto_starts_the_daemon_on_the_first_connecting_command(scoped: Scoped) -> None:
    scoped.write({"r": raw_entry()}, settings={"daemon": "auto"})
    try:
        assert scoped.run("config", "show").code == 0 and scoped.daemon_pid() is None  # does not connect
        first = scoped.run("call", "r", "echo", "text=auto")
        assert (first.code, first.out) == (0, "auto\n")
        assert "started the session daemon" in first.err
        pid = scoped.daemon_pid()
        assert pid is not None and alive(pid)
        second = scoped.run("call", "r", "echo", "text=warm")
        assert (second.out, second.err) == ("warm\n", "")
    finally:
        scoped.stop()


def test_a_project_cannot_turn_the_daemon_on(scoped: Scoped) -> None:
    scoped.write({"r": raw_entry()})
    (scoped.project / ".orb").mkdir()
    (scoped.project / ".orb" / "mcp.json").write_text(json.dumps({"settings": {"daemon": "auto"}}))
    assert scoped.run("trust", "--yes").code == 0
    run = scoped.run("call", "r", "echo", "text=x")
    assert run.code == 0 and scoped.daemon_pid() is None
    assert "global setting" in scoped.run("config", "validate").out + scoped.run("config", "show").out


def test_two_starts_at_once_leave_one_daemon(scoped: Scoped) -> None:
    scoped.write({"r": raw_entry()})
    try:
        procs = [scoped.popen("daemon", "start", "--json") for _ in range(3)]
        answers = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            answers.append(json.loads(out))
        assert len({a["pid"] for a in answers}) == 1
    finally:
        scoped.stop()


async def test_a_killed_daemon_leaves_no_orphans_after_the_next_command(scoped: Scoped) -> None:
    import anyio

    from tests.servers.launch import LivenessServer

    async with LivenessServer() as live:
        scoped.write({"r": raw_entry("--liveness", live.address, "--spawn-child")})
        info = await anyio.to_thread.run_sync(scoped.start)
        try:
            call = await anyio.to_thread.run_sync(lambda: scoped.run("call", "r", "echo", "text=x"))
            assert call.code == 0
            await live.wait_registered(2, timeout=30)  # the server and its child
            os.kill(info["pid"], signal.SIGKILL)
            # The next command finds the socket dead, runs one-shot, and its session reaps the
            # process groups the killed daemon recorded.
            after = await anyio.to_thread.run_sync(lambda: scoped.run("call", "r", "echo", "text=y"))
            assert after.code == 0 and after.out == "y\n"
            await live.wait_all_dead(timeout=60)
        finally:
            await anyio.to_thread.run_sync(scoped.stop)


def test_a_terminal_gets_the_same_rich_output_as_one_shot(warm: Scoped) -> None:
    from tests.frontends import Pty

    warm.write({"r": raw_entry()})

    def screen(*args: str) -> bytes:
        term = Pty(warm.argv(*args), warm.env(TERM="xterm-256color"), cols=100)
        try:
            out = term.read_until(b"source", timeout=60)  # the table's last column heading
            out += term.read_until(b"global", timeout=60)
            assert term.wait(timeout=60) == 0
            return out
        finally:
            term.close()

    shown = screen("status")
    assert b"\x1b[" in shown  # colour: the daemon rendered for the client's terminal
    assert b"server" in shown and b"lifecycle" in shown


def test_a_daemon_of_another_protocol_version_is_replaced(scoped: Scoped) -> None:
    import subprocess
    import sys

    scoped.write({"r": raw_entry()})
    old = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("old_daemon.py")), str(scoped.socket)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert old.stdout is not None and old.stdout.readline() == "ready\n"
        run = scoped.run("call", "r", "echo", "text=new")
        assert (run.code, run.out) == (0, "new\n"), run.err
        assert "spoke another protocol version" in run.err
        assert old.wait(timeout=30) == 0  # asked to stop, not killed
        pid = scoped.daemon_pid()
        assert pid is not None and pid != old.pid and alive(pid)
    finally:
        old.kill()
        old.wait()
        scoped.stop()


def test_stdin_goes_from_the_client_to_the_command(warm: Scoped) -> None:
    warm.write({"r": raw_entry()})
    run = warm.run("call", "r", "echo", "-", stdin='{"text": "piped"}')
    assert (run.code, run.out) == (0, "piped\n")
    bad = warm.run("call", "r", "echo", "-", stdin="{not json")
    cold = warm.run("call", "r", "echo", "-", "--no-daemon", stdin="{not json")
    assert (bad.code, bad.err) == (cold.code, cold.err) and bad.code == 2


def test_oauth_paste_back_is_asked_on_the_clients_terminal(scoped: Scoped) -> None:
    import re
    import subprocess

    import httpx2

    from tests.auth.oauth_server import ASOptions, server_thread

    with server_thread(ASOptions()) as srv:
        scoped.write({"srv": {"url": srv.mcp_url, "auth": {"type": "oauth"}, "timeoutMs": 8000}})
        with daemon(scoped):
            assert scoped.run("status", "--json").json()[0]["state"] == "needs-auth"
            proc = subprocess.Popen(
                scoped.argv("auth", "srv", "--no-browser"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=scoped.env(),
                cwd=scoped.project,
            )
            assert proc.stdin is not None and proc.stderr is not None
            printed = b""
            while not printed.endswith(b"> "):  # the question, on this client's stderr
                chunk = proc.stderr.read1(4096)
                assert chunk, printed
                printed += chunk
            url = re.search(rb"(http://127\.0\.0\.1:\d+/authorize\?\S+)", printed)
            assert url is not None
            answer = httpx2.get(url.group(1).decode(), follow_redirects=False)
            proc.stdin.write(answer.headers["location"].encode() + b"\n")
            proc.stdin.flush()
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            assert b"authorized 'srv'" in out
            # The live connection was re-made with the new credentials: the session is ready.
            assert scoped.run("status", "--json").json()[0]["state"] == "ready"
