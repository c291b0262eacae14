"""The forwarding client: hands a command line to the scope's daemon and plays its output back.

Runs on every ``orbmcp`` invocation before anything heavy, so it imports only the standard
library (and orbmcp's own stdlib-only modules: the command table, config paths, the protocol).
``maybe_forward(argv)`` returns None whenever the command should run here instead: no daemon,
``--no-daemon``/``ORBMCP_NO_DAEMON``, ``--help``, a command that does not connect, or a daemon that
says the line is not for it. Otherwise it returns the exit status the daemon reported.

The daemon renders exactly what the command prints one-shot, with this terminal's properties
(whether stdout/stderr are terminals, the width, NO_COLOR, TERM): the client only copies bytes,
answers the daemon's questions from this terminal (a line of stdin, stdin itself for ``call -``,
opening a URL), and turns Ctrl-C into a ``cancel`` for its own command only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from orbmcp import environment
from orbmcp.daemon import protocol
from orbmcp.daemon.scope import Scope, current_scope, socket_path, state_path

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
# -- which lines go to the daemon ------------------------------------------------------------------


class Line:
    """A command line split into the program's own options and the command words."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.project: Path | None = None
        self.config: Path | None = None
        self.no_daemon = False
        self.help = False
        self.words: list[str] = []
        self._parse(list(argv))

    def _parse(self, args: list[str]) -> None:
        i = 0
        rest: list[str] = []
        while i < len(args):
            arg = args[i]
            if arg == "--":
                rest.extend(args[i:])
                break
            if arg in ("--project", "-p", "--config", "-c") and i + 1 < len(args):
                self._set(arg, args[i + 1])
                i += 2
                continue
            name, eq, value = arg.partition("=")
            if eq and name in ("--project", "--config"):
                self._set(name, value)
            elif arg == "--no-daemon":
                self.no_daemon = True
            elif arg in ("--help", "-h"):
                self.help = True
            else:
                rest.append(arg)
            i += 1
        self.words = rest

    def _set(self, flag: str, value: str) -> None:
        if flag in ("--project", "-p"):
            self.project = Path(value)
        else:
            self.config = Path(value)

    def command(self) -> tuple[str, ...] | None:
        """The command path these words name, when it is one the daemon runs."""
        from orbmcp.commands.table import COMMANDS

        words = [w for w in self.words if w not in ("--no-color", "--json")]
        best: tuple[str, ...] | None = None
        for spec in COMMANDS:
            n = len(spec.path)
            if tuple(words[:n]) == spec.path and (best is None or n > len(best)):
                best = spec.path if forwardable(spec.path, spec.connects) else None
        return best


def forwardable(path: tuple[str, ...], connects: bool) -> bool:
    """Commands that connect run in the daemon, and so do ``slash`` and ``complete`` (the live
    session's servers and tool names). ``daemon ...`` and the REPL always run here."""
    if path[:1] in (("daemon",), ("shell",)):
        return False
    return connects or path in (("slash",), ("complete",))


# -- the conversation ------------------------------------------------------------------------------


def maybe_forward(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> int | None:
    env = os.environ if environ is None else environ
    if environment.no_daemon(env):
        return None
    line = Line(argv)
    if line.no_daemon or line.help or line.command() is None:
        return None
    scope = current_scope(project=line.project, config_file=line.config, environ=env)
    sock_path = socket_path(scope, env)
    sock = _connect(sock_path) if sock_path.exists() else None
    if sock is None:
        if sock_path.exists():
            _forget_stale(sock_path)
        if not auto_start_enabled(scope):
            return None
        sock = _start_and_connect(scope, sock_path, 'the daemon setting is "auto"')
        if sock is None:
            return None
    with sock:
        code = Conversation(sock, scope, env).run(list(argv))
    if code is not Conversation.RESTART:
        return code if isinstance(code, int) else None
    # An older (or newer) daemon speaks another protocol: replace it, then ask the new one.
    from orbmcp.daemon.control import stop_scope
    from orbmcp.errors import OrbError

    try:
        stop_scope(scope)
    except OrbError as exc:
        sys.stderr.write(f"orbmcp: could not replace the session daemon ({exc.message}); running one-shot\n")
        return None
    sock = _start_and_connect(scope, sock_path, "the running one spoke another protocol version")
    if sock is None:
        return None
    with sock:
        code = Conversation(sock, scope, env).run(list(argv))
    return code if isinstance(code, int) else None


def auto_start_enabled(scope: Scope) -> bool:
    """The global setting ``"daemon": "auto"`` (settings.json top level, or mcp.json ``settings``)."""
    from orbmcp.config.jsonc import read_jsonc
    from orbmcp.config.paths import global_files

    value: object = "off"
    files = [scope.config_file] if scope.config_file is not None else list(global_files(scope.global_dir))
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


def _start_and_connect(scope: Scope, sock_path: Path, why: str) -> socket.socket | None:
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


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def _forget_stale(path: Path) -> None:
    """The socket file outlived its daemon: remove it (and the state file) and say so, once."""
    with contextlib.suppress(OSError):
        path.unlink()
    with contextlib.suppress(OSError):
        state_path(path).unlink()
    sys.stderr.write(f"orbmcp: the session daemon of this scope is gone ({path}); running one-shot\n")


class Conversation:
    RESTART = "restart"  # run() result: the daemon speaks another protocol version

    def __init__(self, sock: socket.socket, scope: Scope, env: Mapping[str, str]) -> None:
        self.sock = sock
        self.scope = scope
        self.env = env
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
        protocol.send(self.sock, self._request(argv, hello))
        with _cancel_on_interrupt(self):
            return self._play()

    def _request(self, argv: list[str], hello: Mapping[str, Any]) -> dict[str, Any]:
        names = hello.get("env") if isinstance(hello.get("env"), list) else []
        nonce = str(hello.get("nonce", ""))
        return {
            "t": "run",
            "argv": argv,
            "cwd": os.getcwd(),
            "env": {
                k: v for k, v in self.env.items() if k in FORWARDED_ENV or k.startswith(FORWARDED_PREFIXES)
            },
            "envDigests": env_digests(self.env, [str(n) for n in names or ()], nonce),
            "tty": {
                "stdin": _isatty(sys.stdin),
                "stdout": _isatty(sys.stdout),
                "stderr": _isatty(sys.stderr),
            },
            "columns": _columns(self.env),
        }

    def _play(self) -> int | None:
        out = sys.stdout.buffer
        err = sys.stderr.buffer
        while True:
            try:
                message = protocol.receive(self.sock)
            except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for odd platforms
                continue
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
                return code if isinstance(code, int) else 70
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
            elif kind == "error":
                sys.stderr.write(f"orbmcp: session daemon: {message.get('message', 'protocol error')}\n")
                return 70


def env_digests(env: Mapping[str, str], names: Sequence[str], nonce: str) -> dict[str, str | None]:
    """Salted digests of the variables the daemon's config references (None: unset here)."""
    out: dict[str, str | None] = {}
    for name in names[:1000]:
        value = env.get(name)
        out[name] = None if value is None else digest(nonce, value)
    return out


def digest(nonce: str, value: str) -> str:
    return hashlib.sha256(f"{nonce}\0{value}".encode("utf-8", "surrogatepass")).hexdigest()


@contextlib.contextmanager
def _cancel_on_interrupt(conv: Conversation) -> Iterator[None]:
    """Ctrl-C (and SIGTERM/SIGHUP) cancel this command in the daemon; the daemon then reports the
    interruption and the exit status, as a one-shot run would."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if not conv.cancelled:
            conv.cancelled = True
            with contextlib.suppress(OSError):
                protocol.send(conv.sock, {"t": "cancel", "signal": signal.Signals(signum).name})

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError):  # not the main thread
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _write(stream: Any, data: object) -> None:
    try:
        stream.write(str(data).encode("utf-8", "surrogateescape"))
        stream.flush()
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())


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
    import webbrowser

    try:
        return bool(webbrowser.open(url))
    except Exception:
        return False
