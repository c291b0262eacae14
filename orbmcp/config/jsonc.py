"""Read JSONC/JSON5 config files into plain dicts, with errors that point at file, line and column.

json5 is a pure-Python parser (~5 ms for a small file, plus its import), and shell completion
loads the config on every keystroke. Most files are JSON or JSONC (comments, trailing commas), so
those are stripped with two C-speed regex passes and handed to ``json``; only what ``json`` then
rejects (unquoted keys, single quotes, hex, ... or a real syntax error) goes to json5, which is
also what reports errors. Stripping cannot turn a non-JSON document into a different valid one:
it only removes comments and trailing commas outside double-quoted strings, and every JSON5-only
construct it might misread (a ``'...'`` string, an unquoted key) leaves text ``json`` rejects.

A config file may come from a cloned repository, so reading it is bounded before any parser runs:
at most ``MAX_CONFIG_BYTES`` are read (a symlink to ``/dev/zero`` or a FIFO is refused, not read),
and nesting deeper than ``MAX_DEPTH`` is refused by a scan of the brackets (both parsers recurse,
and Python's recursion limit would otherwise turn a 1,000-deep file into a crash).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path

from orbmcp.errors import ConfigError

_STRING = r'("(?:[^"\\]|\\.)*")'
# JSON5 line terminators end a // comment, not just "\n" (a CR-only file must not lose lines).
_COMMENT = re.compile(_STRING + r"|//[^\n\r\u2028\u2029]*|/\*.*?\*/", re.DOTALL)
_TRAILING_COMMA = re.compile(_STRING + r"|,(\s*[}\]])", re.DOTALL)
# json5 reports "<string>:3 Unexpected "}" at column 7"; we compute line/column from the offset
# ourselves and keep only the description.
_JSON5_LOCATION = re.compile(r"^<string>:\d+\s+|\s+at column \d+$")
# json5 decodes a "\ud83d\ude00" escape pair into two lone surrogates instead of one character.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB]")
_SURROGATES = re.compile("[\ud800-\udfff]")
_NOT_JSON = object()

# Real configs are a few KiB; 4 MiB leaves room for generated ones and keeps a hostile file cheap.
MAX_CONFIG_BYTES = 4 * 1024 * 1024
# A server entry nests four or five levels (mcpServers > name > auth > scope); 64 is generous and
# far below the parsers' recursion limits.
MAX_DEPTH = 64
# Strings (either quote, as JSON5 allows) and comments hide brackets that do not nest anything.
_NOT_STRUCTURE = re.compile(
    r'"(?:[^"\\]|\\.)*"?|\'(?:[^\'\\]|\\.)*\'?|//[^\n\r\u2028\u2029]*|/\*.*?(?:\*/|\Z)', re.DOTALL
)
_BRACKETS = re.compile(r"[\[\]{}]")


def _line_col(text: str, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def parse_jsonc(text: str, *, file: str = "<string>") -> dict[str, object]:
    """Parse one config document; the top level must be an object.

    A document that is empty or only whitespace is an empty config: ``touch mcp.json`` should not
    break every command.
    """
    if not text.strip():
        return {}
    _check_depth(text, file)
    value = _parse_json(text)
    if value is _NOT_JSON:
        value = _parse_json5(text, file)
    if not isinstance(value, dict):
        raise ConfigError(
            f"{file}: the top level must be a JSON object, not {type_name(value)}",
            file=file,
            reason="not_an_object",
        )
    return value


def _check_depth(text: str, file: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before a parser recurses into it."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return  # cannot nest that deep: the common case costs two counts
    # Hidden spans become spaces of the same length, so offsets still point into ``text``.
    structure = _NOT_STRUCTURE.sub(lambda m: " " * len(m.group()), text)
    depth = 0
    for match in _BRACKETS.finditer(structure):
        if match.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line, col = _line_col(text, match.start())
                raise ConfigError(
                    f"{file}:{line}:{col}: nested more than {MAX_DEPTH} levels deep",
                    file=file,
                    reason="too_deep",
                )
        else:
            depth = max(0, depth - 1)


def _parse_json(text: str) -> object:
    """The fast path: JSON once comments and trailing commas are gone, or _NOT_JSON."""
    stripped = _COMMENT.sub(lambda m: m.group(1) or " ", text)
    stripped = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), stripped)
    try:
        return json.loads(stripped)
    except ValueError:
        return _NOT_JSON


def _parse_json5(text: str, file: str) -> object:
    import json5  # only for a file plain JSON cannot read (comments, trailing commas): ~6 ms

    value, err, pos = json5.parse(text)
    if err is not None:
        line, col = _line_col(text, pos)
        what = _JSON5_LOCATION.sub("", err).strip() or "invalid JSON"
        raise ConfigError(
            f"{file}:{line}:{col}: {what}",
            file=file,
            hint="JSONC/JSON5: comments and trailing commas are fine; strings need quotes",
            reason="syntax",
        )
    if _SURROGATE_ESCAPE.search(text):
        value = _join_surrogates(value)
    return value


def _join_surrogates(value: object) -> object:
    if isinstance(value, str):
        if not _SURROGATES.search(value):
            return value
        # pairs become one character; a lone surrogate stays as it was
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    if isinstance(value, list):
        return [_join_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_join_surrogates(k): _join_surrogates(v) for k, v in value.items()}
    return value


def read_jsonc(path: Path) -> dict[str, object] | None:
    """The parsed file, or None when it does not exist. Any other failure is a ConfigError saying why."""
    try:
        data = _read_bounded(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(
            f"{path}: is a directory, expected a JSON file", file=str(path), reason="not_a_file"
        ) from None
    except PermissionError:
        raise ConfigError(
            f"{path}: permission denied",
            file=str(path),
            hint=f"check the permissions of {path}",
            reason="permission_denied",
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:  # a path component is a file: same as absent
            return None
        raise ConfigError(
            f"{path}: cannot read: {exc.strerror or exc}", file=str(path), reason="unreadable"
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data.decode("utf-8", errors="replace"), exc.start)
        raise ConfigError(
            f"{path}:{line}:{col}: not valid UTF-8 (byte 0x{data[exc.start]:02x})",
            file=str(path),
            hint="save the file as UTF-8",
            reason="not_utf8",
        ) from None
    return parse_jsonc(text, file=str(path))


def _read_bounded(path: Path) -> bytes:
    """At most MAX_CONFIG_BYTES of a regular file; a larger or special file is a ConfigError.

    Opened non-blocking so a FIFO planted as a config file cannot hang the open; only a regular
    file is read, so a symlink to ``/dev/zero`` or a terminal is refused without reading it.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(
                f"{path}: not a regular file (a device, FIFO or socket); not read",
                file=str(path),
                reason="not_a_file",
            )
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_CONFIG_BYTES and info.st_size <= MAX_CONFIG_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_CONFIG_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_CONFIG_BYTES or info.st_size > MAX_CONFIG_BYTES:
            limit = MAX_CONFIG_BYTES // (1024 * 1024)
            raise ConfigError(
                f"{path}: larger than {limit} MiB; a config file this large is not read",
                file=str(path),
                hint="a config file lists servers and settings: a few KiB",
                reason="too_large",
            )
        return b"".join(chunks)
    finally:
        os.close(fd)


def type_name(value: object) -> str:
    """A JSON type name for messages ("a string", "an array", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
