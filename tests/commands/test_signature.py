"""Readable one-line signatures from tool input schemas."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orbmcp.commands.signature import MAX_SIGNATURE_LENGTH, signature
from tests.commands import schema_nodes


def test_required_optional_and_default() -> None:
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "times": {"type": "integer", "default": 1}},
        "required": ["text"],
    }
    assert signature("echo", schema) == "echo(text: string, times?: integer = 1)"


@pytest.mark.parametrize(
    ("prop", "rendered"),
    [
        ({"enum": ["a", "b"]}, 'p: "a"|"b"'),
        ({"type": "string", "enum": ["fast", "slow"]}, 'p: "fast"|"slow"'),
        ({"enum": list(range(10))}, "p: 0|1|2|3|4|5|…"),
        ({"const": "fixed"}, 'p: "fixed"'),
        ({"type": "array", "items": {"type": "string"}}, "p: string[]"),
        ({"type": "array"}, "p: any[]"),
        ({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "p: number[][]"),
        (
            {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
            "p: (string|integer)[]",
        ),
        ({"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]}, "p: [number, string]"),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "p: string|null"),
        ({"oneOf": [{"type": "string"}, {"type": "string"}]}, "p: string"),
        ({"type": ["integer", "null"]}, "p: integer|null"),
        ({"type": ["array", "null"], "items": {"type": "string"}}, "p: string[]|null"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": ["a"],
            },
            "p: {a: string, b?: integer}",
        ),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "p: Record<string, integer>"),
        ({"type": "object"}, "p: object"),
        ({"allOf": [{"$ref": "#/$defs/Int"}]}, "p: integer"),
        ({"$ref": "#/$defs/Int"}, "p: integer"),
        ({"$ref": "https://example.test/schemas/Thing.json"}, "p: Thing.json"),
        ({"$ref": "#/$defs/Missing"}, "p: Missing"),
        ({}, "p: any"),
        (True, "p: any"),
        ({"type": "string", "default": "x" * 100}, 'p: string = "' + "x" * 22 + "…"),
    ],
)
def test_types(prop: object, rendered: str) -> None:
    schema = {"properties": {"p": prop}, "required": ["p"], "$defs": {"Int": {"type": "integer"}}}
    assert signature("t", schema) == f"t({rendered})"


def test_missing_or_empty_schema() -> None:
    assert signature("t", None) == "t(...)"
    assert signature("t", {}) == "t(...)"
    assert signature("t", {"type": "object", "properties": {}}) == "t()"
    assert signature("t", {"type": "object"}) == "t()"
    assert signature("t", {"type": "object", "additionalProperties": {"type": "string"}}) == "t(...: string)"


def test_odd_parameter_names_are_quoted() -> None:
    schema = {"properties": {"my key": {"type": "string"}, "ok_name": {"type": "string"}}}
    assert signature("t", schema) == 't("my key"?: string, ok_name?: string)'


def test_ref_cycle_prints_the_definition_name() -> None:
    schema = {
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    }
    assert signature("t", schema) == "t(node?: {next?: Node})"
    self_loop = {"properties": {"x": {"$ref": "#/properties/x"}}}
    assert signature("t", self_loop) == "t(x?: x)"


def test_deep_nesting_is_cut() -> None:
    inner: dict[str, object] = {"type": "integer"}
    for _ in range(30):
        inner = {"type": "object", "properties": {"a": inner}}
    text = signature("t", {"properties": {"deep": inner}})
    assert text.startswith("t(deep?: {a?: {a?: ")
    assert "object" in text
    assert len(text) < 80


def test_long_parameter_lists_are_cut() -> None:
    schema = {"properties": {f"param_{i}": {"type": "string"} for i in range(40)}}
    text = signature("t", schema)
    assert len(text) <= MAX_SIGNATURE_LENGTH + 10
    assert text.endswith(" more)")
    assert text.startswith("t(param_0?: string, param_1?: string")


SCHEMA_NODES = schema_nodes(
    ["string", "integer", "array", "object", "null", "#/$defs/a", "#", "#/properties/x", "#/$defs/a/x"],
    max_text=10,
    max_keys=6,
    max_leaves=30,
)


@settings(max_examples=200)
@given(
    schema=st.dictionaries(
        st.sampled_from(["properties", "type", "required", "$defs", "additionalProperties", "$ref"]),
        SCHEMA_NODES,
        max_size=5,
    )
)
def test_any_schema_gives_a_bounded_signature(schema: dict[str, object]) -> None:
    text = signature("tool", schema)
    assert text.startswith("tool(")
    assert text.endswith(")")
    assert len(text) <= len("tool") + MAX_SIGNATURE_LENGTH + 20
