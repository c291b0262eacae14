"""A server's questions on a terminal, typed as a person would (a pseudo-terminal), and on none.

``orbmcp call`` runs as a real process on a pty where the terminal is the point (prompts, echo,
Ctrl-D, Ctrl-C); everything without a terminal runs in-process (``run_cli``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli import run_cli
from tests.core.live import stdio_entry
from tests.frontends import PY, Pty, env_for
from tests.servers.asks import BLOB, MARKER_ENV
from tests.timeouts import LONG_GUARD_S, generous_servers

BOUND_S = LONG_GUARD_S


def config(tmp_path: Path, **settings: Any) -> Path:
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    body: dict[str, Any] = {
        "mcpServers": generous_servers(
            {
                "asks": stdio_entry("asks", env={MARKER_ENV: str(markers)}),
                "tasks": stdio_entry("tasks", env={MARKER_ENV: str(markers)}),
            }
        )
    }
    if settings:
        body["settings"] = settings
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def on_pty(cfg: Path, *args: str, **env: str) -> Pty:
    return Pty([PY, "-m", "orbmcp", "--config", str(cfg), *args], env_for(None, **env))


def answer(pty: Pty, prompt: bytes, text: bytes) -> bytes:
    seen = pty.read_until(prompt, timeout=BOUND_S)
    pty.send(text)
    return seen


def tool_json(pty: Pty) -> tuple[int, Any]:
    code = pty.wait(BOUND_S)
    lines = [x for x in pty.buffer.decode(errors="replace").splitlines() if x.startswith("{")]
    return code, json.loads(lines[-1])


def test_a_person_fills_in_every_kind_of_field(tmp_path: Path) -> None:
    pty = on_pty(config(tmp_path), "call", "asks", "form")
    try:
        head = answer(pty, b"[Y]es, [d]ecline, [c]ancel: ", b"y\n")
        assert b"Server 'asks' asks for input:\r\n  Tell us about you (escaped)" in head
        assert b"\x1b[31m" not in head  # the server's escape sequence never reaches the terminal
        typed = [
            b"\n",  # name is required: asked again
            b"Ada\n",
            b"maybe\n",  # not a boolean
            b"yes\n",
            b"ada@example.org\n",
            b"\n",  # homepage skipped
            b"2024-02-30\n",  # no such date
            b"2024-02-29\n",
            b"2025-01-31T09:30:00Z\n",
            b"\n",  # count keeps its default, 3
            b"0.5\n",
            b"3\n",  # color: blue
            b"Large\n",  # size by title
            b"2\n",  # pet: Dog (enumNames)
            b"1,3\n",  # tags
            b"2\n",  # fish: Trout
        ]
        shown = b"".join(answer(pty, b"> ", text) for text in typed)
        summary = pty.read_until(b"Send? [Y/n]: ", timeout=BOUND_S)
        pty.send(b"\n")
        code, result = tool_json(pty)
    finally:
        pty.close()
    assert b"this field is required" in shown and b"answer y or n" in shown and b"not a date" in shown
    assert b"  2) green  (default)" in shown and b"[a whole number from 1 to 10; Enter keeps 3]" in shown
    assert b"Color: blue" in summary and b"Pet: Dog" in summary
    assert code == 0 and result == {
        "action": "accept",
        "content": {
            "agree": True,
            "birthday": "2024-02-29",
            "color": "blue",
            "count": 3,
            "email": "ada@example.org",
            "fish": ["f2"],
            "meeting": "2025-01-31T09:30:00Z",
            "name": "Ada",
            "pet": "p2",
            "ratio": 0.5,
            "size": "l",
            "tags": ["a", "c"],
        },
    }


def test_decline_at_the_door_and_cancel_with_ctrl_d(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    pty = on_pty(cfg, "call", "asks", "form")
    try:
        answer(pty, b"[Y]es, [d]ecline, [c]ancel: ", b"d\n")
        code, result = tool_json(pty)
    finally:
        pty.close()
    assert code == 0 and result == {"action": "decline", "content": None}
    pty = on_pty(cfg, "call", "asks", "form")
    try:
        answer(pty, b"[Y]es, [d]ecline, [c]ancel: ", b"y\n")
        answer(pty, b"> ", b"Ada\n")
        answer(pty, b"> ", b"\x04")  # Ctrl-D at an empty line: end of input
        code, result = tool_json(pty)
    finally:
        pty.close()
    assert code == 0 and result == {"action": "cancel", "content": None}
    assert b"Cancelled." in pty.buffer


def test_a_url_opens_only_when_the_person_agrees(tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import sys\nopen({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    cfg = config(tmp_path)
    env = {"BROWSER": f"{sys.executable} {browser} %s"}
    pty = on_pty(cfg, "call", "asks", "open_url", "url=https://example.com/connect?x=1", **env)
    try:
        head = answer(pty, b"Open it in your browser? [y/N]: ", b"y\n")
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert b"Connect your account" in head and b"URL: https://example.com/connect?x=1" in head
    assert code == 0 and b"accept" in pty.buffer
    assert opened.read_text().splitlines() == ["https://example.com/connect?x=1"]
    pty = on_pty(cfg, "call", "asks", "open_url", **env)
    try:
        answer(pty, b"Open it in your browser? [y/N]: ", b"\n")
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert code == 0 and b"decline" in pty.buffer and len(opened.read_text().splitlines()) == 1
    pty = on_pty(cfg, "call", "asks", "open_url", "url=javascript:alert(1)", **env)
    try:
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert b"orbmcp will not open it" in pty.buffer and b"decline" in pty.buffer


def test_a_32042_call_is_retried_once_the_person_is_done(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    env = {"BROWSER": f"{sys.executable} -c pass %s"}
    pty = on_pty(cfg, "call", "asks", "needs_url", **env)
    try:
        answer(pty, b"Open it in your browser? [y/N]: ", b"y\n")
        answer(pty, b"(or type c to cancel): ", b"\n")
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert code == 0 and b"authorized" in pty.buffer


def test_sampling_is_shown_and_runs_only_when_approved(tmp_path: Path) -> None:
    model = tmp_path / "model.py"
    model.write_text(
        "import json, sys\njson.load(sys.stdin)\n"
        "print(json.dumps({'content': {'type': 'text', 'text': 'ok'}, 'model': 'approved-model'}))\n"
    )
    cfg = config(tmp_path, sampling={"command": [sys.executable, str(model)]})
    pty = on_pty(cfg, "call", "asks", "sample", "prompt=hello \x1b[2Jthere")
    try:
        shown = answer(pty, b"on it? [y/N]: ", b"y\n")
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert b"Server 'asks' asks for a model's answer (sampling):" in shown
    assert b"system prompt: You are a test." in shown and b"[user] hello there" in shown
    assert b"max tokens 50" in shown and b"\x1b[2J" not in shown
    assert code == 0 and b"approved-model: ok" in pty.buffer
    pty = on_pty(cfg, "call", "asks", "sample")
    try:
        answer(pty, b"on it? [y/N]: ", b"n\n")
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert b"error: User rejected sampling request: declined by the person" in pty.buffer


def test_an_ambiguous_task_asks_in_the_middle(tmp_path: Path) -> None:
    pty = on_pty(config(tmp_path), "call", "tasks", "research", "topic=py", "ambiguous:=true")
    try:
        seen = answer(pty, b"[Y]es, [d]ecline, [c]ancel: ", b"y\n")
        answer(pty, b"> ", b"1\n")
        answer(pty, b"Send? [Y/n]: ", b"y\n")
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert code == 0 and b"Report on py (technical): 4 stages" in pty.buffer
    assert b"input required: needs a clarification" in seen  # the task's status as progress


def test_ctrl_c_during_a_task_cancels_it_on_the_server(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    markers = tmp_path / "markers"
    pty = on_pty(cfg, "call", "tasks", "forever")
    try:
        # The task's status message: the server runs it, and orbmcp holds it now.
        pty.read_until(b"running until cancelled", timeout=BOUND_S)
        pty.send(b"\x03")
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert code == 130 and (markers / "task-cancelled").exists()


# -- no terminal -------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["json", "no-input", "ci", "pipe"])
def test_without_a_person_questions_are_declined_and_the_result_says_so(tmp_path: Path, how: str) -> None:
    cfg = config(tmp_path)
    args = ["--config", str(cfg), "call", "asks", "form"]
    env = env_for(None)
    if how == "json":
        args.append("--json")
    elif how == "no-input":
        args.insert(0, "--no-input")
    elif how == "ci":
        env["CI"] = "true"
    r = run_cli(*args, env=env)
    assert r.code == 0, r.stderr
    if how == "json":
        body = r.json()
        assert json.loads(body["content"][0]["text"])["action"] == "decline"
        (interaction,) = body["interactions"]
        assert interaction["kind"] == "elicitation" and interaction["action"] == "decline"
        assert interaction["reason"].startswith("not interactive")
    else:
        assert '"action": "decline"' in r.stdout
        assert (
            "[note: server 'asks' asked for input (\"Tell us about you (escaped)\"); declined: not interactive"
            in r.stdout
        )


def test_log_messages_with_verbose_and_log_level(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    r = run_cli("--config", str(cfg), "call", "asks", "log", "--verbose")
    assert r.code == 0 and r.stdout == "logged\n"
    assert r.stderr.splitlines() == [
        "[asks] debug: asks: debug hello",
        '[asks] info: asks: {"said":"hello"}',
        "[asks] warning: token=<redacted> hello",
    ]
    quiet = run_cli("--config", str(cfg), "call", "asks", "log")
    assert quiet.stderr == ""
    level = run_cli("--config", str(cfg), "call", "asks", "level", "--log-level", "WARN")
    assert level.stdout == "warning\n"
    bad = run_cli("--config", str(cfg), "call", "asks", "level", "--log-level", "loud")
    assert bad.code == 2 and "--log-level: unknown log level 'loud'" in bad.stderr
    started = run_cli("--config", str(cfg), "start", "asks", "--log-level", "error", "--json")
    assert started.code == 0 and (tmp_path / "markers" / "level").read_text() == "error"


def test_status_shows_instructions_and_capabilities(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    r = run_cli("--config", str(cfg), "status", "asks", "--json")
    body = r.json()
    assert body["instructions"] == "Use the form tool to test elicitation.\nNever call touch in production."
    assert body["capabilities"]["advertised"] == {"elicitation": {"form": {}, "url": {}}}
    assert body["roots"] is None  # none configured: not offered (never the current directory)
    assert body["capabilities"]["server"]["completions"] == {}
    text = run_cli("--config", str(cfg), "status", "asks").stdout
    assert "orbmcp offers: elicitation (form, url)\n" in text and "Instructions:" in text


def test_read_saves_binary_contents(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    out = tmp_path / "blob.bin"
    r = run_cli("--config", str(cfg), "read", "asks", "mem://blob", "--output", str(out))
    assert r.code == 0 and out.read_bytes() == BLOB and r.stdout == f"[saved mem://blob: 1.0 KB to {out}]\n"


def test_complete_asks_the_server_for_prompt_and_template_values(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    line = "orbmcp prompt asks completable department=E"
    r = run_cli("--config", str(cfg), "complete", line)
    assert r.code == 0 and r.stdout == "department=Engineering\n"
    r = run_cli("--config", str(cfg), "complete", "orbmcp read asks mem://items/a", "--json")
    assert [item["value"] for item in r.json()["items"]] == ["mem://items/alpha"]
    plain = run_cli("--config", str(cfg), "complete", "orbmcp call asks ")  # no server needed
    assert "form" in plain.stdout.split()


def test_a_sigint_ends_a_waiting_prompt_and_stops_the_server(tmp_path: Path) -> None:
    """Ctrl-C while a person is being asked: exit 130, the server's process gone."""
    cfg = config(tmp_path)
    pty = on_pty(cfg, "call", "asks", "form")
    try:
        pty.read_until(b"[Y]es, [d]ecline, [c]ancel: ", timeout=BOUND_S)
        os.kill(pty.proc.pid, signal.SIGINT)
        code = pty.wait(BOUND_S)
    finally:
        pty.close()
    assert code == 130 and b"interrupted by SIGINT" in pty.buffer


def test_no_input_on_a_terminal_asks_nothing(tmp_path: Path) -> None:
    pty = on_pty(config(tmp_path), "--no-input", "call", "asks", "form")
    try:
        code, result = tool_json(pty)
    finally:
        pty.close()
    assert code == 0 and result["action"] == "decline"
    assert b"[Y]es" not in pty.buffer and b"declined: not interactive" in pty.buffer


def test_the_repl_completes_from_its_own_connection(tmp_path: Path) -> None:
    from anyio.from_thread import start_blocking_portal

    from orbmcp.commands.context import CommandContext
    from orbmcp.frontends.shell import Shell
    from orbmcp.session.persistent import PersistentSessions
    from orbmcp.session.terminal import TerminalUI

    ctx = CommandContext(ui=TerminalUI(interactive=False), config_file=config(tmp_path))
    sessions = PersistentSessions(ctx.config(), ui=ctx.ui)
    ctx.sessions = sessions
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(sessions):
        shell = Shell(ctx, sessions, portal, lambda text: None)
        assert shell.complete("prompt asks completable department=Su") == ["department=Support"]
        assert shell.complete("read asks mem://n") == ["mem://note"]
