"""The in-place JSONC editor: edits change the text, not a reserialisation.

Examples pin the layouts people write (comments everywhere, trailing commas, one-line objects,
tabs, CRLF, JSON5 keys); a Hypothesis property runs random edit sequences over random documents
and checks that the text always parses to exactly the expected document, that every comment
outside an edited entry survives, and that the result loads as ``config show`` would load it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orbmcp.config import edit
from orbmcp.config.jsonc import parse_jsonc
from orbmcp.config.jsonc_edit import EditError, delete_value, parse_spans, set_value
from orbmcp.config.loader import load_config

DOCUMENT = """{
  // my servers
  "settings": {"toolPrefix": "mcp"},
  "mcpServers": {
    "a": { "command": "x" }, // the a server
    /* b is nice */
    "b": {
      "command": "y", // inside b
      "args": ["1"],
    },
  },
}
"""


def test_adding_keeps_every_comment_and_the_trailing_comma_style() -> None:
    text = set_value(DOCUMENT, ["mcpServers", "c"], {"url": "https://h.example/mcp"})
    assert text == DOCUMENT.replace(
        "    },\n  },\n}",
        '    },\n    "c": {\n      "url": "https://h.example/mcp"\n    },\n  },\n}',
    )
    assert parse_jsonc(text)["mcpServers"]["c"] == {"url": "https://h.example/mcp"}  # type: ignore[index]


def test_switching_inside_a_one_line_entry_keeps_its_line() -> None:
    text = set_value(DOCUMENT, ["mcpServers", "a", "enabled"], False)
    assert '    "a": { "command": "x", "enabled": false }, // the a server\n' in text
    again = set_value(text, ["mcpServers", "a", "enabled"], True)
    assert '"enabled": true }, // the a server' in again


def test_removing_keeps_the_comments_around_it() -> None:
    text = delete_value(DOCUMENT, ["mcpServers", "b"])
    assert "/* b is nice */" in text and "// the a server" in text and "inside b" not in text
    assert parse_jsonc(text)["mcpServers"] == {"a": {"command": "x"}}
    text = delete_value(text, ["mcpServers", "a"])
    assert "    // the a server\n" in text  # the comment stays, where the entry began
    assert parse_jsonc(text)["mcpServers"] == {}


@pytest.mark.parametrize(
    ("before", "key", "after"),
    [
        ('{"a": 1, "b": 2}', "b", '{"a": 1}'),
        ('{"a": 1, "b": 2}', "a", '{"b": 2}'),
        ('{\n  "a": 1,\n  "b": 2\n}', "b", '{\n  "a": 1\n}'),
        ('{\n  "a": 1,\n  "b": 2,\n}', "b", '{\n  "a": 1,\n}'),
        ('{\n  "a": 1, // x\n  "b": 2 // y\n}', "a", '{\n  // x\n  "b": 2 // y\n}'),
        ('{\n  "a": 1\n}\n', "a", "{}\n"),
        ('{"a": 1, "a": 2, "b": 3}', "a", '{"b": 3}'),  # every repetition
        ('{"a": 1}', "zz", '{"a": 1}'),
    ],
)
def test_removal_layouts(before: str, key: str, after: str) -> None:
    assert delete_value(before, [key]) == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", '{\n  "s": {\n    "x": 1\n  }\n}\n'),
        ("// nothing yet\n", '// nothing yet\n{\n  "s": {\n    "x": 1\n  }\n}\n'),
        ("{}", '{\n  "s": {\n    "x": 1\n  }\n}'),
        ("{ /* empty */ }", '{\n  "s": {\n    "x": 1\n  } /* empty */ }'),
        ('{"s": {}}', '{"s": {\n  "x": 1\n}}'),
        ('{"s": {"y": 2}}', '{"s": {"y": 2, "x": 1}}'),
        ('{\n\t"s": {\n\t\t"y": 2\n\t}\n}', '{\n\t"s": {\n\t\t"y": 2,\n\t\t"x": 1\n\t}\n}'),
        ('{\r\n    "o": 1\r\n}\r\n', '{\r\n    "o": 1,\r\n    "s": {\r\n        "x": 1\r\n    }\r\n}\r\n'),
        (
            '{\n  "s": {\n    "y": 2 /* two\n lines */\n  }\n}',
            '{\n  "s": {\n    "y": 2,\n    "x": 1 /* two\n lines */\n  }\n}',
        ),
    ],
)
def test_insertion_layouts(before: str, after: str) -> None:
    assert set_value(before, ["s", "x"], 1) == after
    assert parse_jsonc(after)["s"]["x"] == 1  # type: ignore[index]


def test_json5_keys_and_strings_are_found() -> None:
    text = "{mcpServers: {'a': {command: 'x', args: ['//not a comment', \"/* nor this */\"]}}}"
    root = parse_spans(text)
    assert root is not None and [m.key for m in root.members] == ["mcpServers"]
    changed = set_value(text, ["mcpServers", "a", "enabled"], False)
    assert parse_jsonc(changed)["mcpServers"]["a"]["enabled"] is False  # type: ignore[index]
    assert "'//not a comment'" in changed


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[1, 2]", "not an object"),
        ('{"a": "open', "unterminated string"),
        ('{"a": 1 /* open', "unterminated comment"),
        ('{"a" 1}', "expected ':'"),
        ('{"a": 1 "b": 2}', "expected ',' or '}'"),
        ('{"a": [1 2]}', "expected ',' or ']'"),
        ('{"a": 1} x', "text after"),
        ('{"a": }', "unexpected"),
        ("{: 1}", "expected a key"),
        ('{"a": [', "unterminated array"),
        ('{"a": ', "unexpected end"),
        ('{"a": 1', "unterminated object"),
        ('{"a": ' + "[" * 300 + "]" * 300 + "}", "nested too deeply"),
    ],
)
def test_what_cannot_be_located_is_an_error(text: str, why: str) -> None:
    with pytest.raises(EditError, match=why):
        set_value(text, ["a"], 1)


def test_setting_through_a_value_that_is_no_object_is_an_error() -> None:
    with pytest.raises(EditError, match='"s" is not an object'):
        set_value('{"s": [1]}', ["s", "x"], 1)


# ---- the property ---------------------------------------------------------------------------------

NAMES = st.sampled_from(["alpha", "beta", "gamma", "delta", "e-psilon", "zeta"])


@dataclass
class Doc:
    """A config document and where its comments are: marker -> the server it sits in (or None)."""

    servers: dict[str, dict[str, object]]
    comments: dict[str, str | None] = field(default_factory=dict)
    text: str = ""


@st.composite
def documents(draw: st.DrawFn) -> Doc:
    indent = draw(st.sampled_from(["  ", "    ", "\t"]))
    trailing = draw(st.booleans())
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    names = draw(st.lists(NAMES, unique=True, max_size=5))
    doc = Doc({})
    counter = iter(range(10_000))

    def comment(owner: str | None, block: bool) -> str:
        marker = f"<c{next(counter)}>"
        doc.comments[marker] = owner
        return f"/* {marker} */" if block else f"// {marker}"

    lines = ["{", f"{indent}{comment(None, False)}", f'{indent}"mcpServers": {{']
    for i, name in enumerate(names):
        entry: dict[str, object] = {"command": f"run-{name}"}
        if draw(st.booleans()):
            entry["args"] = draw(st.lists(st.sampled_from(["-v", "--x", "a b", 'q"uote']), max_size=3))
        if draw(st.booleans()):
            entry["enabled"] = draw(st.booleans())
        doc.servers[name] = entry
        if draw(st.booleans()):
            lines.append(f"{indent * 2}{comment(None, draw(st.booleans()))}")
        last = i == len(names) - 1
        comma = "," if trailing or not last else ""
        body = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in entry.items())
        if draw(st.booleans()):  # one line, maybe with a comment after it
            after = f" {comment(None, False)}" if draw(st.booleans()) else ""
            lines.append(f"{indent * 2}{json.dumps(name)}: {{ {body} }}{comma}{after}")
        else:
            lines.append(f"{indent * 2}{json.dumps(name)}: {{ {comment(name, True)}")
            items = list(entry.items())
            for j, (k, v) in enumerate(items):
                item_comma = "," if j < len(items) - 1 or trailing else ""
                lines.append(f"{indent * 3}{json.dumps(k)}: {json.dumps(v)}{item_comma}")
            lines.append(f"{indent * 2}}}{comma}")
    lines += [f"{indent}}}" + ("," if trailing else ""), "}", ""]
    doc.text = newline.join(lines)
    return doc


OPS = st.lists(st.tuples(st.sampled_from(["add", "remove", "enable", "disable"]), NAMES), max_size=6)


def _apply(doc: Doc, ops: list[tuple[str, str]]) -> tuple[str, dict[str, dict[str, object]], set[str]]:
    text = doc.text
    model = {name: dict(entry) for name, entry in doc.servers.items()}
    removed: set[str] = set()  # entries a remove took away (with whatever comment was inside them)
    for kind, name in ops:
        document = parse_jsonc(text)
        if kind == "add":
            if name in model:
                continue
            plan = edit.add_ops(document, name, {"command": f"new-{name}"}, overwrite=False, file=Path("x"))
            model[name] = {"command": f"new-{name}"}
        elif kind == "remove":
            plan = edit.remove_ops(document, name)
            if model.pop(name, None) is not None:
                removed.add(name)
        else:
            plan = edit.switch_ops(document, name, kind == "enable")
            if name not in model:
                model[name] = {"enabled": kind == "enable"}
            elif edit.is_on(model[name]) != (kind == "enable"):
                model[name]["enabled"] = kind == "enable"
        text = edit._apply_text(text, plan)
        assert parse_jsonc(text) == edit._apply_document(document, plan)
    return text, model, removed


@settings(max_examples=150, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), ops=OPS)
def test_any_edit_sequence_keeps_the_file_and_its_comments(doc: Doc, ops: list[tuple[str, str]]) -> None:
    assert parse_jsonc(doc.text)["mcpServers"] == doc.servers
    text, model, removed = _apply(doc, ops)
    servers = parse_jsonc(text)["mcpServers"]
    assert isinstance(servers, dict)
    assert {n: edit.is_on(e) for n, e in servers.items()} == {n: edit.is_on(e) for n, e in model.items()}
    assert {n: e.get("command") for n, e in servers.items()} == {
        n: e.get("command") for n, e in model.items()
    }
    for marker, owner in doc.comments.items():
        if owner not in removed:  # outside every removed entry (enable/disable keep inner ones too)
            assert text.count(marker) == 1, (marker, text)


@settings(
    max_examples=40,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(doc=documents(), ops=OPS)
def test_edited_files_round_trip_through_config_show(
    tmp_path: Path, doc: Doc, ops: list[tuple[str, str]]
) -> None:
    text, model, _ = _apply(doc, ops)
    path = tmp_path / "mcp.json"
    path.write_text(text, encoding="utf-8")
    loaded = load_config(config_file=path, project=tmp_path)
    full = {n: e for n, e in model.items() if "command" in e}
    assert set(loaded.servers) == set(full)
    assert {n: s.enabled for n, s in loaded.servers.items()} == {n: edit.is_on(e) for n, e in full.items()}
