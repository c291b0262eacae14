"""``${VAR}`` expansion for the fields that may carry secrets or paths, and ``finalize``.

Forms: ``${VAR}``, ``${VAR:-default}`` (default when unset or empty, as in POSIX shells; the
default may hold references of its own, ``${TOKEN:-${FALLBACK_TOKEN}}``), ``${env:VAR}`` and
``${env:VAR:-default}``, and ``$$`` for a literal ``$``. Any other ``$`` is left as it is, so
``$HOME`` is not expanded (a shell is not involved, and guessing would surprise).

``finalize`` is the last step of loading one entry: expand its fields, resolve its ``cwd`` and
check what only the expanded values show. The loader runs it only on the entries that won the
merge and are trusted, so an entry nobody approved never reads the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from orbmcp.config.entry_values import url_problem
from orbmcp.config.model import ConfigWarning, ServerConfig
from orbmcp.config.problems import Problems

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# What a scan stops at: "$$", the start of a reference, and a closing brace.
_MARK = re.compile(r"\$\$|\$\{|\}")
_REFERENCE = re.compile(rf"(?:env:)?({_NAME})(?::-(.*))?", re.DOTALL)
# ``${A:-${B:-${C}}}`` nests; a default nested deeper than this is refused.
MAX_NESTING = 8


class ExpansionError(ValueError):
    """A reference that cannot be expanded; the message says which and why."""


class MissingVariable(ExpansionError):
    def __init__(self, name: str) -> None:
        super().__init__(f"${{{name}}} is not set and has no default (use ${{{name}:-default}})")
        self.name = name


def _closing_brace(text: str, start: int) -> int:
    """The offset of the ``}`` that closes the reference whose body starts at ``start``, or -1."""
    depth = 0
    for match in _MARK.finditer(text, start):
        mark = match.group()
        if mark == "${":
            depth += 1
        elif mark == "}":
            if depth == 0:
                return match.start()
            depth -= 1
    return -1


def _tokens(text: str) -> Iterator[tuple[int, int, str | None, str | None]]:
    """(start, end, variable, default) for each ``$`` form; variable None means ``$$``."""
    position = 0
    while (start := text.find("$", position)) >= 0:
        if text.startswith("$$", start):
            yield start, start + 2, None, None
            position = start + 2
        elif text.startswith("${", start):
            close = _closing_brace(text, start + 2)
            if close < 0:
                raise ExpansionError(f"unterminated '${{' at offset {start} (use $$ for a literal $)")
            ref = _REFERENCE.fullmatch(text, start + 2, close)
            if ref is None:
                form = text[start : close + 1]
                raise ExpansionError(f"invalid variable reference '{form}' (use $$ for a literal $)")
            yield start, close + 1, ref.group(1), ref.group(2)
            position = close + 1
        else:
            position = start + 1


def expand(text: str, environ: Mapping[str, str], *, _depth: int = 0) -> str:
    """Expand every reference in ``text``; raises ExpansionError (or MissingVariable).

    A default is expanded in turn (``${B:-${HOME}}``), only when it is used, up to
    ``MAX_NESTING`` levels; a variable's value is never expanded again.
    """
    if "$" not in text:
        return text
    if _depth > MAX_NESTING:
        raise ExpansionError(f"defaults nested more than {MAX_NESTING} levels deep")
    out: list[str] = []
    last = 0
    for start, end, name, default in _tokens(text):
        out.append(text[last:start])
        if name is None:
            out.append("$")
        else:
            value = environ.get(name)
            if default is not None and not value:
                value = expand(default, environ, _depth=_depth + 1)
            if value is None:
                raise MissingVariable(name)
            out.append(value)
        last = end
    out.append(text[last:])
    return "".join(out)


def referenced_variables(text: str) -> tuple[str, ...]:
    """The variable names ``text`` may read (defaults' included), in order, without duplicates;
    () if it is invalid."""
    if "$" not in text:
        return ()
    try:
        names = _names(text, 0)
    except ExpansionError:
        return ()
    return tuple(dict.fromkeys(names))


def _names(text: str, depth: int) -> list[str]:
    if depth > MAX_NESTING:
        raise ExpansionError(f"defaults nested more than {MAX_NESTING} levels deep")
    names: list[str] = []
    for _, _, name, default in _tokens(text):
        if name is not None:
            names.append(name)
            if default:
                names.extend(_names(default, depth + 1))
    return names


# ---- finalize: expansion, once an entry is trusted and chosen -----------------------------------


def finalize(
    server: ServerConfig, *, environ: Mapping[str, str], cwd: Path
) -> tuple[ServerConfig | None, list[ConfigWarning]]:
    """Expand ``${VAR}`` in command, args, env, cwd, url and header values; resolve cwd; check the URL."""
    problems = Problems(server.name, server.file)
    missing: list[str] = []
    written: dict[str, str] = {}

    def one(key: str, value: str) -> str:
        try:
            expanded = expand(value, environ)
        except ExpansionError as exc:
            reason = "env_missing" if isinstance(exc, MissingVariable) else "invalid_variable_reference"
            if isinstance(exc, MissingVariable) and exc.name not in missing:
                missing.append(exc.name)
            problems.invalid(f'"{key}": {exc}', reason=reason)
            return value
        if expanded != value:
            written[key] = value
        return expanded

    command = one("command", server.command) if server.command is not None else None
    args = tuple(one(f"args[{i}]", a) for i, a in enumerate(server.args))
    env = {k: one(f"env.{k}", v) for k, v in server.env.items()}
    url = one("url", server.url) if server.url is not None else None
    headers = {k: one(f"headers.{k}", v) for k, v in server.headers.items()}
    work_dir: str | None = None
    if server.cwd is not None:
        expanded = one("cwd", server.cwd)
        work_dir = str(_resolve_dir(expanded, environ=environ, cwd=cwd))
    if missing:
        problems.suggest(missing_fix(missing))
    roots = None
    if server.roots is not None:
        roots = tuple(
            str(_resolve_dir(one(f"roots[{i}]", root), environ=environ, cwd=cwd))
            for i, root in enumerate(server.roots)
        )
    if problems.fatal:
        return None, problems.warnings()
    _check_expanded(problems, command=command, url=url, headers=headers)
    if problems.fatal:
        return None, problems.warnings()
    done = replace(server, command=command, args=args, env=env, cwd=work_dir, url=url, headers=headers)
    return replace(done, roots=roots, written=written), []


def expand_roots(
    roots: tuple[str, ...], *, environ: Mapping[str, str], cwd: Path, file: str | None
) -> tuple[tuple[str, ...], list[ConfigWarning]]:
    """``settings.roots`` expanded like ``cwd``; a root that cannot be expanded is left out with a
    warning (the others still count)."""
    out: list[str] = []
    warnings: list[ConfigWarning] = []
    for i, root in enumerate(roots):
        try:
            out.append(str(_resolve_dir(expand(root, environ), environ=environ, cwd=cwd)))
        except ExpansionError as exc:
            message = f'"settings.roots[{i}]": {exc}; ignored'
            warnings.append(ConfigWarning(message, file, None, "env_missing"))
    return tuple(out), warnings


def missing_fix(names: list[str]) -> str:
    """What to do about unset variables: ``set GITHUB_TOKEN`` (and a default as the other way)."""
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"set {listed} in the environment orbmcp runs in, or give a default: ${{{names[0]}:-value}}"


def _check_expanded(
    problems: Problems, *, command: str | None, url: str | None, headers: Mapping[str, str]
) -> None:
    """What only the expanded values can show: a control character, a bad URL, an empty command."""
    for key, value in headers.items():
        if "\r" in value or "\n" in value or "\x00" in value:
            problems.invalid(f'"headers.{key}" contains a control character after expansion')
    if url is not None:
        problem = url_problem("url", url)
        if problem is not None:
            problems.invalid(problem)
    if command is not None and not command.strip():
        problems.invalid('"command" is empty after expansion')


def _resolve_dir(path: str, *, environ: Mapping[str, str], cwd: Path) -> Path:
    """``cwd`` is relative to orbmcp's working directory; ``~`` means the user's home."""
    if path == "~" or path.startswith("~/"):
        home = environ.get("HOME") or str(Path.home())
        path = home + path[1:]
    resolved = Path(path)
    if not resolved.is_absolute():
        resolved = cwd / resolved
    return Path(os.path.normpath(resolved))
