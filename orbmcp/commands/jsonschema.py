"""Reading the JSON Schemas servers send (tool inputs, prompt arguments): types, refs, objects.

Defensive by design: a schema is untrusted input, so refs are local only (never fetched), with a
hop limit; nesting has a depth limit; anything odd reads as "no type information".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from urllib.parse import unquote

# Tried in this order when a schema allows several types: the specific before the permissive.
TYPE_ORDER = ("null", "boolean", "integer", "number", "array", "object", "string")
_MAX_REF_HOPS = 16
_MAX_DEPTH = 8


def deref(node: object, root: Mapping[str, object]) -> object:
    """Follow local ``$ref`` pointers (``#/...``) from ``node``; remote refs are never fetched.

    Returns the target, or ``None`` for a ref that is remote, dangling or part of a cycle
    longer than the hop limit, so callers treat it as "no type information".
    """
    seen: set[str] = set()
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        if not ref.startswith("#") or ref in seen:
            return None
        seen.add(ref)
        node = _pointer(root, ref[1:])
    return None


def _pointer(root: Mapping[str, object], pointer: str) -> object:
    current: object = root
    if not pointer:
        return current
    if not pointer.startswith("/"):
        return None  # an anchor ("#name"), which local schemas rarely use
    for raw in pointer[1:].split("/"):
        segment = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(current, Mapping):
            current = current.get(segment)
        elif isinstance(current, list) and segment.isdigit() and int(segment) < len(current):
            current = current[int(segment)]
        else:
            return None
    return current


def schema_types(node: object, root: Mapping[str, object], depth: int = 0) -> set[str] | None:
    """The JSON types a schema admits, or ``None`` when it does not constrain the type."""
    node = deref(node, root)
    if not isinstance(node, Mapping) or depth > _MAX_DEPTH:
        return None
    enum = enum_values(node)
    if enum is not None:
        return {json_kind(value) for value in enum}
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared} & set(TYPE_ORDER) or None
    if isinstance(declared, list):
        return {item for item in declared if isinstance(item, str) and item in TYPE_ORDER} or None
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword)
        if isinstance(branches, list) and branches:
            union: set[str] = set()
            for branch in branches:
                types = schema_types(branch, root, depth + 1)
                if types is None:
                    return None
                union |= types
            return union
    branches = node.get("allOf")
    if isinstance(branches, list):
        for branch in branches:
            types = schema_types(branch, root, depth + 1)
            if types is not None:
                return types
    if isinstance(node.get("properties"), Mapping):
        return {"object"}
    if "items" in node or "prefixItems" in node:
        return {"array"}
    return None


def enum_values(node: Mapping[str, object]) -> list[object] | None:
    if "const" in node:
        return [node["const"]]
    enum = node.get("enum")
    return enum if isinstance(enum, list) and enum else None


def object_schema(node: object, root: Mapping[str, object]) -> Mapping[str, object] | None:
    """The schema itself when it describes an object with properties (one level of allOf)."""
    node = deref(node, root)
    if not isinstance(node, Mapping):
        return None
    if isinstance(node.get("properties"), Mapping):
        return node
    branches = node.get("allOf")
    if isinstance(branches, list):
        for branch in branches:
            found = deref(branch, root)
            if isinstance(found, Mapping) and isinstance(found.get("properties"), Mapping):
                return found
    return None


def properties(node: Mapping[str, object] | None) -> Mapping[str, object]:
    props = node.get("properties") if node is not None else None
    return props if isinstance(props, Mapping) else {}


def type_label(node: object, root: Mapping[str, object]) -> str:
    types = schema_types(node, root)
    if types is None:
        return "any"
    return " or ".join(t for t in TYPE_ORDER if t in types)


def json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "string"


def json_preview(value: object, limit: int = 40) -> str:
    """Compact JSON for messages and signatures, never raising on odd values."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
