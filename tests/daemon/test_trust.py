"""The client trusts only its own daemon, and not blindly even then (issue 24, item 1).

A real fake daemon (``tests/servers/fake_daemon.py``) listens where the client looks for its
scope's daemon, as another user (when the tests run as root) or in a directory with the wrong
mode; the client is the real CLI in a subprocess.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orbmcp.daemon.policy import digest, digest_key
from orbmcp.session.daemon_scope import UnsafeDirectory, current_scope, make_private_dir, socket_path
from orbmcp.session.daemon_trust import UntrustedDaemon, connect_verified
from orbmcp.text import terminal_output
from tests.daemon import ROOT, Run, Scoped, daemon
from tests.test_cli_foundation import NOT_ON_FAST_PATHS

FAKE = ROOT / "tests" / "servers" / "fake_daemon.py"
NOBODY = 65534
as_root = pytest.mark.skipif(os.getuid() != 0, reason="impersonating another user needs root")


@pytest.fixture
def base() -> Iterator[Path]:
    """A TMPDIR another user can reach (pytest's own tmp dirs are 0700): the client's runtime
    directory then is ``<base>/orbmcp-<uid>``, as under /tmp without XDG_RUNTIME_DIR."""
    path = Path(tempfile.mkdtemp(prefix="orbmcp-trust-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Client:
    def __init__(self, tmp_path: Path, base: Path) -> None:
        self.scoped = Scoped(tmp_path / "home", tmp_path / "project")
        self.scoped.project.mkdir(parents=True)
        self.scoped.write({}, settings={"probe": "${OTHER}"})
        self.base = base
        scope = current_scope(environ={"ORB_AGENT_DIR": str(self.scoped.home)}, cwd=self.scoped.project)
        self.socket = socket_path(scope, {"TMPDIR": str(base)})
        self.record = tmp_path / "record.jsonl"

    def env(self, **extra: str) -> dict[str, str]:
        env = self.scoped.env(TMPDIR=str(self.base), **extra)
        env.pop("XDG_RUNTIME_DIR", None)
        return env

    def run(self, *args: str, stdin: str = "", python: bool = False, **extra: str) -> Run:
        """The CLI (``python``: ``args`` are the interpreter's own, ``-m orbmcp`` included)."""
        proc = subprocess.run(
            [sys.executable, *args] if python else [sys.executable, "-m", "orbmcp", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(**extra),
            cwd=self.scoped.project,
            timeout=60,
            check=False,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def events(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines()]

    @contextlib.contextmanager
    def fake(self, *options: str, script: list[dict[str, Any]] | None = None) -> Iterator[None]:
        argv = [sys.executable, str(FAKE), self.socket, str(self.record), *options]
        proc = subprocess.Popen(
            [*argv, "--script", json.dumps(script or [])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            assert ready and proc.stdout is not None and proc.stdout.readline() == "ready\n", proc.stderr
            yield
        finally:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def client(tmp_path: Path, base: Path) -> Client:
    return Client(tmp_path, base)


def refusal(run: Run, path: str, why: str) -> None:
    """One line on stderr names the path and why, and says the command ran here."""
    lines = [line for line in run.err.splitlines() if "session daemon" in line]
    assert len(lines) == 1, run.err
    assert lines[0].startswith(f"orbmcp: not using the session daemon at {path}: "), run.err
    assert why in lines[0] and lines[0].endswith("; running one-shot"), run.err


# -- another user got there first ------------------------------------------------------------------


@as_root
def test_another_users_directory_is_refused_and_gets_nothing(client: Client) -> None:
    with client.fake("--owner", str(NOBODY), "--dir-mode", "777"):
        run = client.run("status", "--json")
    assert run.code == 0, run.err  # one-shot ran
    assert json.loads(run.out) == []
    refusal(run, os.path.dirname(client.socket), f"belongs to uid {NOBODY}, not to you")
    assert client.events() == []  # not even a connection: no argv, no cwd, no environment


@as_root
def test_a_listener_of_another_uid_is_refused_before_anything_is_sent(client: Client) -> None:
    # Directory and socket look private and ours; only the listening process's uid gives it away.
    with client.fake("--listen-as", str(NOBODY)):
        run = client.run("status", "--json")
    assert run.code == 0, run.err
    refusal(run, client.socket, f"the process listening on it runs as uid {NOBODY}")
    events = client.events()
    assert [e["event"] for e in events] == ["accepted", "bytes"] and events[1]["data"] == "", events


@pytest.mark.parametrize(("mode", "shown"), [("755", "0755"), ("770", "0770"), ("705", "0705")])
def test_a_directory_open_to_others_is_refused(client: Client, mode: str, shown: str) -> None:
    with client.fake("--dir-mode", mode):
        run = client.run("status", "--json")
    assert run.code == 0, run.err
    refusal(run, os.path.dirname(client.socket), f"is open to group or others (mode {shown}")
    assert client.events() == []


def test_daemon_status_refuses_it_too(client: Client) -> None:
    with client.fake("--dir-mode", "755"):
        run = client.run("daemon", "status")
    assert run.code != 0 and os.path.dirname(client.socket) in run.err and "mode 0755" in run.err, run.err
    assert client.events() == []


def test_serve_refuses_it_too(client: Client) -> None:
    with client.fake("--dir-mode", "755"):
        run = client.run("serve", stdin="")  # the agent's stdin ends at once: one-shot serve exits
    refusal(run, os.path.dirname(client.socket), "is open to group or others (mode 0755")
    assert client.events() == []


def test_the_daemon_refuses_a_loose_or_foreign_runtime_directory(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o700)
    loose.chmod(0o755)  # ours, but readable by all: made or loosened by someone else
    with pytest.raises(UnsafeDirectory, match=f"{loose} is open to group or others"):
        make_private_dir(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o755  # refused, not repaired
    if os.getuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, NOBODY, NOBODY)
        with pytest.raises(UnsafeDirectory, match=f"belongs to uid {NOBODY}"):
            make_private_dir(foreign)


def test_connect_verified(tmp_path: Path) -> None:
    assert connect_verified(str(tmp_path / "none" / "d.sock"), timeout=5) is None
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert connect_verified(str(private / "d.sock"), timeout=5) is None  # no socket
    (private / "d.sock").write_text("")
    with pytest.raises(UntrustedDaemon, match="is not a socket"):
        connect_verified(str(private / "d.sock"), timeout=5)
    dead = str(private / "dead.sock")
    old = os.umask(0o177)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bound:
            bound.bind(dead)  # a socket file nobody listens on (its daemon died)
    finally:
        os.umask(old)
    assert connect_verified(dead, timeout=5) is None


# -- our own daemon, still not trusted blindly -----------------------------------------------------

HOSTILE_OUT = (
    "\x1b[31mred\x1b[0m plain\n"
    "\x1b]52;c;c3RvbGVu\x07"  # OSC 52: write the clipboard
    "\x1b]0;owned title\x1b\\"  # set the window title
    "\x1bP$qm\x1b\\"  # DCS: a request the terminal answers as typed input
    "\x1b[6n"  # cursor position report: input injection
    "bell\x07 back\x08 done\n"
)


def test_hostile_frames_of_a_verified_daemon_are_neutralised(client: Client, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {opened}\n')
    browser.chmod(0o755)
    script = [
        {"t": "out", "data": HOSTILE_OUT},
        {"t": "err", "data": "\x1b]0;err title\x07warn\n"},
        {"t": "open_url", "id": 1, "url": "file:///etc/passwd"},
        {"t": "open_url", "id": 2, "url": "javascript:alert(1)"},
        {"t": "open_url", "id": 3, "url": "https://example.test/ok"},
        {"t": "readline", "id": 4},
    ]
    with client.fake(script=script):
        run = client.run("status", stdin="typed\n", BROWSER=str(browser), OTHER="o-value", SECRET_PIN="1234")
    assert run.code == 0, run.err
    assert run.out == "\x1b[31mred\x1b[0m plain\nbell␇ back␈ done\n"
    assert "warn\n" in run.err and "\x1b]" not in run.err
    assert "not opening 'file:///etc/passwd'" in run.err and "not opening 'javascript:alert(1)'" in run.err
    assert opened.read_text().splitlines() == ["https://example.test/ok"]  # the one allowed
    answers = {
        e["to"] + str(e["answer"]["id"]): e["answer"]["value"]
        for e in client.events()
        if e["event"] == "answer"
    }
    assert answers == {"open_url1": False, "open_url2": False, "open_url3": True, "readline4": "typed\n"}


@pytest.mark.parametrize(
    ("frame", "code", "err"),
    [
        ({"t": "exit", "code": 10**30}, 70, ""),
        ({"t": "exit", "code": -1}, 70, ""),
        ({"t": "error", "message": "\x1b]0;title\x07bad\nline"}, 70, "orbmcp: session daemon: bad ⏎ line\n"),
    ],
)
def test_a_verified_daemons_last_frame_is_bounded_too(
    client: Client, frame: dict[str, Any], code: int, err: str
) -> None:
    with client.fake(script=[frame]):
        run = client.run("status")
    assert (run.code, run.err) == (code, err)


def test_digests_only_of_variables_the_clients_own_config_references(client: Client) -> None:
    with client.fake():
        run = client.run("status", OTHER="o-value", SECRET_PIN="1234")
    assert run.code == 0, run.err
    frames = [e["frame"] for e in client.events() if e["event"] == "frame"]
    request = frames[1]
    assert request["t"] == "run"
    # The fake asked for SECRET_PIN and OTHER; only OTHER is in this user's config.
    assert set(request["envDigests"]) == {"OTHER"}
    salt = request["envSalt"]
    assert len(salt) == 32 and request["envDigests"]["OTHER"] == digest(digest_key("n", salt), "o-value")
    assert request["envDigests"]["OTHER"] != digest("n", "o-value")  # not the daemon's salt alone


def test_the_verifying_client_stays_a_fast_path(client: Client, tmp_path: Path) -> None:
    browser = tmp_path / "browser.sh"
    browser.write_text("#!/bin/sh\nexit 0\n")
    browser.chmod(0o755)
    script = [
        {"t": "out", "data": "\x1b]0;t\x07ok\n"},
        {"t": "open_url", "id": 1, "url": "https://example.test/"},
    ]
    with client.fake(script=script):
        run = client.run("-X", "importtime", "-m", "orbmcp", "status", python=True, BROWSER=str(browser))
    assert run.code == 0 and run.out == "ok\n", run.err
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in run.err.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "orbmcp" in imported and imported & set(NOT_ON_FAST_PATHS) == set()


# What the forwarding client never reaches (it runs before every command): the command table's
# and config's models (of the config package, only the transports' kinds: stdlib, no dataclasses),
# and the standard library's slow imports they or a lazy habit pull in.
CONFIG_ON_THE_CLIENT = {"orbmcp.config", "orbmcp.config.transports"}
NOT_ON_THE_CLIENT = (
    "typing",
    "dataclasses",
    "inspect",
    "ast",
    "pathlib",
    "hashlib",
    "_hashlib",
    "orbmcp.commands.table",
    "orbmcp.commands.adhoc",
    "orbmcp.session.requests",
)


def test_the_forwarding_client_imports_only_what_it_uses(client: Client, tmp_path: Path) -> None:
    # The console script pip writes (it imports re itself), not ``-m``: runpy imports more.
    script = tmp_path / "orbmcp"
    script.write_text("import re, sys\nfrom orbmcp.__main__ import main\nsys.exit(main())\n")
    with client.fake(script=[{"t": "out", "data": "ok\n"}]):
        path = f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"  # no PATH hint to write
        run = client.run("-X", "importtime", str(script), "call", "s", "t", python=True, OTHER="o", PATH=path)
    assert run.code == 0 and run.out == "ok\n", run.err
    names = [
        line.rsplit("|", 1)[1].strip()
        for line in run.err.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    imported = set(names[names.index("site") + 1 :])  # the program's (site: an editable finder's)
    assert "orbmcp.fastpath.daemon_client" in imported  # the command went through the client
    assert imported & set(NOT_ON_THE_CLIENT) == set()
    assert {name for name in imported if name.startswith("orbmcp.config")} == CONFIG_ON_THE_CLIENT
    assert [e for e in client.events() if e["event"] == "frame"][1]["frame"]["envDigests"]["OTHER"]


def test_a_daemon_that_leaves_after_its_hello_leaves_the_command_to_run_here(client: Client) -> None:
    # An idle daemon stopping closes a client that said hello, its request unread: nothing ran
    # there, so the command runs one-shot (it was a raw BrokenPipeError traceback).
    with client.fake("--leave-after-hello"):
        run = client.run("status", "--json", OTHER="o")
    assert (run.code, run.out) == (0, "[]\n"), run.err
    assert "Traceback" not in run.err
    assert "orbmcp: the session daemon stopped before taking the command; running one-shot" in run.err
    assert [e["event"] for e in client.events()].count("left") == 1


def test_terminal_output_policy() -> None:
    kept = "\x1b[1;31mx\x1b[0m\x1b[2K\x1b[1A\x1b[?25l\x1b[?25h\r\n\t"
    assert terminal_output(kept) == kept
    assert terminal_output("\x9b31m\x9d0;t\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\") == "link"
    assert terminal_output("a\x00b\x7fc\x85") == "a␀b␡c\ufffd"
    assert terminal_output("plain") == "plain"


def test_a_real_daemon_still_reports_a_drifted_variable(tmp_path: Path) -> None:
    """The digests, salted by both ends, still compare equal values equal and differing ones not."""
    scoped = Scoped(tmp_path / "home", tmp_path / "project", extra_env={"PROBE_VAR": "started-with"})
    scoped.project.mkdir(parents=True)
    scoped.write({}, settings={"probe": "${PROBE_VAR}"})
    with daemon(scoped):
        same = scoped.run("status", "--json")
        drifted = scoped.run("status", "--json", PROBE_VAR="changed")
    assert same.code == 0 and "differs" not in same.err, same.err
    assert (
        drifted.code == 0
        and "$PROBE_VAR differs from the value the session daemon started with" in drifted.err
    )
