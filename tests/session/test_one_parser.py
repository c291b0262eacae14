"""One parser for every front (issue 25 item 1): the shell's argv, a slash line and a line the
session daemon runs bind a command's words the same way, so a usage error, a default and a
conversion come out the same wherever the person typed the command.

The one-shot and slash lines run in-process (``Scoped.run_here``: the same entry point as
``python -m orbmcp``, without an interpreter start per line); the forwarded lines reach a real
daemon from a real client process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.core.live import raw_entry
from tests.daemon import Run, Scoped, daemon, scope_in

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="Unix sockets and uids")

TEXT = "hello, parser"


@pytest.fixture
def scoped(tmp_path: Path) -> Scoped:
    scoped = scope_in(tmp_path)
    scoped.write({"r": raw_entry()})
    return scoped


def _served(scoped: Scoped) -> int:
    served: int = scoped.run("daemon", "status", "--json").json()["clientsServed"]
    return served


def _slash(scoped: Scoped, line: str) -> tuple[int, Any, Any]:
    """``orbmcp slash LINE --json``: the exit status, the result's JSON and the error."""
    run = scoped.run_here("slash", line, "--json")
    envelope = json.loads(run.out)
    assert envelope["exit"] == run.code
    return run.code, envelope["json"], envelope["error"]


def _error(run: Run) -> dict[str, Any]:
    assert run.out == "", run.out
    error: dict[str, Any] = json.loads(run.err)["error"]
    return error


def test_a_usage_error_is_the_same_on_every_front(scoped: Scoped) -> None:
    words = ("call", "r", "echo", f"text={TEXT}", "--max-output", "lots", "--json")
    one_shot = scoped.run_here(*words)
    code, result, slash_error = _slash(scoped, "/mcp " + " ".join(words[:3]) + " --max-output lots")
    with daemon(scoped):
        before = _served(scoped)
        forwarded = scoped.run(*words)
        assert _served(scoped) == before + 1  # the daemon answered the line itself
    assert one_shot.code == forwarded.code == code == 2
    assert result is None
    shell_error, daemon_error = _error(one_shot), _error(forwarded)
    assert shell_error == daemon_error
    assert shell_error["message"] == slash_error["message"]
    assert shell_error["message"] == "Invalid value for '--max-output': 'lots' is not a valid int."
    # The usage line, each front spelling the command its own way.
    assert shell_error["hint"] == "usage: orbmcp call [OPTIONS] SERVER [TOOL] [ARGUMENTS]..."
    assert slash_error["hint"] == "usage: /mcp call [OPTIONS] SERVER [TOOL] [ARGUMENTS]..."


def test_a_default_and_a_conversion_are_the_same_on_every_front(scoped: Scoped) -> None:
    """``--max-output 5``: a string made an int on each front, and without it, no limit."""
    outputs: dict[tuple[str, ...], list[str]] = {}
    for options in ((), ("--max-output", "5")):
        words = ("call", "r", "echo", f"text={TEXT}", *options)
        one_shot = scoped.run_here(*words)
        slash = scoped.run_here("slash", f"/mcp call r echo 'text={TEXT}' {' '.join(options)}")
        assert one_shot.code == slash.code == 0, (one_shot.err, slash.err)
        outputs[options] = [one_shot.out, slash.out]
    with daemon(scoped):
        for options, seen in outputs.items():
            forwarded = scoped.run("call", "r", "echo", f"text={TEXT}", *options)
            assert forwarded.code == 0, forwarded.err
            seen.append(forwarded.out)
    for shell, slash_text, forwarded_text in outputs.values():
        assert shell.strip() == slash_text.strip() == forwarded_text.strip()
    assert TEXT in outputs[()][0]
    assert TEXT not in outputs[("--max-output", "5")][0] and TEXT[:5] in outputs[("--max-output", "5")][0]
