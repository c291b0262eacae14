"""The debug log: stdlib logging under the ``orbmcp`` logger, written by one redacting handler.

Modules log in two ways, both through stdlib ``logging``: ``log_event("server.state", server=...,
from_=..., to=...)`` for structured events, and ``get_logger(__name__)`` for ordinary messages.
With ``ORBMCP_DEBUG`` on, ``configure`` attaches the JSON Lines handler: JSON Lines at
``<global dir>/logs/orbmcp.log``, itself a secret file (0600 in a 0700 directory, one 2 MB backup,
only allow-listed fields, every string redacted). Every orbmcp logger also carries a redacting
filter, so a host that routes the ``orbmcp`` logger to its own handlers never sees a secret.
Nothing reaches Python's last-resort handler (a ``NullHandler`` sits on ``orbmcp``).

It is best-effort: a failed write disables the log for the rest of the process and never reaches
the caller. Off, ``log_event`` costs one attribute check and creates nothing.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from orbmcp import environment, fs
from orbmcp.redact import redact, redact_field, redact_mapping

ROOT_LOGGER = "orbmcp"
_LEVELS = {"debug": 10, "info": 20, "warn": 30, "warning": 30, "error": 40, "critical": 50}
LOG_DIR_NAME = "logs"
LOG_FILE_NAME = "orbmcp.log"
BACKUP_SUFFIX = ".1"
MAX_BYTES = 2 * 1024 * 1024

ALLOWED_FIELDS = frozenset(
    {
        "from",
        "to",
        "ms",
        "attempt",
        "delay_ms",
        "max_retries",
        "code",
        "status",
        "transport",
        "tools",
        "reason",
        "pid",
        "exit_code",
        "error",
        "lock",
        "holder_pid",
        "scope",
        "url",
        "phase",
        "count",
        "signal",
        "method",
        "request_id",
        "timeout_ms",
        "source",
        "kind",
    }
)
_LOCK_TIMEOUT_S = 30.0  # held for one write; past this the log is given up (never a command)


class _State:
    # A plain class: dataclasses pulls in inspect, ~5 ms of start-up.
    __slots__ = ("configured", "dir_ready", "enabled", "failed", "lock", "log_dir")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.configured = False
        self.enabled = False
        self.log_dir: Path | None = None
        self.dir_ready = False
        self.failed = False


_state = _State()


def env_enabled(environ: Mapping[str, str] | None = None) -> bool:
    return environment.debug(environ)


def configure(global_dir: Path, enabled: bool | None = None) -> None:
    """Point the log at ``global_dir``; ``enabled=None`` reads ``ORBMCP_DEBUG``. Creates nothing."""
    with _state.lock:
        _state.configured = True
        _state.enabled = env_enabled() if enabled is None else enabled
        _state.log_dir = Path(global_dir) / LOG_DIR_NAME
        _state.dir_ready = False
        _state.failed = False
    if _state.enabled:
        _attach_handler()


def is_enabled() -> bool:
    return _state.enabled and not _state.failed


def log_event(
    event: str,
    *,
    level: str = "info",
    server: str | None = None,
    message: str | None = None,
    **fields: object,
) -> None:
    """Append one record. Unknown field names are dropped; strings are redacted. Never raises.

    A trailing underscore is dropped from field names, so ``from_="starting"`` records ``from``.
    """
    if not is_enabled():
        return

    logger = get_logger(ROOT_LOGGER)
    extra = {"orbmcp_event": (level, server, message, fields)}
    logger.log(_LEVELS.get(level, logging.INFO), event, extra=extra)


def get_logger(name: str) -> logging.Logger:
    """An orbmcp logger (name under ``orbmcp``): stdlib logging with the redacting filter."""
    _install()
    logger = logging.getLogger(name)
    if not any(isinstance(f, _RedactFilter) for f in logger.filters):
        logger.addFilter(_RedactFilter())
    return logger


_installed = False


def _install() -> None:
    """Once per process: the ``orbmcp`` logger gets a NullHandler (no last-resort stderr output)."""
    global _installed
    if _installed:
        return

    root = logging.getLogger(ROOT_LOGGER)
    root.addHandler(logging.NullHandler())
    _installed = True


def _attach_handler() -> None:
    _install()
    root = logging.getLogger(ROOT_LOGGER)
    if not any(getattr(h, "orbmcp_debug_log", False) for h in root.handlers):
        root.addHandler(_json_lines_handler())
    if root.level == logging.NOTSET or root.level > logging.DEBUG:
        root.setLevel(logging.DEBUG)


def _json_lines_handler() -> logging.Handler:
    """The handler that writes the debug log (built lazily: ``logging`` is not imported until
    the log is on)."""

    class JsonLinesHandler(logging.Handler):
        orbmcp_debug_log = True

        def emit(self, record: logging.LogRecord) -> None:
            _emit(record)

        def handleError(self, record: logging.LogRecord) -> None:
            pass  # never a traceback on stderr: the debug log is best-effort

    return JsonLinesHandler()


class _RedactFilter:
    """Masks secrets in a record's message before any handler sees it (ours or a host's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "orbmcp_event", None) is not None:
            return True  # log_event records are redacted field by field when formatted
        try:
            text = record.getMessage()
        except Exception:
            text = str(record.msg)
        record.msg = redact(text)
        record.args = None
        return True


def _emit(record: logging.LogRecord) -> None:
    event = getattr(record, "orbmcp_event", None)
    try:
        if event is not None:
            level, server, message, fields = event
            line = _format_record(record.msg, level=level, server=server, message=message, fields=fields)
        else:
            line = _format_record(
                record.name,
                level=record.levelname.lower(),
                server=None,
                message=str(record.msg),
                fields={},
            )
    except Exception:
        return
    with _state.lock:
        if _state.failed or not _state.enabled or _state.log_dir is None:
            return
        try:
            _write_line(_state.log_dir, line)
        except Exception:
            # Best-effort: a read-only home or a full disk must not break a connection or a call.
            _state.failed = True


def configure_default(global_dir: Path) -> None:
    """Point the log at ``global_dir`` unless someone configured it already.

    The config loader and the manager call this with the global dir they resolved, so library
    callers that never call ``configure`` still get the log ``ORBMCP_DEBUG`` asks for.
    """
    with _state.lock:
        if _state.configured:
            return
    configure(global_dir)


def _format_record(
    event: object, *, level: str, server: str | None, message: str | None, fields: dict[str, object]
) -> str:
    record: dict[str, object] = {
        "ts": _timestamp(),
        "level": redact(str(level)),
        "event": redact(str(event)),
        "server": None if server is None else redact(str(server)),
        "message": None if message is None else redact(str(message)),
    }
    for name, value in fields.items():
        # ``from`` is a keyword, so callers write ``from_=...``.
        key = name[:-1] if name.endswith("_") else name
        if key in ALLOWED_FIELDS:
            record[key] = _clean_value(key, value)
    # ensure_ascii keeps CR, LF, U+2028 and every other line breaker escaped, so server-controlled
    # text cannot start a forged record.
    line = json.dumps(record, ensure_ascii=True, separators=(",", ":"), allow_nan=False, default=str)
    if "\n" in line or "\r" in line:
        raise ValueError("record would span lines")  # pragma: no cover - json.dumps escapes them
    return line + "\n"


def _clean_value(name: str, value: object) -> object:
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, BaseException):
        return redact(f"{type(value).__name__}: {value}")
    if isinstance(value, dict | list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return redact_mapping(items)
    # As ``name=value``: an OAuth code logged under ``code`` is masked, an error code is not.
    return redact_field(name, str(value))


def _timestamp() -> str:
    now = time.time()
    millis = int(now * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{millis:03d}Z"


def _write_line(log_dir: Path, line: str) -> None:
    if not _state.dir_ready:
        # The global dir is a state dir holding credentials too: if it is created here, it is private.
        fs.ensure_private_dir(log_dir)
        _state.dir_ready = True
    data = line.encode("utf-8")
    path = log_dir / LOG_FILE_NAME
    # orbmcp's one lock serialises size check, rotation and write across processes.
    with fs.locked(path, timeout=_LOCK_TIMEOUT_S):
        fd = fs.open_private(path, append=True)
        try:
            size = os.fstat(fd).st_size
            if size > 0 and size + len(data) > MAX_BYTES:
                os.close(fd)
                fd = -1
                os.replace(path, path.with_name(LOG_FILE_NAME + BACKUP_SUFFIX))
                fd = fs.open_private(path, append=True)
            os.write(fd, data)
        finally:
            if fd >= 0:
                os.close(fd)
