"""JSONC/JSON5 files: comments and trailing commas, precise syntax errors, unreadable files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orbmcp.config.jsonc import _parse_json5, parse_jsonc, read_jsonc
from orbmcp.errors import ConfigError


def test_comments_trailing_commas_and_json5_forms() -> None:
    text = """
    // line comment
    {
      /* block
         comment */
      "a": [1, 2,], // trailing comma in an array
      b: 'single',  // unquoted key, single quotes
      "c": {"d": 0x10,},
    }
    """
    assert parse_jsonc(text, file="f") == {"a": [1, 2], "b": "single", "c": {"d": 16}}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "a": 1,\n  "b": }', "f.json:3:8:"),
        ("{", "f.json:1:2:"),
        ('{"a": 1} x', "f.json:1:10:"),
        ('{\n  "mcpServers": {\n    "x": {"command": "a" "args": []}\n  }\n}', "f.json:3:26:"),
    ],
)
def test_syntax_error_names_file_line_and_column(text: str, where: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_jsonc(text, file="f.json")
    assert str(caught.value).startswith(where), str(caught.value)
    assert caught.value.file == "f.json"
    assert caught.value.code == "config"


@pytest.mark.parametrize(("text", "kind"), [("[]", "an array"), ('"s"', "a string"), ("null", "null")])
def test_top_level_must_be_an_object(text: str, kind: str) -> None:
    with pytest.raises(ConfigError, match=f"top level must be a JSON object, not {kind}") as caught:
        parse_jsonc(text, file="f.json")
    assert caught.value.reason == "not_an_object"


def test_empty_file_is_an_empty_config(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("  \n")
    assert read_jsonc(path) == {}


def test_missing_file_is_absent(tmp_path: Path) -> None:
    assert read_jsonc(tmp_path / "nope.json") is None
    assert read_jsonc(tmp_path / "no-dir" / "nope.json") is None
    (tmp_path / "file").write_text("x")
    assert read_jsonc(tmp_path / "file" / "mcp.json") is None  # a path component is a file


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_jsonc(path) == {"a": 1}


def test_directory_says_why(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory") as caught:
        read_jsonc(tmp_path)
    assert caught.value.reason == "not_a_file"


def test_invalid_utf8_says_where(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'{\n "a": "\xff"}')
    with pytest.raises(ConfigError) as caught:
        read_jsonc(path)
    assert str(caught.value).startswith(f"{path}:2:")
    assert "UTF-8" in str(caught.value)
    assert caught.value.reason == "not_utf8"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_permission_denied_says_why(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{}")
    path.chmod(0)
    try:
        with pytest.raises(ConfigError, match="permission denied"):
            read_jsonc(path)
    finally:
        path.chmod(0o600)


# ---- property: any JSON object, decorated with comments and trailing commas, parses back ----------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=15,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=5)
comments = st.sampled_from(["", "x", ' "quoted" ', "// nested", "{ [ , } ]", "ünïcødé ✓", "/ * not a block"])


def decorate(text: str, choices: list[tuple[bool, bool, bool, str]]) -> str:
    """Add a block comment before, a trailing comma after and a line comment at the end of lines.

    json.dumps(indent=1) never breaks a line inside a string, so line ends are outside strings.
    """
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        block, comma, line_comment, comment = choices[i % len(choices)]
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if comma and nxt[:1] in ("}", "]") and not body.endswith(("{", "[", ",")):
            body += ","
        if block:
            body = f"/* {comment.replace('*/', '')} */ {body}"
        if line_comment:
            body += f" // {comment}"
        out.append(indent + body)
    return "\n".join(out)


@given(
    json_objects,
    st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans(), comments), min_size=1, max_size=8),
)
def test_property_commented_json_parses_back_equal(
    value: dict[str, object], choices: list[tuple[bool, bool, bool, str]]
) -> None:
    text = decorate(json.dumps(value, indent=1), choices)
    assert parse_jsonc(text, file="p.json") == value
    assert _parse_json5(text, "p.json") == value  # the fast path and the json5 path agree


@given(json_objects)
def test_property_json5_only_syntax_takes_the_json5_path(value: dict[str, object]) -> None:
    text = "{unquoted_key: 'single', " + json.dumps(value, indent=1)[1:]
    assert parse_jsonc(text, file="p.json") == {"unquoted_key": "single", **value}


@given(json_objects)
def test_property_plain_json_parses_back_equal(value: dict[str, object]) -> None:
    assert parse_jsonc(json.dumps(value), file="p.json") == value


@pytest.mark.parametrize("newline", ["\r", "\u2028", "\r\n"])
def test_line_comments_end_at_every_json5_line_terminator(newline: str) -> None:
    text = f'{{"x": 0, // comment{newline}"a": 1{newline}}}'
    assert parse_jsonc(text, file="f") == {"x": 0, "a": 1}


def test_comment_markers_inside_strings_are_kept() -> None:
    text = r'{"url": "https://h.test/a//b", "glob": "/* no */", "q": "\\", "r": "\"//"//c' + "\n}"
    expected = {"url": "https://h.test/a//b", "glob": "/* no */", "q": "\\", "r": '"//'}
    assert parse_jsonc(text, file="f") == expected


def test_escaped_surrogate_pairs_become_one_character() -> None:
    # json5 alone yields two lone surrogates, which a subprocess argv or header cannot encode
    assert parse_jsonc(r'{"k\ud83d\ude00": ["\ud83d\ude00"]}', file="f") == {"k😀": ["😀"]}
