"""Checks of single config values, collecting what is wrong instead of raising.

An invalid entry is skipped with one warning and never hides the valid ones; a key that is merely
ignored (say ``headers`` on a stdio server) gets its own warning and the entry still loads. So
every check reports into a ``Problems`` of one entry, and the caller decides at the end.
"""

from __future__ import annotations

import math
import re

from orbmcp.config.jsonc import type_name
from orbmcp.config.model import ConfigWarning

_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", re.DOTALL)
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class Problems:
    """Collects what is wrong with one entry: fatal problems skip it, ignored keys only warn."""

    def __init__(self, server: str | None, file: str | None) -> None:
        self.server = server
        self.file = file
        self.fatal: list[str] = []
        self.ignored: list[tuple[str, str]] = []
        self.fixes: list[str] = []  # what would fix a fatal problem (a misspelled key, a variable)
        self._fatal_reason = "invalid_entry"

    def invalid(self, message: str, *, reason: str = "invalid_entry") -> None:
        """A problem that skips the entry; the entry's one warning carries the first one's reason."""
        if not self.fatal:
            self._fatal_reason = reason
        self.fatal.append(message)

    def ignore(self, message: str, *, reason: str = "ignored_key") -> None:
        self.ignored.append((message, reason))

    def suggest(self, fix: str) -> None:
        if fix not in self.fixes:
            self.fixes.append(fix)

    def warnings(self) -> list[ConfigWarning]:
        out = [ConfigWarning(m, self.file, self.server, reason) for m, reason in self.ignored]
        if self.fatal:
            message = "; ".join(self.fatal) + "; entry skipped"
            fix = "; ".join(self.fixes) or None
            out.append(
                ConfigWarning(message, self.file, self.server, self._fatal_reason, fix=fix, skipped=True)
            )
        return out


def show(value: object) -> str:
    """A value as a message quotes it: short, and a container only by its type."""
    text = repr(value) if not isinstance(value, dict | list) else type_name(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_int(value: object) -> int | None:
    """An integer, also from an integral float (JSON5 reads ``1e4`` as a float); never a bool."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


# The longest wait any setting may ask for: a day. Far above anything useful, and far below the
# values (1e308, 10**400) that overflow once turned into seconds.
MAX_DURATION_MS = 86_400_000


def positive_int(problems: Problems, key: str, value: object, *, maximum: int | None = None) -> int | None:
    """A positive integer, at most ``maximum``; anything else skips the entry."""
    number = as_int(value)
    if number is None or number <= 0 or (maximum is not None and number > maximum):
        upto = f" up to {maximum}" if maximum is not None else ""
        problems.invalid(f'"{key}" must be a positive integer{upto} (got {show(value)})')
        return None
    return number


def duration_ms(problems: Problems, key: str, value: object) -> int | None:
    """A positive number of milliseconds, at most a day."""
    return positive_int(problems, key, value, maximum=MAX_DURATION_MS)


_UNITS = {1: "milliseconds", 1000: "seconds"}


def scaled_duration_ms(problems: Problems, key: str, value: object, *, unit_ms: int) -> int | None:
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
    problems.invalid(
        f'"{key}" must be a positive number of {_UNITS[unit_ms]} up to {most} (got {show(value)})'
    )
    return None


def text(problems: Problems, key: str, value: object, *, allow_empty: bool = False) -> str | None:
    if not isinstance(value, str):
        problems.invalid(f'"{key}" must be a string, not {type_name(value)}')
        return None
    if not allow_empty and not value.strip():
        problems.invalid(f'"{key}" must not be empty')
        return None
    if "\x00" in value:
        problems.invalid(f'"{key}" contains a NUL character')
        return None
    return value


def string_list(problems: Problems, key: str, value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        problems.invalid(f'"{key}" must be an array of strings, not {type_name(value)}')
        return None
    out: list[str] = []
    for i, item in enumerate(value):
        checked = text(problems, f"{key}[{i}]", item, allow_empty=True)
        if checked is None:
            return None
        out.append(checked)
    return tuple(out)


def string_map(problems: Problems, key: str, value: object, *, headers: bool) -> dict[str, str] | None:
    """An ``env`` or ``headers`` object: every name valid for its kind, every value a string."""
    if not isinstance(value, dict):
        problems.invalid(f'"{key}" must be an object of string values, not {type_name(value)}')
        return None
    out: dict[str, str] = {}
    ok = True
    for name, item in value.items():
        problem = _map_item_problem(f"{key}.{name}", name, item, headers=headers)
        if problem is not None:
            problems.invalid(problem)
            ok = False
        elif isinstance(item, str):  # always so once there is no problem
            out[name] = item
    return out if ok else None


def _map_item_problem(where: str, name: str, item: object, *, headers: bool) -> str | None:
    if headers and not _HEADER_NAME.fullmatch(name):
        return f'"{where}": {name!r} is not a valid header name'
    if not headers and (not name or "=" in name or "\x00" in name):
        return f'"{where}": {name!r} is not a valid environment variable name'
    if not isinstance(item, str):
        return f'"{where}" must be a string, not {type_name(item)} (quote the value)'
    if "\x00" in item or (headers and ("\r" in item or "\n" in item)):
        return f'"{where}" contains a control character'
    return None


def check_url(problems: Problems, key: str, url: str, *, require_https: bool = False) -> None:
    # A regex, not urllib.parse: this runs on every load and urllib.parse costs ~1.5 ms to import.
    if any(c.isspace() or ord(c) < 32 for c in url):
        problems.invalid(f'"{key}" must not contain whitespace or control characters')
        return
    match = _URL.fullmatch(url)
    scheme = match.group(1).lower() if match else ""
    schemes = ("https",) if require_https else ("http", "https")
    if match is None or scheme not in schemes or not _url_host(match.group(2)):
        want = "an https:// URL" if require_https else "an http:// or https:// URL"
        problems.invalid(f'"{key}" must be {want} (got {show(url)})')


def _url_host(authority: str) -> str:
    host_port = authority.rpartition("@")[2]
    if host_port.startswith("["):
        return host_port[1 : host_port.find("]")] if "]" in host_port else ""
    return host_port.partition(":")[0]
