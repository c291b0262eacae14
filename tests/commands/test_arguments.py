"""`orbmcp call` argument parsing: forms, schema coercion, merge order, errors."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orbmcp.commands.arguments import parse_call_arguments
from orbmcp.errors import UsageError
from tests.commands import schema_nodes

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "nothing": {"type": "null"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "opts": {"type": "object", "properties": {"depth": {"type": "integer"}, "name": {"type": "string"}}},
        "mode": {"enum": ["fast", "slow"]},
        "level": {"enum": [1, 2, 3]},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "num_or_str": {"type": ["string", "integer"]},
        "ref": {"$ref": "#/$defs/Count"},
        "anything": {},
    },
    "required": ["text"],
    "$defs": {"Count": {"type": "integer", "minimum": 0}},
}


def parse(
    *tokens: str,
    schema: Mapping[str, object] | None = SCHEMA,
    args_json: str | None = None,
    stdin_text: str | None = None,
    read_file: Callable[[str], str] | None = None,
) -> dict[str, object]:
    if read_file is None:
        return parse_call_arguments(tokens, schema, args_json=args_json, stdin_text=stdin_text)
    return parse_call_arguments(
        tokens, schema, args_json=args_json, stdin_text=stdin_text, read_file=read_file
    )


@pytest.mark.parametrize(
    ("token", "key", "value"),
    [
        ("count=42", "count", 42),
        ("count=-3", "count", -3),
        ("count=4.0", "count", 4),
        ("ratio=0.5", "ratio", 0.5),
        ("ratio=2", "ratio", 2),
        ("flag=true", "flag", True),
        ("flag=False", "flag", False),
        ("nothing=null", "nothing", None),
        ('tags=["a", "b"]', "tags", ["a", "b"]),
        ('opts={"depth": 2}', "opts", {"depth": 2}),
        ("mode=fast", "mode", "fast"),
        ("level=2", "level", 2),
        ("maybe=null", "maybe", None),
        ("maybe=hello", "maybe", "hello"),
        ("num_or_str=42", "num_or_str", 42),
        ("num_or_str=abc", "num_or_str", "abc"),
        ("ref=7", "ref", 7),
        ("anything=42", "anything", "42"),  # no type information: the text as given
    ],
)
def test_coercion_by_schema(token: str, key: str, value: object) -> None:
    assert parse("text=x", token) == {"text": "x", key: value}
    assert type(parse("text=x", token)[key]) is type(value)


@pytest.mark.parametrize("raw", ["42", "true", "null", "[1]", '{"a": 1}', "", "  spaced  ", "a=b", "x:=y"])
def test_strings_stay_raw(raw: str) -> None:
    assert parse(f"text={raw}") == {"text": raw}


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("count=abc", "argument 'count': expected integer, got 'abc'"),
        ("count=1.5", "argument 'count': expected integer, got '1.5'"),
        ("count=true", "argument 'count': expected integer, got 'true'"),
        ("ratio=NaN", "argument 'ratio': expected number, got 'NaN'"),
        ("ratio=1e999", "argument 'ratio': expected number, got '1e999'"),
        ("flag=yes", "argument 'flag': expected boolean, got 'yes'"),
        ("nothing=0", "argument 'nothing': expected null, got '0'"),
        ("tags=a,b", "argument 'tags': expected array, got 'a,b'"),
        ("opts=[1]", "argument 'opts': expected object, got '[1]'"),
        ("mode=medium", """argument 'mode': expected one of "fast"|"slow", got 'medium'"""),
        ("level=4", "argument 'level': expected one of 1|2|3, got '4'"),
        ("ref=-x", "argument 'ref': expected integer, got '-x'"),
    ],
)
def test_coercion_errors_name_parameter_and_type(token: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        parse("text=x", token)
    assert str(info.value) == message


def test_array_error_hints_at_json() -> None:
    with pytest.raises(UsageError) as info:
        parse("text=x", "tags=a")
    assert info.value.hint is not None
    assert "tags='[1, 2]'" in info.value.hint


def test_forced_json() -> None:
    assert parse('text:="42"', "anything:=42", 'opts:={"a": [1, null]}') == {
        "text": "42",
        "anything": 42,
        "opts": {"a": [1, None]},
    }
    with pytest.raises(UsageError, match=r"argument 'count': ':=' needs valid JSON, got 'nope'"):
        parse("text=x", "count:=nope")


def test_file_arguments(tmp_path: Path) -> None:
    (tmp_path / "body.txt").write_text("line one\n42\n", encoding="utf-8")
    (tmp_path / "opts.json").write_text('{"depth": 3}', encoding="utf-8")
    (tmp_path / "raw.json").write_text("[1, 2]", encoding="utf-8")
    result = parse(
        f"text=@{tmp_path / 'body.txt'}",
        f"opts=@{tmp_path / 'opts.json'}",
        f"anything:=@{tmp_path / 'raw.json'}",
    )
    assert result == {"text": "line one\n42\n", "opts": {"depth": 3}, "anything": [1, 2]}


def test_double_at_is_a_literal_at() -> None:
    assert parse("text=@@handle") == {"text": "@handle"}
    assert parse("text=@@@x") == {"text": "@@x"}
    assert parse("text=@@") == {"text": "@"}


def test_file_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    with pytest.raises(UsageError, match=rf"argument 'text': cannot read file '{missing}': No such file"):
        parse(f"text=@{missing}")
    with pytest.raises(UsageError, match="'@' needs a file name"):
        parse("text=@")
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="cannot read file"):
        parse(f"text=@{tmp_path / 'bin'}")


def test_read_file_is_injectable() -> None:
    seen: list[str] = []

    def fake(path: str) -> str:
        seen.append(path)
        return "7"

    assert parse("text=x", "count=@n.txt", read_file=fake) == {"text": "x", "count": 7}
    assert seen == ["n.txt"]


def test_merge_order_stdin_then_args_then_tokens() -> None:
    result = parse(
        "count=3",
        "-",
        schema=SCHEMA,
        args_json='{"text": "from args", "count": 2, "flag": true}',
        stdin_text='{"text": "from stdin", "count": 1, "ratio": 0.5}',
    )
    assert result == {"text": "from args", "count": 3, "flag": True, "ratio": 0.5}


def test_later_tokens_win() -> None:
    assert parse("text=a", "text=b") == {"text": "b"}


@pytest.mark.parametrize(
    ("kwargs", "tokens", "message"),
    [
        ({"args_json": "[1]"}, (), "--args: expected a JSON object, got array"),
        (
            {"args_json": "{oops"},
            (),
            "--args: expected a JSON object, got invalid JSON '{oops' (line 1, column 2: "
            "Expecting property name enclosed in double quotes)",
        ),
        (
            {"stdin_text": ""},
            ("-",),
            "stdin ('-'): expected a JSON object, got invalid JSON '' (line 1, column 1: Expecting value)",
        ),
        ({}, ("-",), "'-' reads a JSON object from stdin, but there is no stdin"),
        ({"stdin_text": "{}"}, ("-", "-"), "'-' (a JSON object on stdin) given more than once"),
        ({}, ("text",), "argument 'text': expected k=v, k:=JSON, k=@FILE or '-'"),
        ({}, ("=x",), "argument '=x': the parameter name before '=' is empty"),
    ],
)
def test_source_errors(kwargs: dict[str, str], tokens: tuple[str, ...], message: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_call_arguments(tokens, None, **kwargs)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_missing_required_are_listed_with_types() -> None:
    schema = {"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
    with pytest.raises(UsageError, match=r"^missing required arguments: 'a' \(string\), 'b' \(integer\)$"):
        parse(schema=schema)
    with pytest.raises(UsageError, match=r"^missing required argument: 'b' \(integer\)$"):
        parse("a=x", schema=schema)
    assert parse("b=1", schema=schema, args_json='{"a": "x"}') == {"a": "x", "b": 1}


STRICT = {
    "type": "object",
    "properties": {"count": {"type": "integer"}, "content": {"type": "string"}, "path": {"type": "string"}},
    "additionalProperties": False,
}


def test_unknown_argument_suggests_close_names() -> None:
    with pytest.raises(UsageError) as info:
        parse("cuont=1", schema=STRICT)
    assert info.value.message == "unknown argument 'cuont' — did you mean 'count' or 'content'?"
    assert info.value.reason == "unknown_argument"
    assert info.value.hint == (
        "the arguments are count (integer), content (string), path (string); --no-check sends arguments as given"
    )
    with pytest.raises(UsageError, match=r"^unknown argument 'zzz'$"):
        parse("zzz=1", schema=STRICT)
    with pytest.raises(UsageError, match=r"unknown argument 'pth' — did you mean 'path'\?"):
        parse(schema=STRICT, args_json='{"pth": "/"}')
    with pytest.raises(UsageError) as info:
        parse("x=1", schema={"type": "object", "properties": {}, "additionalProperties": False})
    assert info.value.hint == "it takes no arguments here; --no-check sends arguments as given"


@pytest.mark.parametrize("schema_extra", [{}, {"additionalProperties": False}])
def test_an_unlisted_argument_is_refused_unless_the_schema_allows_more(
    schema_extra: dict[str, object],
) -> None:
    schema = {"type": "object", "properties": {"message": {"type": "string"}}, **schema_extra}
    with pytest.raises(UsageError, match=r"^unknown argument 'mesage' — did you mean 'message'\?$"):
        parse("message=hi", "mesage=x", schema=schema)
    # --no-check sends what was given.
    unchecked = parse_call_arguments(["message=hi", "mesage=x"], schema, strict=False)
    assert unchecked == {"message": "hi", "mesage": "x"}


def test_a_schema_that_allows_more_keys_takes_unlisted_ones() -> None:
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True}
    assert parse("a=x", "b=2", schema=open_schema) == {"a": "x", "b": "2"}
    patterned = {"type": "object", "properties": {}, "patternProperties": {"^x-": {"type": "integer"}}}
    assert parse("x-count=2", schema=patterned) == {"x-count": 2}
    with pytest.raises(UsageError, match="unknown argument 'count'"):
        parse("count=2", schema=patterned)
    bad_pattern = {"type": "object", "properties": {}, "patternProperties": {"(": {}}}
    with pytest.raises(UsageError, match="unknown argument 'a'"):
        parse("a=1", schema=bad_pattern)


def test_no_check_sends_values_and_missing_arguments_as_given() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "mode": {"enum": ["a", "b"]}},
        "required": ["n", "mode"],
    }
    assert parse_call_arguments(["n=abc"], schema, strict=False) == {"n": "abc"}
    assert parse_call_arguments(["mode=c", "n=1"], schema, strict=False) == {"mode": "c", "n": 1}


def test_additional_properties_schema_coerces_extra_keys() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert parse("a=1", "b=2", schema=schema) == {"a": 1, "b": 2}


def test_nested_keys() -> None:
    assert parse("text=x", "opts.depth=2", "opts.name=n") == {"text": "x", "opts": {"depth": 2, "name": "n"}}
    # merges into an object from --args
    assert parse("opts.depth=5", args_json='{"text": "x", "opts": {"name": "n"}}') == {
        "text": "x",
        "opts": {"name": "n", "depth": 5},
    }
    # a parameter literally named with a dot wins over nesting
    dotted = {"properties": {"a.b": {"type": "integer"}, "a": {"type": "object", "properties": {}}}}
    assert parse("a.b=1", schema=dotted) == {"a.b": 1}
    # not an object parameter: the key is taken literally, and so refused as unknown
    with pytest.raises(UsageError, match=r"^unknown argument 'text\.x'"):
        parse("text=x", "text.x=1")
    with pytest.raises(UsageError, match="'opts' is already set to a non-object value"):
        parse("text=x", "opts.depth=1", args_json='{"opts": 3}')


def test_nested_unknown_key_in_strict_object() -> None:
    schema = {
        "properties": {
            "opts": {
                "type": "object",
                "properties": {"depth": {"type": "integer"}},
                "additionalProperties": False,
            }
        }
    }
    with pytest.raises(UsageError, match=r"unknown argument 'opts.dept' — did you mean 'depth'\?"):
        parse("opts.dept=1", schema=schema)
    with pytest.raises(UsageError, match=r"argument 'opts\.depth': expected integer"):
        parse("opts.depth=x", schema=schema)


def test_no_schema_keeps_strings() -> None:
    assert parse("a=1", "b=true", schema=None) == {"a": "1", "b": "true"}


def test_ref_cycles_and_remote_refs_do_not_hang() -> None:
    schema = {
        "properties": {
            "loop": {"$ref": "#/$defs/A"},
            "remote": {"$ref": "https://example.test/schema.json"},
            "dangling": {"$ref": "#/$defs/Nope"},
        },
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
    }
    assert parse("loop=1", "remote=2", "dangling=3", schema=schema) == {
        "loop": "1",
        "remote": "2",
        "dangling": "3",
    }


def test_union_order_prefers_specific_types() -> None:
    schema = {"properties": {"v": {"oneOf": [{"type": "string"}, {"type": "array"}, {"type": "boolean"}]}}}
    assert parse("v=true", schema=schema) == {"v": True}
    assert parse("v=[1]", schema=schema) == {"v": [1]}
    assert parse("v=1", schema=schema) == {"v": "1"}


# ------------------------------------------------------------------------------------ properties

KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,12}", fullmatch=True)
JSON_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def typed_parameter(draw: st.DrawFn) -> tuple[dict[str, object], object]:
    kind = draw(
        st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object", "enum", "ref"])
    )
    if kind == "string":
        return {"type": "string"}, draw(st.text())
    if kind == "integer":
        return {"type": "integer"}, draw(st.integers())
    if kind == "number":
        return {"type": "number"}, draw(st.floats(allow_nan=False, allow_infinity=False) | st.integers())
    if kind == "boolean":
        return {"type": "boolean"}, draw(st.booleans())
    if kind == "null":
        return {"type": "null"}, None
    if kind == "array":
        return {"type": "array"}, draw(st.lists(JSON_VALUES, max_size=4))
    if kind == "object":
        return {"type": "object"}, draw(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4))
    if kind == "enum":
        members = draw(
            st.lists(st.text(min_size=1), min_size=1, max_size=5, unique=True)
            | st.lists(st.integers(), min_size=1, max_size=5, unique=True)
        )
        return {"enum": members}, draw(st.sampled_from(members))
    return {"$ref": "#/$defs/Int"}, draw(st.integers())


def as_token(key: str, value: object) -> str:
    if isinstance(value, str):
        return f"{key}=@{value}" if value.startswith("@") else f"{key}={value}"
    return f"{key}={json.dumps(value)}"


@settings(max_examples=150)
@given(st.dictionaries(KEYS, typed_parameter(), min_size=1, max_size=6))
def test_round_trip_of_schema_typed_values(params: dict[str, tuple[dict[str, object], object]]) -> None:
    schema = {
        "type": "object",
        "properties": {key: spec for key, (spec, _) in params.items()},
        "required": list(params),
        "additionalProperties": False,
        "$defs": {"Int": {"type": "integer"}},
    }
    values = {key: value for key, (_, value) in params.items()}
    tokens = [as_token(key, value) for key, value in values.items()]
    parsed = parse_call_arguments(tokens, schema)
    assert parsed == values
    for key, value in values.items():
        assert type(parsed[key]) is type(value)


@given(st.dictionaries(KEYS, JSON_VALUES, max_size=6))
def test_forced_json_round_trips_anything(values: dict[str, object]) -> None:
    tokens = [f"{key}:={json.dumps(value)}" for key, value in values.items()]
    assert parse_call_arguments(tokens, None) == values


@given(st.dictionaries(KEYS, JSON_VALUES, max_size=6))
def test_args_json_round_trips(values: dict[str, object]) -> None:
    assert parse_call_arguments([], None, args_json=json.dumps(values)) == values


SCHEMA_NODES = schema_nodes(
    ["string", "integer", "number", "boolean", "null", "array", "object", "#/$defs/a", "#", "#/properties/x"],
    max_text=8,
    max_keys=5,
    max_leaves=25,
)


ASSIGNMENTS = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(["x", "a", "a.x", "x.a", "type", ""]),
        st.sampled_from(["=", ":=", "=@", "=@@", ":=@"]),
        st.text(max_size=8) | JSON_VALUES.map(json.dumps),
    ),
)


def fake_reader(path: str) -> str:
    if path.startswith("x"):
        raise FileNotFoundError(2, "No such file or directory")
    return path


@settings(max_examples=250)
@given(
    tokens=st.lists(
        ASSIGNMENTS
        | st.text(max_size=20)
        | st.sampled_from(["-", "x=1", "a.b=2", "x:=[", "a=@", "a=@x", "a:=@y1"]),
        max_size=6,
    ),
    schema=st.none()
    | st.dictionaries(
        st.sampled_from(["properties", "type", "required", "additionalProperties", "$defs", "anyOf"]),
        SCHEMA_NODES,
        max_size=5,
    ),
    args_json=st.none() | st.text(max_size=20) | JSON_VALUES.map(json.dumps),
    stdin_text=st.none() | st.text(max_size=20) | st.just("[" * 5000),
)
def test_parser_only_ever_raises_usage_error(
    tokens: list[str], schema: dict[str, object] | None, args_json: str | None, stdin_text: str | None
) -> None:
    try:
        result = parse_call_arguments(
            tokens, schema, args_json=args_json, stdin_text=stdin_text, read_file=fake_reader
        )
    except UsageError as exc:
        assert str(exc)
        assert "\n" not in str(exc)
    else:
        assert isinstance(result, dict)


@pytest.mark.parametrize(
    ("prop", "raw", "value"),
    [
        ({"const": 5}, "5", 5),
        ({"const": "on"}, "on", "on"),
        ({"enum": [1, 2.5]}, "1.0", 1),  # numbers compare as numbers, the schema's member is kept
        ({"enum": [True, "yes"]}, "true", True),
        ({"allOf": [{"description": "no type"}, {"type": "integer"}]}, "3", 3),
        ({"properties": {"a": {}}}, '{"a": 1}', {"a": 1}),  # inferred object
        ({"items": {"type": "integer"}}, "[1]", [1]),  # inferred array
        ({"prefixItems": [{"type": "integer"}]}, "[1]", [1]),
        ({"type": "file"}, "x", "x"),  # unknown type names constrain nothing
        ({"type": ["integer", "bogus"]}, "3", 3),
        ({"$ref": "#/$defs/list/1"}, "2", 2),  # JSON pointer into an array
        ({"$ref": "#/$defs/we~1ird~0name"}, "true", True),  # escaped pointer segments
        ({"$ref": "#/$defs/list/9"}, "2", "2"),  # out of range: no type information
        ({"$ref": "#anchor"}, "2", "2"),
        ({"$ref": "#"}, '{"v": 1}', {"v": 1}),  # the root schema is an object
    ],
)
def test_schema_shapes(prop: object, raw: str, value: object) -> None:
    schema = {
        "properties": {"v": prop},
        "$defs": {"list": [{"type": "string"}, {"type": "integer"}], "we/ird~name": {"type": "boolean"}},
    }
    assert parse(f"v={raw}", schema=schema) == {"v": value}


def test_deeply_nested_json_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="expected array"):
        parse("text=x", "tags=" + "[" * 100_000)
    with pytest.raises(UsageError, match="stdin"):
        parse("-", stdin_text="[" * 100_000)
