"""The value rules entry fields share, as pydantic validators: each returns the value or raises
orbmcp's message naming the key (the key as the file spells it, e.g. ``"timeoutMs"``).

The rules are orbmcp's own rather than pydantic's coercion: a JSON ``true`` is not an integer, a
``"30"`` is not a number, and ``1e308`` seconds is out of range before any arithmetic.
"""

from __future__ import annotations

import math
import re

from orbmcp.config.jsonc import type_name
from orbmcp.config.problems import MAX_DURATION_MS, as_int, invalid, show

_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", re.DOTALL)
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_UNITS = {1: "milliseconds", 1000: "seconds"}
MAX_ROOTS = 100


def text(key: str, value: object, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise invalid(f'"{key}" must be a string, not {type_name(value)}')
    if not allow_empty and not value.strip():
        raise invalid(f'"{key}" must not be empty')
    if "\x00" in value:
        raise invalid(f'"{key}" contains a NUL character')
    return value


def string_list(key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise invalid(f'"{key}" must be an array of strings, not {type_name(value)}')
    return tuple(text(f"{key}[{i}]", item, allow_empty=True) for i, item in enumerate(value))


def string_map(key: str, value: object, *, headers: bool) -> dict[str, str]:
    """An ``env`` or ``headers`` object: every name valid for its kind, every value a string."""
    if not isinstance(value, dict):
        raise invalid(f'"{key}" must be an object of string values, not {type_name(value)}')
    problems = [p for name, item in value.items() if (p := _item_problem(key, name, item, headers))]
    if len(problems) > 3:  # one line, however many: the first ones and a count
        problems[3:] = [f"and {len(problems) - 3} more"]
    if problems:
        raise invalid("; ".join(problems))
    return dict(value)


def _item_problem(key: str, name: str, item: object, headers: bool) -> str | None:
    where = f"{key}.{name}"
    if headers and not _HEADER_NAME.fullmatch(name):
        return f'"{where}": {name!r} is not a valid header name'
    if not headers and (not name or "=" in name or "\x00" in name):
        return f'"{where}": {name!r} is not a valid environment variable name'
    if not isinstance(item, str):
        return f'"{where}" must be a string, not {type_name(item)} (quote the value)'
    if "\x00" in item or (headers and ("\r" in item or "\n" in item)):
        return f'"{where}" contains a control character'
    return None


def positive_int(key: str, value: object, *, maximum: int = MAX_DURATION_MS) -> int:
    """A positive integer, at most ``maximum`` (a day of milliseconds unless said)."""
    number = as_int(value)
    if number is None or number <= 0 or number > maximum:
        raise invalid(f'"{key}" must be a positive integer up to {maximum} (got {show(value)})')
    return number


def scaled_duration_ms(key: str, value: object, *, unit_ms: int) -> int:
    """A positive number (fractions allowed) of ``unit_ms``-millisecond units, at most a day, in
    milliseconds. The check comes before any arithmetic: ``inf``, ``nan`` and ``1e308`` (TOML and
    JSON5 read them) must skip the entry, not overflow ``round``."""
    most = MAX_DURATION_MS // unit_ms
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 < value <= most
    ):
        return max(1, round(value * unit_ms))
    raise invalid(f'"{key}" must be a positive number of {_UNITS[unit_ms]} up to {most} (got {show(value)})')


def flag(key: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise invalid(f'"{key}" must be true or false (got {show(value)})')


def roots(key: str, value: object) -> tuple[str, ...]:
    """``roots``: an array of at most ``MAX_ROOTS`` non-empty paths (unexpanded)."""
    if not isinstance(value, list) or len(value) > MAX_ROOTS:
        raise invalid(f'"{key}" must be an array of at most {MAX_ROOTS} directory paths')
    paths = [p for p in value if isinstance(p, str) and p.strip() and "\x00" not in p]
    if len(paths) != len(value):
        raise invalid(f'"{key}" must be an array of at most {MAX_ROOTS} directory paths')
    return tuple(paths)


def url_problem(key: str, url: str, *, require_https: bool = False) -> str | None:
    """What is wrong with an (expanded) URL, or None. A regex, not urllib.parse: this runs on
    every load and urllib.parse costs ~1.5 ms to import."""
    if any(c.isspace() or ord(c) < 32 for c in url):
        return f'"{key}" must not contain whitespace or control characters'
    match = _URL.fullmatch(url)
    scheme = match.group(1).lower() if match else ""
    schemes = ("https",) if require_https else ("http", "https")
    if match is None or scheme not in schemes or not _url_host(match.group(2)):
        want = "an https:// URL" if require_https else "an http:// or https:// URL"
        return f'"{key}" must be {want} (got {show(url)})'
    return None


def _url_host(authority: str) -> str:
    host_port = authority.rpartition("@")[2]
    if host_port.startswith("["):
        return host_port[1 : host_port.find("]")] if "]" in host_port else ""
    return host_port.partition(":")[0]
