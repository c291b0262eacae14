"""The forwarding client: hands a command line to the scope's daemon and plays its output back.

Runs on every ``orbmcp`` invocation before anything heavy, so it imports only the standard
library (and orbmcp's own stdlib-only modules: ``argv``, the protocol, the scope); neither
``typing``, ``pathlib``, ``dataclasses`` nor ``hashlib`` (``tests/fastpath/test_import_sets.py``).
``maybe_forward(argv)`` returns None whenever the command should run here instead: no daemon,
``--no-daemon``/``ORBMCP_NO_DAEMON``, ``--help``, a command that does not connect, or a daemon that
says the line is not for it. Otherwise it returns the exit status the daemon reported.

The daemon renders exactly what the command prints one-shot, with this terminal's properties
(whether stdout/stderr are terminals, the width, NO_COLOR, TERM): the client only copies bytes,
answers the daemon's questions from this terminal (a line of stdin, stdin itself for ``call -``,
opening a URL), and turns Ctrl-C into a ``cancel`` for its own command only.

It talks only to this user's own daemon (``trust.connect_verified``: directory, socket and the
listening process's uid are checked before anything is sent), and still treats what the daemon
sends as untrusted: output is filtered for this terminal (``text.terminal_output``), a URL is
opened only if one-shot would open it, and variables are digested only when this user's own config
files reference them, salted by this client too.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from types import FrameType

from orbmcp import environment
from orbmcp.daemon.policy import digest_key, env_digests, slash_runs_here, variables_in
from orbmcp.daemon.signals import HandledSignals, signals_handled_by
from orbmcp.fastpath.argv import SERVE, ProgramLine, forwarded_command
from orbmcp.session import daemon_protocol as protocol
from orbmcp.session.daemon_scope import Scope, current_scope, socket_path, state_path
from orbmcp.session.daemon_trust import UntrustedDaemon, connect_verified
from orbmcp.text import one_line, terminal_output

TYPE_CHECKING = False  # not typing's (see the docstring)
if TYPE_CHECKING:
    import _socket
    from typing import Any

# What the daemon needs of this environment to render as this terminal would, and the settings
# that change what a command does. Secrets never cross: variables the config references are only
# compared, by salted digest (``env_digests``).
FORWARDED_ENV = (
    environment.NO_COLOR,
    environment.CI,
    "FORCE_COLOR",
    "TERM",
    "COLORTERM",
    "COLUMNS",
    "LINES",
    "TTY_COMPATIBLE",
)
FORWARDED_PREFIXES = ("ORBMCP_", environment.GLOBAL_DIR)
CONNECT_TIMEOUT_S = 2.0
STDIN_LIMIT = 16 * 1024 * 1024
# The config files of a scope, as ``config/paths.py`` names them (without its pathlib):
# ``global_files`` under the global dir, ``project_files`` under the project's.
GLOBAL_FILES = ("settings.json", "mcp.json")
PROJECT_CONFIG_DIR = ".orb"


# -- the conversation ------------------------------------------------------------------------------


def maybe_forward(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> int | None:
    env = os.environ if environ is None else environ
    if environment.no_daemon(env):
        return None
    line = ProgramLine(argv)
    path = forwarded_command(line) if not (line.no_daemon or line.help) else None
    if path is None or (path == ("slash",) and slash_runs_here(line.words)):
        return None
    kind = "serve" if path == SERVE else "run"
    scope = current_scope(project=line.project, config_file=line.config, environ=env)
    sock_path = socket_path(scope, env)
    sock = _verified(lambda: _running_or_started(scope, sock_path, env))
    replaced = False
    while sock is not None:  # once, or twice when the daemon found speaks another protocol
        try:
            code = Conversation(sock, scope, env, kind).run(list(argv))
        finally:
            sock.close()
        if code is not Conversation.RESTART or replaced:
            return code if isinstance(code, int) else None
        sock, replaced = _verified(lambda: _replaced(scope, sock_path)), True
    return None


def _verified(connect: Callable[[], _socket.socket | None]) -> _socket.socket | None:
    """``connect()``'s socket; None (said in one line) when what answers is not our daemon."""
    try:
        return connect()
    except UntrustedDaemon as exc:
        _refuse(exc)
        return None


def _running_or_started(scope: Scope, sock_path: str, env: Mapping[str, str]) -> _socket.socket | None:
    """The scope's running daemon; else one started here when the setting says ``auto``."""
    sock = _connect(sock_path)
    if sock is not None:
        return sock
    if os.path.exists(sock_path):
        _forget_stale(sock_path)
    if not auto_start_enabled(scope, env):
        return None
    return _start_and_connect(scope, sock_path, 'the daemon setting is "auto"')


def _replaced(scope: Scope, sock_path: str) -> _socket.socket | None:
    """An older (or newer) daemon speaks another protocol: stop it, start ours, connect."""
    # Here, not at the top: this module is a fast path, standard library only (import-set tests).
    from orbmcp.daemon.control import stop_scope
    from orbmcp.errors import OrbError

    try:
        stop_scope(scope)
    except OrbError as exc:
        sys.stderr.write(f"orbmcp: could not replace the session daemon ({exc.message}); running one-shot\n")
        return None
    return _start_and_connect(scope, sock_path, "the running one spoke another protocol version")


def auto_start_enabled(scope: Scope, environ: Mapping[str, str] | None = None) -> bool:
    """The global setting ``"daemon": "auto"``: its variable (``ORBMCP_DAEMON``, above every
    file, as in the settings model), else settings.json top level or mcp.json ``settings``."""
    variable = environment.setting("daemon", environ)
    if variable is not None and variable[1].strip() in ("auto", "off"):
        return variable[1].strip() == "auto"  # a bad value is the one-shot run's to report
    from pathlib import Path

    from orbmcp.config.jsonc import read_jsonc
    from orbmcp.config.paths import global_files

    value: object = "off"
    files = [Path(scope.config_file)] if scope.config_file else list(global_files(Path(scope.global_dir)))
    for path in files:
        try:
            document = read_jsonc(path)
        except Exception:  # a broken file is the one-shot run's to report
            document = None
        if not document:
            continue
        settings = document.get("settings")
        block = settings if isinstance(settings, dict) else {}
        stated = block.get("daemon", document.get("daemon"))
        if stated in ("auto", "off"):
            value = stated
    return value == "auto"


def _start_and_connect(scope: Scope, sock_path: str, why: str) -> _socket.socket | None:
    from orbmcp.daemon.control import spawn
    from orbmcp.daemon.server import DEFAULT_IDLE_TIMEOUT_S
    from orbmcp.errors import OrbError

    try:
        spawn(scope, idle_timeout_s=DEFAULT_IDLE_TIMEOUT_S)
    except OrbError as exc:
        sys.stderr.write(f"orbmcp: could not start the session daemon ({exc.message}); running one-shot\n")
        return None
    sys.stderr.write(
        f"orbmcp: started the session daemon of this scope ({why}); `orbmcp daemon stop` stops it\n"
    )
    return _connect(sock_path)


def _connect(path: str) -> _socket.socket | None:
    sock = connect_verified(path, timeout=CONNECT_TIMEOUT_S)
    if sock is not None:
        sock.settimeout(None)
    return sock


def _refuse(exc: UntrustedDaemon) -> None:
    """Not our daemon: say which path and why, in one line, and run the command here."""
    sys.stderr.write(
        f"orbmcp: not using the session daemon at {one_line(exc.path)}: {one_line(exc.why)}; "
        "running one-shot\n"
    )
    sys.stderr.flush()


def _forget_stale(path: str) -> None:
    """The socket file outlived its daemon: remove it (and the state file) and say so, once."""
    for stale in (path, state_path(path)):
        try:
            os.unlink(stale)
        except OSError:
            pass
    sys.stderr.write(f"orbmcp: the session daemon of this scope is gone ({path}); running one-shot\n")


class Conversation:
    RESTART = "restart"  # run() result: the daemon speaks another protocol version

    def __init__(self, sock: _socket.socket, scope: Scope, env: Mapping[str, str], kind: str = "run") -> None:
        self.sock = sock
        self.scope = scope
        self.env = env
        self.kind = kind  # "run" a command, or "serve" (orbmcp serve)
        self.cancelled = False

    def run(self, argv: list[str]) -> int | str | None:
        try:
            protocol.send(self.sock, {"t": "hello", "protocol": protocol.PROTOCOL_VERSION})
            hello = protocol.receive(self.sock)
        except (OSError, protocol.ProtocolError):
            return None
        if hello is None or hello.get("t") != "hello":
            return None
        if hello.get("protocol") != protocol.PROTOCOL_VERSION:
            return self.RESTART
        try:
            protocol.send(self.sock, self._request(argv, hello))
        except OSError:  # it closed after its hello (an idle daemon stopping): nothing ran
            return self._not_taken()
        with _cancel_on_interrupt(self):
            return self._play()

    @staticmethod
    def _not_taken() -> None:
        sys.stderr.write("orbmcp: the session daemon stopped before taking the command; running one-shot\n")

    def _request(self, argv: list[str], hello: Mapping[str, Any]) -> dict[str, Any]:
        return request_frame(self.kind, argv, hello, self.scope, self.env)

    def config_variables(self) -> list[str]:
        return config_variables(self.scope)

    def _play(self) -> int | None:
        out = sys.stdout.buffer
        err = sys.stderr.buffer
        first = True
        while True:
            try:
                message = protocol.receive(self.sock)
            except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for odd platforms
                continue
            except ConnectionResetError:
                if first:  # closed with the request unread (an idle daemon stopping): nothing ran
                    return self._not_taken()
                message = None
            except OSError:
                message = None
            first = False
            if message is None:
                sys.stderr.write(
                    "orbmcp: the session daemon closed the connection before the command ended\n"
                )
                return 4
            kind = message["t"]
            if kind == "out":
                _write(out, message.get("data", ""))
            elif kind == "err":
                _write(err, message.get("data", ""))
            elif kind == "exit":
                code = message.get("code")
                return code if isinstance(code, int) and 0 <= code <= 255 else 70
            elif kind == "local":
                return None  # the daemon declines this line: run it here
            elif kind == "readline":
                protocol.send(self.sock, {"t": "answer", "id": message.get("id"), "value": _readline()})
            elif kind == "read_stdin":
                protocol.send(self.sock, {"t": "stdin", "id": message.get("id"), **_read_stdin()})
            elif kind == "open_url":
                protocol.send(
                    self.sock,
                    {"t": "answer", "id": message.get("id"), "value": _open(str(message.get("url")))},
                )
            elif kind == "serving":
                from orbmcp.daemon.serve_client import serving

                return serving(self, message)
            elif kind == "error":
                problem = one_line(str(message.get("message", "protocol error")), max_len=500)
                sys.stderr.write(f"orbmcp: session daemon: {problem}\n")
                return 70


def request_frame(
    kind: str, argv: list[str], hello: Mapping[str, Any], scope: Scope, env: Mapping[str, str]
) -> dict[str, Any]:
    """What a client sends after the hellos: its line and what of its environment the daemon may
    know (the forwarded variables, salted digests of those its config files reference, its tty)."""
    salt = os.urandom(16).hex()
    asked = hello.get("env")
    wanted = {n for n in asked if isinstance(n, str)} if isinstance(asked, list) else None
    names = [n for n in config_variables(scope) if wanted is None or n in wanted]
    return {
        "t": kind,
        "argv": argv,
        "cwd": os.getcwd(),
        "env": {k: v for k, v in env.items() if k in FORWARDED_ENV or k.startswith(FORWARDED_PREFIXES)},
        "envDigests": env_digests(env, names, digest_key(str(hello.get("nonce", ""))[:200], salt)),
        "envSalt": salt,
        "tty": {
            "stdin": _isatty(sys.stdin),
            "stdout": _isatty(sys.stdout),
            "stderr": _isatty(sys.stderr),
        },
        "columns": _columns(env),
    }


def config_variables(scope: Scope) -> list[str]:
    """The variables this scope's own config files reference (read here, not asked for)."""
    return variables_in(config_files(scope))


def config_files(scope: Scope) -> list[str]:
    """The config files of ``scope`` (``--config``'s alone, else the global and project files)."""
    if scope.config_file is not None:
        return [scope.config_file]
    project = os.path.join(scope.project_dir, PROJECT_CONFIG_DIR)
    return [os.path.join(d, name) for d in (scope.global_dir, project) for name in GLOBAL_FILES]


def _cancel_on_interrupt(conv: Conversation) -> HandledSignals:
    """Ctrl-C (and SIGTERM/SIGHUP) cancel this command in the daemon; the daemon then reports the
    interruption and the exit status, as a one-shot run would."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if not conv.cancelled:
            conv.cancelled = True
            try:
                protocol.send(conv.sock, {"t": "cancel", "signal": signal.Signals(signum).name})
            except OSError:
                pass

    return signals_handled_by(handler)


def _write(stream: Any, data: object) -> None:
    text = terminal_output(str(data))
    try:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
            raw = text.encode("utf-8", "replace")
        stream.write(raw)
        stream.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
        except OSError:
            pass


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _columns(env: Mapping[str, str]) -> int | None:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        value = env.get("COLUMNS", "")
        return int(value) if value.isdigit() else None


def _readline() -> str | None:
    try:
        line = sys.stdin.readline()
    except (OSError, ValueError):
        return None
    return line if line else None


def _read_stdin() -> dict[str, Any]:
    """Stdin for ``call -``, read in chunks up to the limit (the daemon reports a larger one)."""
    try:
        data = sys.stdin.buffer.read(STDIN_LIMIT + 1)
    except (OSError, ValueError, AttributeError):
        return {"data": None}
    if len(data) > STDIN_LIMIT:
        return {"data": None, "tooLarge": True}
    return {"data": data.decode("utf-8", "replace")}


def _open(url: str) -> bool:
    """Open ``url`` only where one-shot would (``urlpolicy``: https, or http on loopback)."""
    from orbmcp.auth.urlpolicy import browser_problem, open_in_browser

    problem = browser_problem(url)
    if problem is not None:
        sys.stderr.write(
            f"orbmcp: not opening {one_line(url, max_len=200)!r} for the session daemon: {problem}\n"
        )
        return False
    return open_in_browser(url)
