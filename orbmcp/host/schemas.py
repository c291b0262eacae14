"""Tool input schemas for model providers that reject parts of JSON Schema (opt-in).

Some providers refuse a tool whose parameters use ``$ref``/``$defs``, ``allOf`` or a nullable
union (``anyOf: [X, {"type": "null"}]``), all of which SDK-built servers emit for ordinary typed
parameters. ``normalize_schema`` rewrites a schema into the plain subset: local ``$ref``s inlined
(a reference back into its own expansion becomes ``{}``, "any value"), ``allOf`` members merged
into one object schema, a nullable union reduced to its one non-null member and ``type: [T,
"null"]`` to ``T``. pi-mcp-extension did the same while converting schemas for pi.

The schema comes from a server, so it is untrusted: the rewrite is bounded in depth
(``MAX_DEPTH``), in the number of schema nodes it produces (``MAX_NODES``, which also stops a
"billion laughs" of references that fan out) and in the size of the other keywords' values it
copies (``MAX_WEIGHT``, about characters: a huge ``default`` referenced a thousand times); past a
bound a subschema becomes ``{}`` and a keyword value is left out. It never raises and never changes
its input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 32
MAX_NODES = 4000
MAX_WEIGHT = 1_000_000
_MAX_POINTER_PARTS = 16
# Keywords whose value is one subschema, a list of them, or a name -> subschema map.
_ONE = frozenset(
    {
        "items",
        "additionalProperties",
        "additionalItems",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
    }
)
_LISTS = frozenset({"prefixItems"})
_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_DROPPED = frozenset({"$defs", "definitions", "$schema", "$id", "$anchor", "$comment", "$ref"})
_NULL = {"type": "null"}


def normalize_schema(schema: object) -> dict[str, Any]:
    """A copy of ``schema`` without ``$ref``, ``$defs``, ``allOf`` and nullable unions (see the
    module docstring); always an object schema (``{"type": "object"}`` for anything else)."""
    if not isinstance(schema, Mapping):
        return {"type": "object"}
    out = _Rewrite(schema).node(schema, 0, ())
    if out.get("type") is None:
        out["type"] = "object"
    return out


class _Rewrite:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.nodes = 0
        self.weight = 0

    @property
    def spent(self) -> bool:
        return self.nodes >= MAX_NODES

    def node(self, value: object, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        """One subschema rewritten; ``refs`` are the references being expanded above it."""
        self.nodes += 1
        if not isinstance(value, Mapping) or depth > MAX_DEPTH or self.spent:
            return {}  # ``true``, junk, or past a bound: any value
        out: dict[str, Any] = {}
        ref = value.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref)
            if target is not None and ref not in refs:
                out = self.node(target, depth + 1, (*refs, ref))
        for key, sub in value.items():
            if not isinstance(key, str) or key in _DROPPED:
                continue
            if key in _LISTS or (key == "items" and isinstance(sub, list)):
                out[key] = self._list(sub, depth, refs)
            elif key in _ONE:
                out[key] = self.node(sub, depth + 1, refs) if isinstance(sub, Mapping) else sub
            elif key in _MAPS and isinstance(sub, Mapping):
                out[key] = self._map(sub, depth, refs)
            elif key not in ("allOf", "anyOf", "oneOf") and self._affords(sub):
                out[key] = sub
        for key in ("anyOf", "oneOf"):
            if isinstance(value.get(key), list):
                out = self._union(out, key, self._list(value[key], depth, refs))
        if isinstance(value.get("allOf"), list):
            for member in self._list(value["allOf"], depth, refs):
                out = merge(out, member)
        if isinstance(out.get("type"), list):
            out["type"] = _non_null_type(out["type"])
        return out

    def _affords(self, value: object) -> bool:
        """Whether a copied keyword value (a description, an enum, a default) fits the weight left."""
        left = MAX_WEIGHT - self.weight
        cost = weight(value, left)
        if cost > left:
            return False
        self.weight += cost
        return True

    def _list(self, items: object, depth: int, refs: tuple[str, ...]) -> list[dict[str, Any]]:
        if not isinstance(items, list):
            return []
        out: list[dict[str, Any]] = []
        for item in items:
            if self.spent:
                break
            out.append(self.node(item, depth + 1, refs))
        return out

    def _map(self, items: Mapping[Any, Any], depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, sub in items.items():
            if self.spent:
                break
            if isinstance(name, str):
                out[name] = self.node(sub, depth + 1, refs)
        return out

    def _union(self, out: dict[str, Any], key: str, members: list[dict[str, Any]]) -> dict[str, Any]:
        """A nullable union of one type becomes that type; other unions stay as they are."""
        others = [m for m in members if m != _NULL]
        if len(others) == 1 or (members and not others):
            return merge(out, others[0] if others else _NULL)
        if others:
            out[key] = others
        return out

    def _resolve(self, ref: str) -> object | None:
        """The target of a local JSON pointer (``#/$defs/Name``); None for anything else."""
        if not ref.startswith("#"):
            return None  # remote references are never fetched
        parts = [p for p in ref[1:].split("/") if p]
        if len(parts) > _MAX_POINTER_PARTS:
            return None
        target: object = self.root
        for part in parts:
            name = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping):
                target = target.get(name)
            elif isinstance(target, list) and name.isdigit() and int(name) < len(target):
                target = target[int(name)]
            else:
                return None
        return target


def merge(first: dict[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """``allOf`` of two rewritten schemas as one: properties and required lists joined, other
    keywords kept from the first that states them."""
    out = dict(first)
    for key, value in second.items():
        if key == "properties" and isinstance(out.get(key), dict) and isinstance(value, Mapping):
            props = dict(out[key])
            for name, sub in value.items():
                props[name] = merge(props[name], sub) if isinstance(props.get(name), dict) else sub
            out[key] = props
        elif key == "required" and isinstance(out.get(key), list) and isinstance(value, list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        else:
            out.setdefault(key, value)
    return out


def weight(value: object, limit: int) -> int:
    """About how many characters ``value`` takes as JSON, counted only up to ``limit`` (then
    ``limit + 1``), so the count costs at most ``limit`` steps whatever the value's size."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, Mapping):
            total += 2
            for key, sub in item.items():
                total += len(key) + 3 if isinstance(key, str) else 3
                stack.append(sub)
                if total > limit:
                    break
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            if total <= limit:
                stack.extend(item)
        else:
            total += 8
    return min(total, limit + 1)


def _non_null_type(types: list[Any]) -> Any:
    kept = [t for t in types if t != "null"] or types
    return kept[0] if len(kept) == 1 else kept
