"""``${VAR}`` expansion for the fields that may carry secrets or paths.

Forms: ``${VAR}``, ``${VAR:-default}`` (default when unset or empty, as in POSIX shells),
``${env:VAR}`` and ``${env:VAR:-default}``, and ``$$`` for a literal ``$``. Any other ``$`` is
left as it is, so ``$HOME`` is not expanded (a shell is not involved, and guessing would surprise).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

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
