"""Editing a JSONC/JSON5 config file as text: the user's comments, key order and formatting stay.

A reserialisation would drop every comment and reorder or reformat what the user wrote, so edits
work on the text itself. ``parse_spans`` finds where each object member is (key, value, comma);
``set_value`` and ``delete_value`` splice new text in at those positions, indented like the members
around them, and touch nothing else: a comment outside the edited member is never moved or lost.
Values are written as JSON (valid JSONC and JSON5 too).

The span parser only locates; it does not judge. Whoever edits checks the result: ``edit.py``
parses the new text with the real parser and compares it with the expected document before
anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

_LINE_END = "\n\r\u2028\u2029"
_DELIMITERS = ",:{}[]/\"'"
MAX_DEPTH = 256


class EditError(ValueError):
    """The text cannot be edited in place (the message says why)."""


@dataclass
class Node:
    """A value's span; for an object also its members."""

    start: int
    end: int
    kind: str  # "object", "array" or "value"
    members: list[Member] = field(default_factory=list)


@dataclass
class Member:
    key: str
    start: int  # where the key starts
    value: Node
    comma: int | None = None  # the comma after the value, if any


class _Spans:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> EditError:
        line = self.text.count("\n", 0, self.pos) + 1
        return EditError(f"{what} at line {line}")

    def skip(self) -> None:
        """Whitespace and comments."""
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch.isspace() or ch == "\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                while self.pos < len(text) and text[self.pos] not in _LINE_END:
                    self.pos += 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def value(self, depth: int = 0) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail("nested too deeply")
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end")
        ch = self.text[self.pos]
        if ch == "{":
            return self.obj(depth)
        if ch == "[":
            return self.array(depth)
        start = self.pos
        if ch in "\"'":
            self.string()
        else:
            while self.pos < len(self.text) and not (
                self.text[self.pos].isspace() or self.text[self.pos] in ",}]/"
            ):
                self.pos += 1
            if self.pos == start:
                raise self.fail(f"unexpected {ch!r}")
        return Node(start, self.pos, "value")

    def string(self) -> str:
        """Skip one quoted string; its decoded text."""
        text = self.text
        start = self.pos
        quote = text[start]
        self.pos += 1
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == "\\":
                self.pos += 2
                continue
            self.pos += 1
            if ch == quote:
                return _decode(text[start : self.pos])
        raise self.fail("unterminated string")

    def key(self) -> str:
        if self.text[self.pos] in "\"'":
            return self.string()
        start = self.pos
        while self.pos < len(self.text) and not (
            self.text[self.pos].isspace() or self.text[self.pos] in _DELIMITERS
        ):
            self.pos += 1
        if self.pos == start:
            raise self.fail("expected a key")
        return self.text[start : self.pos]

    def obj(self, depth: int) -> Node:
        node = Node(self.pos, -1, "object")
        self.pos += 1
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise self.fail("unterminated object")
            if self.text[self.pos] == "}":
                self.pos += 1
                node.end = self.pos
                return node
            start = self.pos
            key = self.key()
            self.skip()
            if self.pos >= len(self.text) or self.text[self.pos] != ":":
                raise self.fail("expected ':'")
            self.pos += 1
            member = Member(key, start, self.value(depth + 1))
            node.members.append(member)
            self.skip()
            if self.pos < len(self.text) and self.text[self.pos] == ",":
                member.comma = self.pos
                self.pos += 1
            elif self.pos < len(self.text) and self.text[self.pos] != "}":
                raise self.fail("expected ',' or '}'")

    def array(self, depth: int) -> Node:
        node = Node(self.pos, -1, "array")
        self.pos += 1
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise self.fail("unterminated array")
            if self.text[self.pos] == "]":
                self.pos += 1
                node.end = self.pos
                return node
            self.value(depth + 1)
            self.skip()
            if self.pos < len(self.text) and self.text[self.pos] == ",":
                self.pos += 1
            elif self.pos < len(self.text) and self.text[self.pos] != "]":
                raise self.fail("expected ',' or ']'")


def _decode(literal: str) -> str:
    try:
        value = json.loads(literal)
    except ValueError:
        import json5  # single quotes, JSON5-only escapes

        value = json5.loads(literal)
    return str(value)


def parse_spans(text: str) -> Node | None:
    """The top-level object's spans; None for an empty document. EditError when it is no object."""
    spans = _Spans(text)
    spans.skip()
    if spans.pos >= len(text):
        return None
    if text[spans.pos] != "{":
        raise spans.fail("the top level is not an object")
    root = spans.obj(0)
    spans.skip()
    if spans.pos != len(text):
        raise spans.fail("text after the top-level object")
    return root


# ---- layout ---------------------------------------------------------------------------------------


def _line_start(text: str, pos: int) -> int:
    return max(text.rfind(ch, 0, pos) for ch in _LINE_END) + 1


def _line_end(text: str, pos: int) -> int:
    ends = [i for i in (text.find(ch, pos) for ch in _LINE_END) if i >= 0]
    return min(ends) if ends else len(text)


def _starts_line(text: str, pos: int) -> bool:
    return not text[_line_start(text, pos) : pos].strip()


def _indent_of(text: str, pos: int) -> str:
    start = _line_start(text, pos)
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def indent_unit(text: str, root: Node | None) -> str:
    """The file's indentation step: that of the first top-level member on its own line, else 2 spaces."""
    if root is not None:
        for member in root.members:
            if _starts_line(text, member.start):
                unit = _indent_of(text, member.start)[len(_indent_of(text, root.start)) :]
                if unit:
                    return unit
    return "  "


def _render(value: object, indent: str, unit: str, newline: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", newline + indent)


def _after_member(text: str, member: Member) -> int:
    """Where a new member goes after ``member``: past its comma and any comment on the same line,
    at the end of that line; right after it when something else follows on the line."""
    pos = member.comma + 1 if member.comma is not None else member.value.end
    spans = _Spans(text)
    spans.pos = pos
    while spans.pos < len(text):
        ch = text[spans.pos]
        if ch in _LINE_END:
            return spans.pos
        if ch in " \t":
            spans.pos += 1
        elif text.startswith("//", spans.pos):
            return _line_end(text, spans.pos)
        elif text.startswith("/*", spans.pos):
            end = text.find("*/", spans.pos)
            if end < 0 or any(c in text[spans.pos : end] for c in _LINE_END):
                return pos
            spans.pos = end + 2
        else:
            return pos
    return spans.pos


# ---- edits ----------------------------------------------------------------------------------------


def _last(node: Node, key: str) -> Member | None:
    """The member a parser uses for ``key`` (the last one when a key repeats)."""
    found = [m for m in node.members if m.key == key]
    return found[-1] if found else None


def set_value(text: str, keys: Sequence[str], value: object) -> str:
    """``text`` with ``document[keys[0]]...[keys[-1]] = value``; missing objects on the way are created."""
    root = parse_spans(text)
    if root is None:  # empty, or only comments: they stay above the new object
        newline = _newline(text) if text else "\n"
        nested: object = value
        for key in reversed(keys):
            nested = {key: nested}
        head = text if not text.strip() or text.endswith(tuple(_LINE_END)) else text + newline
        return (head if text.strip() else "") + _render(nested, "", "  ", newline) + newline
    node = root
    for i, key in enumerate(keys[:-1]):
        member = _last(node, key)
        if member is None:
            nested = value
            for inner in reversed(keys[i + 1 :]):
                nested = {inner: nested}
            return _insert(text, root, node, key, nested)
        if member.value.kind != "object":
            raise EditError(f'"{".".join(keys[: i + 1])}" is not an object')
        node = member.value
    member = _last(node, keys[-1])
    if member is None:
        return _insert(text, root, node, keys[-1], value)
    indent = _indent_of(text, member.start)
    rendered = _render(value, indent, indent_unit(text, root), _newline(text))
    return text[: member.value.start] + rendered + text[member.value.end :]


def _insert(text: str, root: Node, node: Node, key: str, value: object) -> str:
    unit = indent_unit(text, root)
    newline = _newline(text)
    key_text = json.dumps(key, ensure_ascii=False)
    if not node.members:
        outer = _indent_of(text, node.start)
        inner = outer + unit
        member = f"{key_text}: {_render(value, inner, unit, newline)}"
        body = text[node.start + 1 : node.end - 1]
        if not body.strip():
            return text[: node.start + 1] + newline + inner + member + newline + outer + text[node.end - 1 :]
        return text[: node.start + 1] + newline + inner + member + text[node.start + 1 :]
    last = node.members[-1]
    trailing = "," if last.comma is not None else ""
    comma = "" if last.comma is not None else ","
    if _starts_line(text, last.start):
        indent = _indent_of(text, last.start)
        at = _after_member(text, last)
        member = f"{key_text}: {_render(value, indent, unit, newline)}{trailing}"
        return (
            text[: last.value.end] + comma + text[last.value.end : at] + newline + indent + member + text[at:]
        )
    at = last.comma + 1 if last.comma is not None else last.value.end
    member = f" {key_text}: {json.dumps(value, ensure_ascii=False)}{trailing}"
    return text[: last.value.end] + comma + text[last.value.end : at] + member + text[at:]


def delete_value(text: str, keys: Sequence[str]) -> str:
    """``text`` without ``document[keys[0]]...[keys[-1]]`` (every repetition of the key); the same
    text when it is not there."""
    for _ in range(1000):
        root = parse_spans(text)
        node: Node | None = root
        for key in keys[:-1]:
            member = _last(node, key) if node is not None else None
            node = member.value if member is not None and member.value.kind == "object" else None
        target = _last(node, keys[-1]) if node is not None else None
        if node is None or target is None:
            return text
        text = _remove(text, node, target)
    raise EditError(f'"{keys[-1]}" repeats too often')


def _remove(text: str, node: Node, member: Member) -> str:
    index = node.members.index(member)
    start = member.start
    end = member.comma + 1 if member.comma is not None else member.value.end
    previous = node.members[index - 1] if index > 0 else None
    if member.comma is None and previous is not None and previous.comma is not None:
        # It was the last member: the one before becomes last and gives up its comma.
        if not _starts_line(text, start):  # on one line: ', "b": 2' goes as one piece
            return _collapse_if_empty(text[: previous.comma] + text[end:], node.start)
        text = text[: previous.comma] + text[previous.comma + 1 :]
        start, end = start - 1, end - 1
    line_start, line_end = _line_start(text, start), _line_end(text, end)
    if not text[line_start:start].strip() and not text[end:line_end].strip():
        # The member had the line to itself: the line goes.
        start = line_start
        end = line_end + (2 if text.startswith("\r\n", line_end) else 1 if line_end < len(text) else 0)
    else:
        while end < line_end and text[end] in " \t":  # what follows moves to where the member began
            end += 1
    return _collapse_if_empty(text[:start] + text[end:], node.start)


def _collapse_if_empty(text: str, start: int) -> str:
    """``{`` followed by only whitespace up to its ``}`` becomes ``{}``."""
    close = start + 1
    while close < len(text) and text[close].isspace():
        close += 1
    if close < len(text) and text[close] == "}" and close > start + 1:
        return text[: start + 1] + text[close:]
    return text
