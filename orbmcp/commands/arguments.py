"""Turn ``orbmcp call SERVER TOOL [ARGS...]`` arguments into the JSON object sent to ``tools/call``.

Argument forms:

- ``k=v``      ``v`` coerced by the parameter's JSON schema (below);
- ``k=@FILE``  the file's text, coerced like ``v`` (so an object parameter reads a JSON file);
  ``k=@@x`` is the literal ``@x``;
- ``k:=JSON``  raw JSON, never coerced (``k:=@FILE`` reads the JSON from a file);
- ``--args JSON`` a JSON object; ``-`` a JSON object on stdin.

Merge order, later wins: the stdin object, then ``--args``, then the ``k=...`` tokens in
command-line order. ``a.b=1`` sets ``b`` inside the object parameter ``a`` (only when ``a`` is an
object in the schema and no parameter is literally called ``a.b``).

Coercion of ``k=v``: a parameter typed ``string`` keeps ``v`` exactly, even ``42`` or ``null``.
Other types parse ``v`` as strict JSON (no NaN/Infinity) and check the kind; booleans also take
``True``/``FALSE``; ``enum``/``const`` accept only their members. When the schema allows several types (a type
list, ``anyOf``, ``oneOf``), they are tried as null, boolean, integer, number, array, object and
finally string, so ``string|null`` turns ``null`` into null and anything else into the text
(use ``k:='"null"'`` for the word). A parameter with no type information stays a string: the
parser never guesses that text was meant as JSON; ``k:=`` says so explicitly.

A key the schema does not list is refused (exit 2, with the parameter names and a close match
suggested): a typo must not be sent, silently ignored by the server. It is passed through only
when the schema allows more keys (``additionalProperties`` true, or a schema that then coerces
it; a matching ``patternProperties``). ``required`` parameters missing after the merge are listed
together. ``strict=False`` (``call --no-check``) sends what was given: unknown keys pass, missing
required ones are not reported, and a value the schema would refuse is sent as text.

Errors are ``UsageError``s naming the parameter and the expected type. Only this module's
``parse_call_arguments`` is meant for other modules (the schema helpers it uses are in
``orbmcp.commands.jsonschema``).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar

from orbmcp.commands.bounded_input import read_text_file
from orbmcp.commands.jsonschema import (
    TYPE_ORDER,
    deref,
    enum_values,
    json_kind,
    json_preview,
    object_schema,
    properties,
    schema_types,
    type_label,
)
from orbmcp.errors import UsageError
from orbmcp.text import shown_name

__all__ = ["deref", "json_preview", "parse_call_arguments", "schema_types", "type_label"]

# Whether this parse refuses what the schema does not allow (``strict``); a context variable so
# the helpers below need no extra parameter.
_STRICT: ContextVar[bool] = ContextVar("orbmcp_strict_arguments", default=True)
_GOT_PREVIEW = 60


def parse_call_arguments(
    tokens: Sequence[str],
    schema: Mapping[str, object] | None,
    *,
    args_json: str | None = None,
    stdin_text: str | None = None,
    read_file: Callable[[str], str] = read_text_file,
    strict: bool = True,
) -> dict[str, object]:
    """Parse and merge the argument tokens; see the module docstring for forms and order.
    Without a schema only the syntax is checked (nothing is refused for being unknown)."""
    token = _STRICT.set(strict and isinstance(schema, Mapping))
    try:
        return _parse(tokens, schema, args_json=args_json, stdin_text=stdin_text, read_file=read_file)
    finally:
        _STRICT.reset(token)


def _parse(
    tokens: Sequence[str],
    schema: Mapping[str, object] | None,
    *,
    args_json: str | None,
    stdin_text: str | None,
    read_file: Callable[[str], str],
) -> dict[str, object]:
    root: Mapping[str, object] = schema if isinstance(schema, Mapping) else {}
    result: dict[str, object] = {}
    assignments: list[str] = []
    stdin_used = False
    for arg in tokens:
        if arg == "-":
            if stdin_used:
                raise UsageError("'-' (a JSON object on stdin) given more than once")
            stdin_used = True
        else:
            assignments.append(arg)
    if stdin_used:
        if stdin_text is None:
            raise UsageError("'-' reads a JSON object from stdin, but there is no stdin")
        result.update(_json_object(stdin_text, "stdin ('-')"))
    if args_json is not None:
        result.update(_json_object(args_json, "--args"))
    for key in result:
        _check_known(key, root, root, "")
    for token in assignments:
        _apply_token(token, root, result, read_file)
    if _STRICT.get():
        _check_required(root, result)
    return result


_OBJECT_EXAMPLE = '{"key": "value", "count": 2}'


def _json_object(text: str, source: str) -> dict[str, object]:
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        where = ""
        if isinstance(exc, json.JSONDecodeError):
            where = f" (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        raise UsageError(
            f"{source}: expected a JSON object, got invalid JSON {_preview(text)}{where}",
            hint=f"give one JSON object, e.g. {_OBJECT_EXAMPLE}; k=v arguments go on the command line",
            reason="bad_json",
        ) from None
    if not isinstance(value, dict):
        raise UsageError(
            f"{source}: expected a JSON object, got {json_kind(value)}",
            hint=f"wrap the values in an object: {_OBJECT_EXAMPLE}",
            reason="bad_json",
        )
    return value


def _apply_token(
    token: str,
    root: Mapping[str, object],
    result: dict[str, object],
    read_file: Callable[[str], str],
) -> None:
    key, sep, raw = token.partition("=")
    if not sep:
        raise UsageError(
            f"argument {_preview(token)}: expected k=v, k:=JSON, k=@FILE or '-'",
            hint="pass a whole object with --args '{...}'",
        )
    forced_json = key.endswith(":")
    if forced_json:
        key = key[:-1]
    if not key:
        raise UsageError(f"argument {_preview(token)}: the parameter name before '=' is empty")
    path, leaf = _resolve_path(key, root)
    if forced_json:
        if raw.startswith("@"):
            raw = _read(key, raw[1:], read_file)
        ok, value = _loads(raw)
        if not ok:
            raise UsageError(f"argument '{key}': ':=' needs valid JSON, got {_preview(raw)}")
    else:
        if raw.startswith("@@"):
            raw = raw[1:]
        elif raw.startswith("@"):
            raw = _read(key, raw[1:], read_file)
        value = coerce(key, raw, leaf, root)
    _assign(result, path, key, value)


def _read(key: str, path: str, read_file: Callable[[str], str]) -> str:
    if not path:
        raise UsageError(f"argument '{key}': '@' needs a file name (use {key}=@@ for a literal '@')")
    try:
        return read_file(path)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"argument '{key}': cannot read file '{path}': {reason}") from exc


def _assign(result: dict[str, object], path: list[str], key: str, value: object) -> None:
    target = result
    for depth, segment in enumerate(path[:-1]):
        existing = target.get(segment)
        if existing is None:
            existing = {}
            target[segment] = existing
        if not isinstance(existing, dict):
            parent = ".".join(path[: depth + 1])
            raise UsageError(f"argument '{key}': '{parent}' is already set to a non-object value")
        target = existing
    target[path[-1]] = value


# ---------------------------------------------------------------------------------------- schema


def _resolve_path(key: str, root: Mapping[str, object]) -> tuple[list[str], object]:
    """Split ``a.b.c`` into the path the schema supports and return the leaf's schema."""
    path: list[str] = []
    node: object = root
    remaining = key
    while True:
        obj = object_schema(node, root)
        props = properties(obj)
        if remaining in props:
            return [*path, remaining], props[remaining]
        split = _split_nested(remaining, props, root)
        if split is None:
            here = obj if obj is not None else deref(node, root)
            scope = here if isinstance(here, Mapping) else {}
            return [*path, remaining], _check_known(remaining, scope, root, ".".join(path))
        head, remaining = split
        path.append(head)
        node = props[head]


def _split_nested(
    key: str, props: Mapping[str, object], root: Mapping[str, object]
) -> tuple[str, str] | None:
    start = 0
    while (dot := key.find(".", start)) != -1:
        head = key[:dot]
        if head in props and object_schema(props[head], root) is not None:
            return head, key[dot + 1 :]
        start = dot + 1
    return None


def _check_known(key: str, obj: Mapping[str, object], root: Mapping[str, object], prefix: str) -> object:
    """The schema for ``key`` when ``obj`` does not list it: refused unless the schema allows
    more keys (see the module docstring)."""
    obj_node = object_schema(obj, root) or obj
    props = properties(obj_node)
    if key in props:
        return props[key]
    extra = obj_node.get("additionalProperties")
    if isinstance(extra, Mapping):
        return extra
    patterns = obj_node.get("patternProperties")
    if isinstance(patterns, Mapping):
        for pattern, node in patterns.items():
            if _matches(str(pattern), key):
                return node
    if extra is True or not _STRICT.get():
        return None
    # Keys come from the command line or a JSON document, names from the server: shown escaped.
    name = shown_name(f"{prefix}.{key}" if prefix else key)
    known = [str(p) for p in props]
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
    described = [shown_name(_described(p, props, obj_node, root)) for p in known]
    listed = ", ".join(_truncate_list(described, 12))
    takes = f"the arguments are {listed}" if known else "it takes no arguments here"
    if close:
        message = (
            f"unknown argument '{name}' — did you mean "
            + " or ".join(f"'{shown_name(c)}'" for c in close)
            + "?"
        )
    else:
        message = f"unknown argument '{name}'"
    raise UsageError(
        message,
        hint=f"{takes}; --no-check sends arguments as given",
        reason="unknown_argument",
    )


def _matches(pattern: str, key: str) -> bool:
    try:
        return re.search(pattern, key) is not None
    except re.error:
        return False


def _described(
    name: str, props: Mapping[str, object], obj: Mapping[str, object], root: Mapping[str, object]
) -> str:
    required = obj.get("required")
    mark = ", required" if isinstance(required, list) and name in required else ""
    return f"{name} ({type_label(props.get(name), root)}{mark})"


def _check_required(root: Mapping[str, object], result: Mapping[str, object]) -> None:
    required = root.get("required")
    if not isinstance(required, list):
        return
    props = properties(root)
    missing = [name for name in required if isinstance(name, str) and name not in result]
    if not missing:
        return
    described = ", ".join(f"'{name}' ({type_label(props.get(name), root)})" for name in missing)
    noun = "argument" if len(missing) == 1 else "arguments"
    raise UsageError(f"missing required {noun}: {described}", hint="pass them as k=v")


# -------------------------------------------------------------------------------------- coercion


def coerce(key: str, raw: str, node: object, root: Mapping[str, object]) -> object:
    """Coerce the text of ``key=raw`` to what the parameter's schema ``node`` admits."""
    resolved = deref(node, root)
    types = schema_types(resolved, root)
    enum = enum_values(resolved) if isinstance(resolved, Mapping) else None
    if enum is not None:
        return _coerce_enum(key, raw, enum)
    if types is None:
        return raw
    for kind in TYPE_ORDER:
        if kind in types:
            ok, value = _COERCERS[kind](raw)
            if ok:
                return value
    if not _STRICT.get():
        return raw  # --no-check: sent as given; the server says what it makes of it
    expected = " or ".join(t for t in TYPE_ORDER if t in types)
    hint = None
    if types & {"array", "object"}:
        hint = f"arrays and objects are JSON, e.g. {key}='[1, 2]' or {key}='{{\"a\": 1}}'"
    raise UsageError(f"argument '{key}': expected {expected}, got {_preview(raw)}", hint=hint)


def _coerce_enum(key: str, raw: str, enum: list[object]) -> object:
    if any(isinstance(member, str) and member == raw for member in enum):
        return raw
    ok, value = _loads(raw)
    if ok:
        for member in enum:
            if _same_json(member, value):
                return member
    if not _STRICT.get():
        return raw
    choices = "|".join(_truncate_list([json_preview(member) for member in enum], 10))
    raise UsageError(f"argument '{key}': expected one of {choices}, got {_preview(raw)}")


def _as_null(raw: str) -> tuple[bool, object]:
    return (True, None) if raw.strip() == "null" else (False, None)


def _as_boolean(raw: str) -> tuple[bool, object]:
    lowered = raw.strip().lower()
    if lowered in ("true", "false"):
        return True, lowered == "true"
    return False, None


def _as_integer(raw: str) -> tuple[bool, object]:
    ok, value = _loads(raw)
    if ok and isinstance(value, int) and not isinstance(value, bool):
        return True, value
    if ok and isinstance(value, float) and value.is_integer():
        return True, int(value)
    return False, None


def _as_number(raw: str) -> tuple[bool, object]:
    ok, value = _loads(raw)
    if ok and isinstance(value, int | float) and not isinstance(value, bool):
        return True, value
    return False, None


def _as_array(raw: str) -> tuple[bool, object]:
    ok, value = _loads(raw)
    return (True, value) if ok and isinstance(value, list) else (False, None)


def _as_object(raw: str) -> tuple[bool, object]:
    ok, value = _loads(raw)
    return (True, value) if ok and isinstance(value, dict) else (False, None)


def _as_string(raw: str) -> tuple[bool, object]:
    return True, raw


_COERCERS: dict[str, Callable[[str], tuple[bool, object]]] = {
    "null": _as_null,
    "boolean": _as_boolean,
    "integer": _as_integer,
    "number": _as_number,
    "array": _as_array,
    "object": _as_object,
    "string": _as_string,
}


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> tuple[bool, object]:
    """Strict JSON: no NaN/Infinity, no overflowing floats; deep nesting is an error, not a crash."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False, None
    if isinstance(value, float) and not math.isfinite(value):
        return False, None
    return True, value


def _same_json(left: object, right: object) -> bool:
    kinds = {json_kind(left), json_kind(right)}
    if kinds <= {"integer", "number"}:
        return left == right
    return len(kinds) == 1 and left == right


def _preview(text: str) -> str:
    short = text if len(text) <= _GOT_PREVIEW else text[: _GOT_PREVIEW - 1] + "…"
    return repr(short)


def _truncate_list(items: list[str], limit: int) -> list[str]:
    return items if len(items) <= limit else [*items[:limit], "…"]
