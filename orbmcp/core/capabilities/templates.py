"""Resource templates (RFC 6570 URI templates): their parameters, and where a typed URI stands.

``parameters`` lists a template's variable names (what ``resources`` shows). ``completion_point``
follows a partly typed URI through a template's literal parts and simple ``{name}`` expressions,
to the variable being typed: completion then asks the server (``completion/complete``) for that
variable's values. Templates come from servers: lengths and counts are bounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_EXPRESSION = re.compile(r"\{([^{}]{0,200})\}")
_NAME = re.compile(r"[A-Za-z0-9_.%]+")
_OPERATORS = "+#./;?&"
MAX_PARAMETERS = 50


def parameters(uri_template: str) -> list[str]:
    """The variable names of ``uri_template``, in order, each once."""
    names: list[str] = []
    for match in _EXPRESSION.finditer(uri_template[:4000]):
        body = match.group(1)
        body = body[1:] if body[:1] in _OPERATORS else body
        for spec in body.split(","):
            name = spec.split(":", 1)[0].rstrip("*").strip()
            if name and name not in names:
                names.append(name)
    return names[:MAX_PARAMETERS]


def literal_prefix(uri_template: str) -> str:
    """The template's text before its first expression (what a URI of it starts with)."""
    return uri_template.split("{", 1)[0]


@dataclass(frozen=True)
class CompletionPoint:
    """A typed URI inside a template: ``prefix`` is typed and fixed, ``variable`` is being typed
    (``partial`` so far), and ``earlier`` holds the values of the variables before it."""

    prefix: str
    variable: str
    partial: str
    earlier: dict[str, str]


def completion_point(uri_template: str, typed: str) -> CompletionPoint | None:
    """Where ``typed`` stands in ``uri_template``; None when it does not follow the template up
    to a simple ``{name}`` expression that it is typing now."""
    parts = _EXPRESSION.split(uri_template[:4000])  # literal, expression, literal, ...
    consumed = 0
    earlier: dict[str, str] = {}
    for index in range(0, len(parts), 2):
        literal = parts[index]
        rest = typed[consumed:]
        if not rest.startswith(literal):
            return None
        consumed += len(literal)
        if index + 1 >= len(parts):
            return None  # the whole template is typed: nothing left to complete
        name = parts[index + 1]
        if not _NAME.fullmatch(name):
            return None  # operators and modifiers: not completed
        rest = typed[consumed:]
        following = parts[index + 2] if index + 2 < len(parts) else ""
        if following and following in rest:
            value = rest[: rest.index(following)]
            earlier[name] = value
            consumed += len(value)
            continue
        return CompletionPoint(typed[:consumed], name, rest, earlier)
    return None


__all__ = ["CompletionPoint", "completion_point", "literal_prefix", "parameters"]
