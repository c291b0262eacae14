"""``normalize_schema``: provider-safe input schemas (no ``$ref``, ``allOf``, nullable unions),
bounded on hostile input; and the extension's opt-in ``normalize_schemas`` on a real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.host import McpExtension, normalize_schema
from orbmcp.host.schemas import MAX_DEPTH, MAX_NODES, MAX_WEIGHT, weight
from tests.core.live import raw_entry, write_config
from tests.host.example_host import ExampleHost

FORBIDDEN = ("$ref", "$defs", "definitions", "allOf")


def keys_in(schema: object) -> set[str]:
    found: set[str] = set()
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(k for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def nodes_in(schema: object) -> int:
    count, stack = 0, [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += 1
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def depth_of(schema: object) -> int:
    deepest, stack = 0, [(schema, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


def test_refs_are_inlined_allof_merged_and_nullable_unions_reduced() -> None:
    schema = {
        "type": "object",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "Room": {"type": "object", "properties": {"floor": {"type": "integer"}}, "required": ["floor"]},
            "Named": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            "a/b": {"type": "boolean"},
        },
        "definitions": {"Old": {"type": "number"}},
        "properties": {
            "room": {"allOf": [{"$ref": "#/$defs/Room"}, {"$ref": "#/$defs/Named"}], "description": "Where"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "size": {"type": ["integer", "null"]},
            "flag": {"$ref": "#/$defs/a~1b"},
            "old": {"$ref": "#/definitions/Old", "description": "kept beside the reference"},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "tuple": {
                "type": "array",
                "items": [{"$ref": "#/$defs/a~1b"}],
                "prefixItems": [{"type": "string"}],
            },
        },
        "required": ["room"],
    }
    original = json.dumps(schema, sort_keys=True)
    out = normalize_schema(schema)
    assert json.dumps(schema, sort_keys=True) == original  # the input is left alone
    assert not keys_in(out) & {*FORBIDDEN, "$schema"}
    props = out["properties"]
    assert props["room"] == {
        "description": "Where",
        "type": "object",
        "properties": {"floor": {"type": "integer"}, "name": {"type": "string"}},
        "required": ["floor", "name"],
    }
    assert props["note"] == {"default": None, "type": "string"}
    assert props["size"] == {"type": "integer"}
    assert props["flag"] == {"type": "boolean"}
    assert props["old"] == {"type": "number", "description": "kept beside the reference"}
    assert props["either"] == {"oneOf": [{"type": "string"}, {"type": "integer"}]}  # null dropped
    assert props["tuple"]["items"] == [{"type": "boolean"}]
    assert out["required"] == ["room"] and out["type"] == "object"


@pytest.mark.parametrize(
    "junk",
    [None, 3, "schema", [], {"$ref": 5}, {"$ref": "https://evil.test/s.json"}, {"$ref": "#/nowhere/at/all"}],
)
def test_junk_and_unresolvable_references_become_any_value(junk: Any) -> None:
    out = normalize_schema(junk)
    assert out["type"] == "object" and "$ref" not in out
    nested = normalize_schema({"type": "object", "properties": {"x": junk}, 7: "non-string key"})
    assert nested["properties"]["x"] == {} and 7 not in nested


def test_pointers_into_lists_overlapping_allof_members_and_odd_unions() -> None:
    schema = {
        "$defs": {"pair": [{"type": "string"}, {"type": "integer"}]},
        "properties": {
            "second": {"$ref": "#/$defs/pair/1"},
            "past_end": {"$ref": "#/$defs/pair/9"},
            "too_long": {"$ref": "#" + "/a" * 40},
            "both": {
                "allOf": [
                    {"properties": {"x": {"type": "string"}}, "required": ["x"]},
                    {"properties": {"x": {"maxLength": 3}, "y": {"type": "integer"}}, "required": ["x", "y"]},
                ]
            },
            "only_null": {"anyOf": [{"type": "null"}]},
            "all_null_type": {"type": ["null"]},
            "multi": {"type": ["string", "integer", "null"]},
            "tags": {"type": "array", "items": {"$ref": "#/$defs/pair/0"}, "prefixItems": "junk"},
            "empty_union": {"anyOf": [], "additionalProperties": False},
            "odd_names": {"properties": {5: {"type": "string"}, "ok": {"type": "string"}}},
        },
    }
    props = normalize_schema(schema)["properties"]
    assert props["second"] == {"type": "integer"}
    assert props["past_end"] == {} and props["too_long"] == {}
    assert props["both"] == {
        "properties": {"x": {"type": "string", "maxLength": 3}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    assert props["only_null"] == {"type": "null"}
    assert props["all_null_type"] == {"type": "null"} and props["multi"] == {"type": ["string", "integer"]}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "prefixItems": []}
    assert props["empty_union"] == {"additionalProperties": False}
    assert props["odd_names"] == {"properties": {"ok": {"type": "string"}}}


def test_cycles_end_in_any_value() -> None:
    schema = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}},
            },
            "A": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}]},
            "B": {"allOf": [{"$ref": "#/$defs/A"}], "type": "object"},
        },
        "properties": {"list": {"$ref": "#/$defs/Node"}, "a": {"$ref": "#/$defs/A"}, "me": {"$ref": "#"}},
    }
    out = normalize_schema(schema)
    assert not keys_in(out) & set(FORBIDDEN)
    assert out["properties"]["list"]["properties"]["next"] == {}  # the cycle ends in "any value"
    assert out["properties"]["list"]["properties"]["v"] == {"type": "integer"}
    assert out["properties"]["a"] == {"type": "object"}
    assert out["properties"]["me"]["properties"]["me"] == {}


def test_fan_out_references_are_bounded_by_the_node_budget() -> None:
    # A "billion laughs": each level refers to the one below ten times: 10**12 nodes if expanded.
    defs: dict[str, Any] = {"L0": {"type": "string"}}
    for level in range(1, 13):
        defs[f"L{level}"] = {
            "type": "object",
            "properties": {f"p{i}": {"$ref": f"#/$defs/L{level - 1}"} for i in range(10)},
        }
    out = normalize_schema({"$defs": defs, "$ref": "#/$defs/L12"})
    assert nodes_in(out) <= MAX_NODES + 1
    json.dumps(out)


def test_a_huge_value_referenced_many_times_is_bounded_by_weight() -> None:
    big = "x" * 300_000
    schema = {
        "type": "object",
        "$defs": {"Big": {"type": "string", "description": big, "enum": [big]}},
        "properties": {f"p{i}": {"$ref": "#/$defs/Big"} for i in range(50)},
    }
    out = normalize_schema(schema)
    assert len(json.dumps(out)) <= MAX_WEIGHT + 50 * 200  # keywords beyond the budget are left out
    assert out["properties"]["p0"]["description"] == big and "description" not in out["properties"]["p49"]
    assert weight(list(range(10**6)), 100) == 101 and weight({"k": [big]}, 10) == 11


def test_deep_nesting_is_cut_at_the_depth_bound() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5000):  # far past Python's recursion limit if followed
        deep = {"type": "object", "properties": {"x": deep}}
    out = normalize_schema(deep)
    assert depth_of(out) <= 2 * (MAX_DEPTH + 2)
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(100_000)}}
    assert nodes_in(normalize_schema(wide)) <= MAX_NODES + 1
    union = {"anyOf": [{"type": "string", "minLength": i} for i in range(100_000)]}
    assert nodes_in(normalize_schema(union)) <= MAX_NODES + 1
    assert weight({str(i): i for i in range(1000)}, 10) == 11


async def test_the_extension_normalizes_bridged_schemas_only_when_asked(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"r": raw_entry("--ref-tool", timeoutMs=30000)})
    for normalize in (False, True):
        host = ExampleHost()
        with anyio.fail_after(60):  # beyond the servers' 30 s timeoutMs
            async with McpExtension(
                host, config_file=config, retries=False, normalize_schemas=normalize
            ) as ext:
                book = next(t for t in ext.tools if t.tool_name == "book")
                schema = book.input_schema
                assert book.input_schema is schema  # computed once per schema the server gave
                if normalize:
                    assert not keys_in(schema) & set(FORBIDDEN)
                    assert schema["properties"]["note"] == {"default": None, "type": "string"}
                else:
                    assert "$defs" in schema and "allOf" in schema["properties"]["room"]
                result = await book.call({"room": {"floor": 2, "name": "x"}})
                assert json.loads(result.text()) == {"room": {"floor": 2, "name": "x"}}
