"""The facts the daemon's client reads off a command line without the command table (it imports
no ``typing``, ``dataclasses`` or config model: ``orbmcp/fastpath/argv.py``) agree with their
sources: the table, the program's options, the transports, the config paths."""

from __future__ import annotations

from pathlib import Path

from orbmcp.commands.params import GLOBAL_OPTIONS
from orbmcp.commands.table import COMMANDS
from orbmcp.config.paths import global_files, project_files
from orbmcp.fastpath import argv
from orbmcp.fastpath.daemon_client import config_files
from orbmcp.session.daemon_scope import Scope

# Commands that connect but never run in the daemon: its own management, the REPL (a session of
# its own), and serve (a request of its own, ``serve_client``).
RUN_HERE = {("daemon", "start"), ("daemon", "stop"), ("daemon", "restart"), ("daemon", "status")}
RUN_HERE |= {("shell",), ("serve",)}
# Commands that do not connect but read the daemon's live session (its servers, tool names).
LIVE_SESSION = {("slash",), ("complete",)}


def test_the_daemon_runs_every_command_that_connects_and_the_live_session_readers() -> None:
    expected = {s.path for s in COMMANDS if (s.connects or s.path in LIVE_SESSION) and s.path not in RUN_HERE}
    assert {s.path for s in COMMANDS if s.runs_in_daemon} == expected
    # The client's copy is the table's, written by scripts/gen_docs.py (test_docs_fresh: fresh).
    assert {(word,) for word in argv.DAEMON_COMMANDS} == expected
    assert all(argv.runs_in_daemon(path) for path in expected)
    assert not any(argv.runs_in_daemon(s.path) for s in COMMANDS if s.path not in expected)


def test_the_program_options_are_those_of_the_table() -> None:
    valued = tuple(f for p in GLOBAL_OPTIONS if p.kind == "option" for f in p.option_names)
    skip = ("version", "help", "json")  # eager, or also a per-command option
    flags = tuple(
        f for p in GLOBAL_OPTIONS if p.kind == "flag" and p.name not in skip for f in p.option_names
    )
    assert (valued, flags) == (argv.VALUED_OPTIONS, argv.PROGRAM_FLAGS)


def test_the_adhoc_options_are_one_per_transport() -> None:
    assert argv.ADHOC_OPTIONS == ("--stdio", "--http", "--sse")


def test_the_client_reads_the_files_the_config_paths_name(tmp_path: Path) -> None:
    scope = Scope(0, str(tmp_path / "g"), str(tmp_path / "p"), None)
    expected = [*global_files(tmp_path / "g"), *project_files(tmp_path / "p")]
    assert config_files(scope) == [str(p) for p in expected]
    assert config_files(scope._replace(config_file="/x/mcp.json")) == ["/x/mcp.json"]


def test_a_line_is_forwarded_by_its_first_word_unless_it_names_a_server() -> None:
    def forwarded(*words: str) -> tuple[str, ...] | None:
        return argv.forwarded_command(argv.ProgramLine(words))

    assert forwarded("-p", "x", "call", "s", "t") == ("call",)
    assert forwarded("config", "show") is None
    assert forwarded() is None
    assert forwarded("stauts") is None
    assert forwarded("call", "--http=https://h/mcp", "t") is None
    assert forwarded("tools", "HTTPS://h/mcp") is None
    assert forwarded("call", "s", "t", "--", "--stdio") == ("call",)  # after --: a value
    assert forwarded("serve", "--server", "http://h/mcp") is None
    assert forwarded("serve", "--server=https://h/mcp") is None
    assert forwarded("serve", "--server", "everything") == ("serve",)
