"""A one-line, readable signature from a tool's JSON input schema, for ``orbmcp tools``.

``echo(text: string, times?: integer = 1)``: ``?`` marks an optional parameter, enums read
``"a"|"b"``, arrays ``string[]``, small objects ``{a: string, b?: integer}``. Local ``$ref``s are
followed a bounded number of levels (a cycle prints the definition's name); remote ones are never
fetched. Output length is bounded, whatever the schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from orbmcp.commands.arguments import deref, json_preview
from orbmcp.commands.results.tools import ParameterInfo

MAX_SIGNATURE_LENGTH = 240
_MAX_TYPE_LENGTH = 80
_MAX_NAME_LENGTH = 40
_MAX_DEPTH = 4
_MAX_OBJECT_DEPTH = 2
_MAX_CHOICES = 6
_SIMPLE = {"string", "integer", "number", "boolean", "null"}
_PLAIN_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.-]*")


def signature(
    name: str, schema: Mapping[str, object] | None, *, max_length: int = MAX_SIGNATURE_LENGTH
) -> str:
    """``name(params)``; ``name(...)`` when the schema is missing, so it never claims "no arguments"."""
    if not isinstance(schema, Mapping):
        return f"{name}(...)"
    params = _TypeWriter(schema).parameters(schema, depth=0)
    if params is None:
        return f"{name}(...)"
    shown: list[str] = []
    used = len(name) + 2
    for index, param in enumerate(params):
        cost = len(param) + (2 if shown else 0)
        if used + cost > max_length:
            shown.append(f"… {len(params) - index} more")
            break
        shown.append(param)
        used += cost
    return f"{name}({', '.join(shown)})"


class _TypeWriter:
    def __init__(self, root: Mapping[str, object]) -> None:
        self.root = root

    def parameters(self, node: object, depth: int, seen: frozenset[str] = frozenset()) -> list[str] | None:
        """``name?: type = default`` for each property; ``None`` when nothing is known."""
        node = deref(node, self.root)
        if not isinstance(node, Mapping):
            return None
        props = node.get("properties")
        if not isinstance(props, Mapping):
            extra = node.get("additionalProperties")
            if isinstance(extra, Mapping):
                return [f"...: {self.type_of(extra, depth + 1, seen)}"]
            declared = node.get("type")
            return [] if declared == "object" or extra is False else None
        required = node.get("required")
        required_names = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
        params: list[str] = []
        for prop_name, prop_schema in props.items():
            label = str(prop_name)
            if not _PLAIN_NAME.fullmatch(label):
                label = json.dumps(label, ensure_ascii=False)
            label = _clip(label, _MAX_NAME_LENGTH)
            optional = "" if prop_name in required_names else "?"
            text = f"{label}{optional}: {self.type_of(prop_schema, depth + 1, seen)}"
            resolved = deref(prop_schema, self.root)
            if isinstance(resolved, Mapping) and "default" in resolved:
                text += f" = {json_preview(resolved['default'], 24)}"
            params.append(text)
        return params

    def type_of(self, node: object, depth: int, seen: frozenset[str] = frozenset()) -> str:
        return _clip(self._type(node, depth, seen), _MAX_TYPE_LENGTH)

    def _type(self, node: object, depth: int, seen: frozenset[str]) -> str:
        if node is True:
            return "any"
        if node is False:
            return "never"
        if not isinstance(node, Mapping):
            return "any"
        if depth > _MAX_DEPTH:
            return "…"
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = deref(node, self.root)
            if ref in seen or not isinstance(target, Mapping) or depth >= _MAX_DEPTH:
                return _ref_name(ref)
            return self._type(target, depth + 1, seen | {ref})
        choices = _choices(node)
        if choices is not None:
            return choices
        declared = node.get("type")
        if isinstance(declared, list):
            kinds = [kind for kind in declared if isinstance(kind, str)]
            return _union([self._typed(node, kind, depth, seen) for kind in kinds]) or "any"
        if isinstance(declared, str):
            return self._typed(node, declared, depth, seen)
        for keyword in ("anyOf", "oneOf"):
            branches = node.get(keyword)
            if isinstance(branches, list) and branches:
                return _union([self._type(b, depth + 1, seen) for b in branches[: _MAX_CHOICES + 1]])
        branches = node.get("allOf")
        if isinstance(branches, list) and branches:
            parts = [self._type(b, depth + 1, seen) for b in branches[:_MAX_CHOICES]]
            return " & ".join(dict.fromkeys(parts))
        if isinstance(node.get("properties"), Mapping):
            return self._typed(node, "object", depth, seen)
        if "items" in node or "prefixItems" in node:
            return self._typed(node, "array", depth, seen)
        return "any"

    def _typed(self, node: Mapping[str, object], kind: str, depth: int, seen: frozenset[str]) -> str:
        if kind == "array":
            return self._array(node, depth, seen)
        if kind == "object":
            return self._object(node, depth, seen)
        return kind if kind in _SIMPLE else _clip(kind, 20)

    def _array(self, node: Mapping[str, object], depth: int, seen: frozenset[str]) -> str:
        tuple_items = node.get("prefixItems")
        if not isinstance(tuple_items, list):
            legacy = node.get("items")
            tuple_items = legacy if isinstance(legacy, list) else None
        if tuple_items is not None:
            parts = [self._type(item, depth + 1, seen) for item in tuple_items[:_MAX_CHOICES]]
            return "[" + ", ".join(parts) + ("" if len(tuple_items) <= _MAX_CHOICES else ", …") + "]"
        items = node.get("items")
        if items is None or items is True:
            return "any[]"
        item = self._type(items, depth + 1, seen)
        return f"({item})[]" if "|" in item or " " in item else f"{item}[]"

    def _object(self, node: Mapping[str, object], depth: int, seen: frozenset[str]) -> str:
        props = node.get("properties")
        if isinstance(props, Mapping) and props:
            if depth > _MAX_OBJECT_DEPTH:
                return "object"
            params = self.parameters(node, depth, seen) or []
            return "{" + ", ".join(params) + "}"
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping) and extra:
            return f"Record<string, {self._type(extra, depth + 1, seen)}>"
        return "object"


def _choices(node: Mapping[str, object]) -> str | None:
    if "const" in node:
        return json_preview(node["const"], 30)
    enum = node.get("enum")
    if not isinstance(enum, list) or not enum:
        return None
    shown = [json_preview(value, 30) for value in enum[:_MAX_CHOICES]]
    if len(enum) > _MAX_CHOICES:
        shown.append("…")
    return "|".join(shown)


def _union(parts: list[str]) -> str:
    return "|".join(dict.fromkeys(part for part in parts if part))


def _ref_name(ref: str) -> str:
    tail = re.split(r"[/#]", ref.rstrip("/"))[-1] or "ref"
    return _clip(tail, 30)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parameter_rows(schema: Mapping[str, object] | None) -> tuple[ParameterInfo, ...]:
    """Each top-level parameter of an input schema, for the view of one tool."""
    if not isinstance(schema, Mapping):
        return ()
    node = deref(schema, schema)
    props = node.get("properties") if isinstance(node, Mapping) else None
    if not isinstance(props, Mapping) or not isinstance(node, Mapping):
        return ()
    required = node.get("required")
    needed = set(required) if isinstance(required, list) else set()
    writer = _TypeWriter(schema)
    rows: list[ParameterInfo] = []
    for name, raw in list(props.items())[:200]:
        prop = deref(raw, schema)
        spec = prop if isinstance(prop, Mapping) else {}
        enum = spec.get("enum")
        desc = spec.get("description")
        rows.append(
            ParameterInfo(
                name=str(name),
                type=_clip(writer.type_of(raw, 0), _MAX_TYPE_LENGTH),
                required=name in needed,
                has_default="default" in spec,
                default=spec.get("default"),
                choices=tuple(enum[:50]) if isinstance(enum, list) else (),
                description=desc if isinstance(desc, str) else None,
            )
        )
    return tuple(rows)
