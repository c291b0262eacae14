"""``${VAR}`` expansion for the fields that may carry secrets or paths, and ``finalize``.

Forms: ``${VAR}``, ``${VAR:-default}`` (default when unset or empty, as in POSIX shells),
``${env:VAR}`` and ``${env:VAR:-default}``, and ``$$`` for a literal ``$``. Any other ``$`` is
left as it is, so ``$HOME`` is not expanded (a shell is not involved, and guessing would surprise).

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

from orbmcp.config.checks import Problems, check_url
from orbmcp.config.model import ConfigWarning, ServerConfig

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# One token: "$$", or "${...}" up to the first "}", or an unterminated "${".
_TOKEN = re.compile(r"\$\$|\$\{([^}]*)\}|\$\{")
_REFERENCE = re.compile(rf"(?:env:)?({_NAME})(?::-(.*))?", re.DOTALL)


class ExpansionError(ValueError):
    """A reference that cannot be expanded; the message says which and why."""


class MissingVariable(ExpansionError):
    def __init__(self, name: str) -> None:
        super().__init__(f"${{{name}}} is not set and has no default (use ${{{name}:-default}})")
        self.name = name


def _tokens(text: str) -> Iterator[tuple[int, int, str | None, str | None]]:
    """(start, end, variable, default) for each ``$`` form; variable None means ``$$``."""
    for match in _TOKEN.finditer(text):
        form = match.group(0)
        if form == "$$":
            yield match.start(), match.end(), None, None
            continue
        body = match.group(1)
        if body is None:
            raise ExpansionError(f"unterminated '${{' at offset {match.start()} (use $$ for a literal $)")
        ref = _REFERENCE.fullmatch(body)
        if ref is None:
            raise ExpansionError(f"invalid variable reference '{form}' (use $$ for a literal $)")
        yield match.start(), match.end(), ref.group(1), ref.group(2)


def expand(text: str, environ: Mapping[str, str]) -> str:
    """Expand every reference in ``text``; raises ExpansionError (or MissingVariable)."""
    if "$" not in text:
        return text
    out: list[str] = []
    last = 0
    for start, end, name, default in _tokens(text):
        out.append(text[last:start])
        if name is None:
            out.append("$")
        else:
            value = environ.get(name)
            if default is not None and not value:
                value = default
            if value is None:
                raise MissingVariable(name)
            out.append(value)
        last = end
    out.append(text[last:])
    return "".join(out)


def referenced_variables(text: str) -> tuple[str, ...]:
    """The variable names ``text`` would read, in order, without duplicates; [] if it is invalid."""
    if "$" not in text:
        return ()
    try:
        names = [name for _, _, name, _ in _tokens(text) if name is not None]
    except ExpansionError:
        return ()
    return tuple(dict.fromkeys(names))


# ---- finalize: expansion, once an entry is trusted and chosen -----------------------------------


def finalize(
    server: ServerConfig, *, environ: Mapping[str, str], cwd: Path
) -> tuple[ServerConfig | None, list[ConfigWarning]]:
    """Expand ``${VAR}`` in command, args, env, cwd, url and header values; resolve cwd; check the URL."""
    problems = Problems(server.name, server.file)
    missing: list[str] = []

    def one(key: str, value: str) -> str:
        try:
            return expand(value, environ)
        except ExpansionError as exc:
            reason = "env_missing" if isinstance(exc, MissingVariable) else "invalid_variable_reference"
            if isinstance(exc, MissingVariable) and exc.name not in missing:
                missing.append(exc.name)
            problems.invalid(f'"{key}": {exc}', reason=reason)
            return value

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
    return replace(done, roots=roots), []


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
        check_url(problems, "url", url)
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
