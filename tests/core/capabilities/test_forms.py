"""Form-mode elicitation as data: every field kind and enum spelling, typed input, validation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orbmcp.core.capabilities.elicitation import (
    MAX_CHOICES,
    MAX_FIELDS,
    Choice,
    ElicitationRequest,
    FormField,
    InvalidValue,
    UnsupportedForm,
    check_content,
    check_value,
    defaults,
    parse_form,
    parse_text,
    url_elicitations,
)
from tests.servers.asks import FORM_SCHEMA


def fields() -> dict[str, FormField]:
    return {f.name: f for f in parse_form(FORM_SCHEMA)}


def test_every_field_kind_and_enum_spelling() -> None:
    f = fields()
    assert [x.name for x in parse_form(FORM_SCHEMA)] == list(FORM_SCHEMA["properties"])
    assert (f["name"].kind, f["name"].required, f["name"].min_length) == ("string", True, 1)
    assert (f["agree"].kind, f["agree"].required) == ("boolean", True)
    assert [f[k].format for k in ("email", "homepage", "birthday", "meeting")] == [
        "email",
        "uri",
        "date",
        "date-time",
    ]
    assert (f["count"].kind, f["count"].minimum, f["count"].maximum, f["count"].default) == (
        "integer",
        1,
        10,
        3,
    )
    assert (f["ratio"].kind, f["ratio"].maximum) == ("number", 1)
    assert f["color"].choices == (Choice("red", "red"), Choice("green", "green"), Choice("blue", "blue"))
    assert f["color"].default == "green"
    assert f["size"].choices == (Choice("s", "Small"), Choice("l", "Large"))  # oneOf const + title
    assert f["pet"].choices == (Choice("p1", "Cat"), Choice("p2", "Dog"))  # legacy enumNames
    assert (f["tags"].kind, f["tags"].min_items, f["tags"].max_items) == ("choices", 1, 2)
    assert f["fish"].choices == (Choice("f1", "Tuna"), Choice("f2", "Trout"))  # items.anyOf
    assert f["fish"].default == ["f1"]
    assert defaults(parse_form(FORM_SCHEMA)) == {"count": 3, "color": "green", "fish": ["f1"]}
    assert f["name"].to_json()["required"] is True and "choices" in f["size"].to_json()


def test_single_select_anyof_and_a_default_the_field_rejects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pick": {"type": "string", "anyOf": [{"const": "x", "title": "Ex"}], "default": "nope"},
            "n": {"type": "integer", "minimum": 5, "default": 1},
        },
    }
    pick, n = parse_form(schema)
    assert pick.kind == "choice" and pick.choices == (Choice("x", "Ex"),)
    assert pick.default is None and n.default is None  # a default the field refuses is not offered


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "type 'object'"),
        ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}, "array"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": [1, 2]}}}, "strings"),
        ({"type": "object", "properties": {"a": {"type": "string", "oneOf": [{"title": "x"}]}}}, "const"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": []}}}, "no options"),
        ({"type": "array"}, "type object"),
        ([], "not an object"),
        ({"type": "object", "properties": []}, "'properties'"),
        ({"type": "object", "properties": {"a": 3}}, "every property"),
        (
            {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(MAX_FIELDS + 1)}},
            "fields",
        ),
    ],
)
def test_schemas_outside_the_subset_are_refused_with_a_reason(schema: Any, why: str) -> None:
    with pytest.raises(UnsupportedForm, match=why):
        parse_form(schema)


def test_server_strings_and_counts_are_bounded() -> None:
    many = [f"v{i}" for i in range(MAX_CHOICES + 50)]
    schema = {"type": "object", "properties": {"a": {"type": "string", "title": "t" * 10_000, "enum": many}}}
    (a,) = parse_form(schema)
    assert len(a.choices) == MAX_CHOICES and len(a.title) == 200


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("name", "  Ada  ", "  Ada  "),
        ("agree", "YES", True),
        ("agree", "n", False),
        ("email", "a@b.org", "a@b.org"),
        ("homepage", "https://x.org/p?q=1", "https://x.org/p?q=1"),
        ("birthday", "2024-02-29", "2024-02-29"),
        ("meeting", "2025-01-01T10:00:00Z", "2025-01-01T10:00:00Z"),
        ("meeting", "2025-01-01T10:00:00.5+02:00", "2025-01-01T10:00:00.5+02:00"),
        ("count", "7", 7),
        ("ratio", "0.25", 0.25),
        ("ratio", "1", 1),
        ("color", "3", "blue"),
        ("color", "GREEN", "green"),
        ("size", "Large", "l"),
        ("pet", "2", "p2"),
        ("tags", "1, 3", ["a", "c"]),
        ("fish", "Trout,1", ["f2", "f1"]),
    ],
)
def test_typed_input_becomes_the_value(name: str, text: str, value: Any) -> None:
    assert parse_text(fields()[name], text) == value


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("agree", "maybe", "y or n"),
        ("email", "not-an-email", "email"),
        ("homepage", "no scheme", "URI"),
        ("birthday", "2023-02-29", "date"),
        ("birthday", "29.02.2024", "date"),
        ("meeting", "2025-01-01T10:00:00", "time zone"),
        ("count", "11", "at most 10"),
        ("count", "0", "at least 1"),
        ("count", "2.5", "whole number"),
        ("ratio", "lots", "not a number"),
        ("ratio", "1.5", "at most 1"),
        ("color", "9", "not one of"),
        ("tags", "1,2,3", "at most 2"),
        ("tags", "1,1", "twice"),
    ],
)
def test_invalid_input_says_why(name: str, text: str, why: str) -> None:
    with pytest.raises(InvalidValue, match=why):
        parse_text(fields()[name], text)


def test_check_content_drops_extras_and_lists_every_problem() -> None:
    f = parse_form(FORM_SCHEMA)
    values, errors = check_content(f, {"name": "Ada", "agree": True, "count": 4, "extra": 1, "ratio": None})
    assert values == {"name": "Ada", "agree": True, "count": 4} and errors == []
    values, errors = check_content(f, {"name": "", "count": "4", "tags": ["zzz"]})
    assert errors == [
        "name: at least 1 characters",
        "agree: required",
        "count: not a number",
        "tags: not one of the options",
    ]
    assert check_content(f, "no") == ({}, ["the answer is not an object of field values"])
    with pytest.raises(InvalidValue):
        check_value(fields()["agree"], "yes")


def test_url_elicitations_of_a_32042_error_are_bounded_and_checked() -> None:
    data = {
        "elicitations": [
            {"mode": "url", "url": "https://a.example/x", "message": "Sign in", "elicitationId": "e1"},
            {"url": 5},
            "junk",
            *({"url": f"https://b.example/{i}"} for i in range(20)),
        ]
    }
    found = url_elicitations(data)
    assert found[0].url == "https://a.example/x" and found[0].elicitation_id == "e1"
    assert len(found) == 8  # the first ten entries, without the two broken ones
    assert url_elicitations({"elicitations": "x"}) == [] and url_elicitations(None) == []
    request = ElicitationRequest("s", "url", "m", url="https://a", elicitation_id="e", retry=True)
    assert request.to_json() == {
        "server": "s",
        "mode": "url",
        "message": "m",
        "url": "https://a",
        "elicitationId": "e",
        "retry": True,
    }


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, derandomize=True, database=None)
@given(
    st.dictionaries(
        st.sampled_from(["type", "properties", "required"]),
        _json
        | st.dictionaries(
            st.text(max_size=5),
            st.dictionaries(
                st.sampled_from(
                    [
                        "type",
                        "enum",
                        "oneOf",
                        "anyOf",
                        "items",
                        "default",
                        "format",
                        "minimum",
                        "enumNames",
                        "title",
                        "minItems",
                    ]
                ),
                _json,
                max_size=5,
            ),
            max_size=4,
        ),
        max_size=3,
    )
)
def test_any_schema_is_parsed_or_refused_never_a_crash(schema: dict[str, Any]) -> None:
    try:
        parsed = parse_form(schema)
    except UnsupportedForm:
        return
    for f in parsed:
        if f.default is not None:
            check_value(f, f.default)  # offered defaults are always acceptable
        check_content(parsed, {f.name: f.default})
