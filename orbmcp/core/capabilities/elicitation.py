"""Elicitation as plain data: the form a server asks for, the answer a person gives, validation.

Form mode (protocol 2025-11-25) restricts ``requestedSchema`` to one flat object whose properties
are primitives: strings (``format`` email, uri, date, date-time; min/max length), numbers and
integers (minimum/maximum), booleans, and single- or multi-select enums in every spelling the
spec allows (``enum``; ``oneOf``/``anyOf`` of ``const`` + ``title``; legacy ``enumNames``).
``parse_form`` turns such a schema into ``FormField`` values; anything outside the subset raises
``UnsupportedForm`` (orbmcp declines rather than guess). ``parse_text`` reads what a person typed
for one field, ``check_value`` validates a typed value, and ``check_content`` validates a whole
answer (a host's UI answers with values, not text): every front goes through the same checks.

Everything here is bounded: a server controls the schema, so field counts, choice counts and
string lengths are capped before anything is shown. Standard library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]
Action = Literal["accept", "decline", "cancel"]
FORMATS = ("email", "uri", "date", "date-time")

MAX_FIELDS = 50
MAX_CHOICES = 200
MAX_TITLE = 200
MAX_DESCRIPTION = 2000
MAX_MESSAGE = 8000
MAX_STRING_ANSWER = 100_000

_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})")
_TRUE = frozenset({"y", "yes", "true", "t", "1", "on"})
_FALSE = frozenset({"n", "no", "false", "f", "0", "off"})


class UnsupportedForm(ValueError):
    """A requested schema outside the form-mode subset; the message says what."""


class InvalidValue(ValueError):
    """A value a field does not accept; the message is for the person who typed it."""


@dataclass(frozen=True)
class Choice:
    value: str
    title: str  # the value itself when the schema gives no title


@dataclass(frozen=True)
class FormField:
    """One property of a form. Strings are the server's, raw: fronts escape them."""

    name: str
    kind: FieldKind
    title: str
    description: str | None = None
    required: bool = False
    default: Any = None  # already checked against the field; None when absent or unusable
    format: str | None = None  # string fields: email, uri, date, date-time
    minimum: float | None = None  # number/integer fields
    maximum: float | None = None
    min_length: int | None = None  # string fields
    max_length: int | None = None
    min_items: int | None = None  # multi-select fields
    max_items: int | None = None
    choices: tuple[Choice, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "title": self.title}
        for key, value in (
            ("description", self.description),
            ("required", self.required or None),
            ("default", self.default),
            ("format", self.format),
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("minItems", self.min_items),
            ("maxItems", self.max_items),
        ):
            if value is not None:
                out[key] = value
        if self.choices:
            out["choices"] = [{"value": c.value, "title": c.title} for c in self.choices]
        return out


@dataclass(frozen=True)
class ElicitationRequest:
    """What a server asks a person, for a front to show: a form, or a URL to open.

    ``errors`` is set when a front is asked again because its previous answer was invalid.
    ``retry`` (URL mode): the server refused a call until the URL is done (-32042), and the call
    is sent again after an ``accept``: a front answers accept only once the person says they
    finished in the browser.
    """

    server: str
    mode: Literal["form", "url"]
    message: str
    fields: tuple[FormField, ...] = ()
    url: str | None = None
    elicitation_id: str | None = None
    errors: tuple[str, ...] = ()
    retry: bool = False
    # The form's ``requestedSchema`` as the server sent it, for a front that forwards the question
    # to another MCP client (``orbmcp serve``) rather than showing ``fields``.
    schema: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.server, "mode": self.mode, "message": self.message}
        if self.mode == "form":
            out["fields"] = [f.to_json() for f in self.fields]
        else:
            out["url"] = self.url
            out["elicitationId"] = self.elicitation_id
            out["retry"] = self.retry
        if self.errors:
            out["errors"] = list(self.errors)
        return out


@dataclass(frozen=True)
class ElicitationAnswer:
    """A front's answer: accept (with ``content`` in form mode), decline or cancel.

    ``reason`` says why orbmcp answered without the person (not interactive, an unsupported form),
    for the notes a command shows.
    """

    action: Action
    content: Mapping[str, Any] | None = None
    reason: str | None = None


def _text(value: object, limit: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value[:limit]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _choices(schema: Mapping[str, Any], name: str) -> tuple[Choice, ...] | None:
    """The options of an enum in any of its spellings; None when ``schema`` is no enum."""
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list):
            out: list[Choice] = []
            for option in options[:MAX_CHOICES]:
                if not isinstance(option, Mapping) or not isinstance(option.get("const"), str):
                    raise UnsupportedForm(f"field '{name}': {key} options need a string 'const'")
                value = option["const"]
                out.append(Choice(value, _text(option.get("title"), MAX_TITLE) or value))
            return tuple(out)
    values = schema.get("enum")
    if not isinstance(values, list):
        return None
    if not all(isinstance(v, str) for v in values):
        raise UnsupportedForm(f"field '{name}': enum values must be strings")
    names = schema.get("enumNames")
    titles = names if isinstance(names, list) and len(names) == len(values) else values
    return tuple(
        Choice(v, _text(t, MAX_TITLE) or v) for v, t in zip(values[:MAX_CHOICES], titles, strict=False)
    )


def _field(name: str, schema: Mapping[str, Any], required: bool) -> FormField:
    kind_name = schema.get("type")
    title = _text(schema.get("title"), MAX_TITLE) or name
    common: dict[str, Any] = {
        "name": name,
        "title": title,
        "description": _text(schema.get("description"), MAX_DESCRIPTION),
        "required": required,
    }
    if kind_name == "array":
        items = schema.get("items")
        choices = _choices(items, name) if isinstance(items, Mapping) else None
        if not choices:
            raise UnsupportedForm(f"field '{name}': an array must list its options (items.enum/anyOf)")
        built = FormField(
            kind="choices",
            choices=choices,
            min_items=_count(schema.get("minItems")),
            max_items=_count(schema.get("maxItems")),
            **common,
        )
    elif kind_name in ("string", None) and (choices := _choices(schema, name)) is not None:
        if not choices:
            raise UnsupportedForm(f"field '{name}': an enum with no options")
        built = FormField(kind="choice", choices=choices, **common)
    elif kind_name == "string":
        fmt = schema.get("format")
        built = FormField(
            kind="string",
            format=fmt if fmt in FORMATS else None,
            min_length=_count(schema.get("minLength")),
            max_length=_count(schema.get("maxLength")),
            **common,
        )
    elif kind_name in ("number", "integer"):
        built = FormField(
            kind=kind_name,
            minimum=_number(schema.get("minimum")),
            maximum=_number(schema.get("maximum")),
            **common,
        )
    elif kind_name == "boolean":
        built = FormField(kind="boolean", **common)
    else:
        shown = kind_name if isinstance(kind_name, str) else type(kind_name).__name__
        raise UnsupportedForm(f"field '{name}': type {shown[:40]!r} is not a form field")
    default = schema.get("default")
    if default is not None:
        try:
            check_value(built, default)
        except InvalidValue:
            default = None  # a default the field itself rejects is not offered
    return replace(built, default=_plain(default))


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, list | tuple) else value


def parse_form(schema: object) -> tuple[FormField, ...]:
    """The fields of a form-mode ``requestedSchema``, in the server's order."""
    if not isinstance(schema, Mapping):
        raise UnsupportedForm("the requested schema is not an object")
    if schema.get("type", "object") != "object":
        raise UnsupportedForm("the requested schema must be of type object")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise UnsupportedForm("'properties' is not an object")
    if len(properties) > MAX_FIELDS:
        raise UnsupportedForm(f"the form has {len(properties)} fields (at most {MAX_FIELDS} are shown)")
    required_raw = schema.get("required", [])
    required = {r for r in required_raw if isinstance(r, str)} if isinstance(required_raw, list) else set()
    fields: list[FormField] = []
    for name, prop in properties.items():
        if not isinstance(name, str) or not isinstance(prop, Mapping):
            raise UnsupportedForm("every property must be an object under a string name")
        fields.append(_field(name, prop, name in required))
    return tuple(fields)


# -- values -----------------------------------------------------------------------------------------


def _check_string(f: FormField, value: str) -> None:
    if len(value) > MAX_STRING_ANSWER:
        raise InvalidValue(f"at most {MAX_STRING_ANSWER} characters")
    if f.min_length is not None and len(value) < f.min_length:
        raise InvalidValue(f"at least {f.min_length} characters")
    if f.max_length is not None and len(value) > f.max_length:
        raise InvalidValue(f"at most {f.max_length} characters")
    fmt = f.format
    if fmt == "email" and not _EMAIL_RE.fullmatch(value):
        raise InvalidValue("not an email address (name@example.com)")
    if fmt == "uri":
        try:
            parts = urlsplit(value)
        except ValueError:
            parts = None
        if parts is None or not parts.scheme or not (parts.netloc or parts.path) or " " in value:
            raise InvalidValue("not a URI (https://example.com/...)")
    if fmt == "date" and not _parses(_DATE_RE, date.fromisoformat, value):
        raise InvalidValue("not a date (YYYY-MM-DD)")
    if fmt == "date-time" and not _parses(_DATE_TIME_RE, _date_time, value):
        raise InvalidValue("not a date-time (YYYY-MM-DDTHH:MM:SSZ, with a time zone)")


def _date_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))


def _parses(shape: re.Pattern[str], parse: Callable[[str], object], value: str) -> bool:
    if not shape.fullmatch(value):
        return False
    try:
        parse(value)
    except ValueError:
        return False
    return True


def _check_number(f: FormField, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidValue("not a number")
    if f.kind == "integer" and not float(value).is_integer():
        raise InvalidValue("not a whole number")
    if f.minimum is not None and value < f.minimum:
        raise InvalidValue(f"at least {f.minimum:g}")
    if f.maximum is not None and value > f.maximum:
        raise InvalidValue(f"at most {f.maximum:g}")


def check_value(f: FormField, value: object) -> None:
    """Raise ``InvalidValue`` unless ``value`` is acceptable for ``f``."""
    if f.kind == "string":
        if not isinstance(value, str):
            raise InvalidValue("not text")
        _check_string(f, value)
    elif f.kind in ("number", "integer"):
        _check_number(f, value)
    elif f.kind == "boolean":
        if not isinstance(value, bool):
            raise InvalidValue("not true or false")
    elif f.kind == "choice":
        if value not in {c.value for c in f.choices}:
            raise InvalidValue("not one of the options")
    else:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise InvalidValue("not a list of options")
        allowed = {c.value for c in f.choices}
        if any(v not in allowed for v in value):
            raise InvalidValue("not one of the options")
        if len(set(value)) != len(value):
            raise InvalidValue("an option is picked twice")
        if f.min_items is not None and len(value) < f.min_items:
            raise InvalidValue(f"pick at least {f.min_items}")
        if f.max_items is not None and len(value) > f.max_items:
            raise InvalidValue(f"pick at most {f.max_items}")


def _pick(f: FormField, token: str) -> str:
    """One option by its number (1-based), value or title (case-insensitive)."""
    token = token.strip()
    if token.isdigit() and 1 <= int(token) <= len(f.choices):
        return f.choices[int(token) - 1].value
    for choice in f.choices:
        if token == choice.value:
            return choice.value
    folded = token.casefold()
    matches = [c.value for c in f.choices if folded in (c.value.casefold(), c.title.casefold())]
    if len(matches) == 1:
        return matches[0]
    raise InvalidValue(f"{token[:40]!r} is not one of the options (type its number)")


def parse_text(f: FormField, text: str) -> Any:
    """The value a person means by ``text`` (not blank) for ``f``; raises ``InvalidValue``."""
    raw = text.strip()
    value: Any
    if f.kind == "string":
        value = text.rstrip("\r\n")
    elif f.kind == "boolean":
        if raw.lower() in _TRUE:
            value = True
        elif raw.lower() in _FALSE:
            value = False
        else:
            raise InvalidValue("answer y or n")
    elif f.kind == "integer":
        try:
            value = int(raw)
        except ValueError:
            raise InvalidValue("not a whole number") from None
    elif f.kind == "number":
        try:
            value = float(raw)
        except ValueError:
            raise InvalidValue("not a number") from None
        if value.is_integer() and "." not in raw and "e" not in raw.lower():
            value = int(value)
    elif f.kind == "choice":
        value = _pick(f, raw)
    else:
        value = [_pick(f, part) for part in raw.split(",") if part.strip()]
    check_value(f, value)
    return value


def check_content(fields: Sequence[FormField], content: object) -> tuple[dict[str, Any], list[str]]:
    """An answer's content checked field by field: (the values to send, what is wrong).

    Keys the form did not ask for are dropped; a missing required field and every invalid value
    is one message in the list.
    """
    if content is None:
        content = {}
    if not isinstance(content, Mapping):
        return {}, ["the answer is not an object of field values"]
    values: dict[str, Any] = {}
    errors: list[str] = []
    for f in fields:
        if f.name not in content or content[f.name] is None:
            if f.required:
                errors.append(f"{f.name}: required")
            continue
        value = content[f.name]
        if f.kind == "number" and isinstance(value, int) and not isinstance(value, bool):
            value = int(value)
        try:
            check_value(f, value)
        except InvalidValue as exc:
            errors.append(f"{f.name}: {exc}")
            continue
        values[f.name] = _plain(value)
    return values, errors


def defaults(fields: Sequence[FormField]) -> dict[str, Any]:
    """The defaults the schema declares, by field name (what SEP-1034 clients pre-fill)."""
    return {f.name: f.default for f in fields if f.default is not None}


@dataclass(frozen=True)
class UrlElicitation:
    """One URL a server needs the person to visit (an ``elicitation/create`` in URL mode, or an
    entry of a -32042 error)."""

    message: str
    url: str
    elicitation_id: str | None = None


def url_elicitations(data: object) -> list[UrlElicitation]:
    """The URL elicitations in the ``data`` of a -32042 "URL elicitation required" error."""
    if not isinstance(data, Mapping) or not isinstance(data.get("elicitations"), list):
        return []
    out: list[UrlElicitation] = []
    for item in data["elicitations"][:10]:
        if not isinstance(item, Mapping) or not isinstance(item.get("url"), str):
            continue
        message = item.get("message")
        ident = item.get("elicitationId")
        out.append(
            UrlElicitation(
                message[:MAX_MESSAGE] if isinstance(message, str) else "",
                item["url"][:4000],
                ident[:200] if isinstance(ident, str) else None,
            )
        )
    return out


__all__ = [
    "Choice",
    "ElicitationAnswer",
    "ElicitationRequest",
    "FormField",
    "InvalidValue",
    "UnsupportedForm",
    "UrlElicitation",
    "check_content",
    "check_value",
    "defaults",
    "parse_form",
    "parse_text",
    "url_elicitations",
]
