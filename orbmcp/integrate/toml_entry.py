"""One ``[a.b]`` table of a TOML file (Codex's ``[mcp_servers.orbmcp]``), set or removed as text.

The rest of the file is kept byte for byte. The table orbmcp writes starts with a marker comment
and ends where the next table header starts (its own sub-tables, ``[a.b.env]``, belong to it). The
result is checked with ``tomllib``: every other key must parse exactly as before, and the table must
say what was asked; otherwise nothing is written (a table spelled as dotted keys or inline elsewhere
in the file cannot be edited this way, and the caller says so).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any


class TomlEditError(ValueError):
    pass


def parse(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditError(f"not valid TOML ({exc})") from None


def get(document: Mapping[str, Any], keys: Sequence[str]) -> object:
    node: object = document
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _without(document: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    out = dict(document)
    if len(keys) == 1:
        out.pop(keys[0], None)
        return out
    inner = out.get(keys[0])
    if isinstance(inner, Mapping):
        rest = _without(inner, keys[1:])
        if rest:
            out[keys[0]] = rest
        else:
            out.pop(keys[0])
    return out


def _header(keys: Sequence[str]) -> re.Pattern[str]:
    parts = r"\s*\.\s*".join(rf'(?:{re.escape(k)}|"{re.escape(k)}")' for k in keys)
    return re.compile(rf"^\s*\[\s*{parts}\s*(?:\]|\.)")


def _span(lines: list[str], keys: Sequence[str], marker: str) -> tuple[int, int] | None:
    """Lines [start, end) of the table at ``keys`` (its marker comment and sub-tables included)."""
    header = _header(keys)
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and not (lines[end].lstrip().startswith("[") and not header.match(lines[end])):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():  # blank lines before the next table stay
        end -= 1
    if start > 0 and marker in lines[start - 1]:
        start -= 1
    return start, end


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TomlEditError(f"cannot write {type(value).__name__} values")


def render(keys: Sequence[str], table: Mapping[str, object], marker: str) -> str:
    lines = [f"# {marker}", "[" + ".".join(keys) + "]"]
    nested = []
    for key, value in table.items():
        if isinstance(value, Mapping):
            nested.append((key, value))
        else:
            lines.append(f"{key} = {_value(value)}")
    for key, inner in nested:
        lines.append("[" + ".".join((*keys, key)) + "]")
        lines += [f"{k} = {_value(v)}" for k, v in inner.items()]
    return "\n".join(lines) + "\n"


def set_table(text: str, keys: Sequence[str], table: Mapping[str, object], marker: str) -> str:
    before = parse(text)
    lines = text.splitlines(keepends=True)
    block = render(keys, table, marker)
    span = _span(lines, keys, marker)
    if span is None:
        prefix = text if not text or text.endswith("\n") else text + "\n"
        after = prefix + ("\n" if prefix.strip() else "") + block
    else:
        start, end = span
        after = "".join(lines[:start]) + block + "".join(lines[end:])
    _check(before, after, keys, dict(table))
    return after


def delete_table(text: str, keys: Sequence[str], marker: str) -> str:
    before = parse(text)
    lines = text.splitlines(keepends=True)
    span = _span(lines, keys, marker)
    if span is None:
        return text
    start, end = span
    while start > 0 and not lines[start - 1].strip() and (end >= len(lines) or not lines[end].strip()):
        start -= 1  # the blank line that separated it goes with it
    after = "".join(lines[:start]) + "".join(lines[end:])
    _check(before, after, keys, None)
    return after


def _check(before: Mapping[str, Any], after_text: str, keys: Sequence[str], wanted: object) -> None:
    after = parse(after_text)
    if _without(after, keys) != _without(before, keys):
        raise TomlEditError(f"[{'.'.join(keys)}] is not only a table of its own there")
    if get(after, keys) != wanted:
        raise TomlEditError(f"the edited [{'.'.join(keys)}] would not say what was asked")
