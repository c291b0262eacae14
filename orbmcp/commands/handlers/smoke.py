"""``check --call SERVER/TOOL k=v ...``: smoke calls and what their answers must hold.

A call is one string, split like a shell line: ``"everything/echo message=hi"``. What the answer
must hold can follow inside it (``--expect TEXT``, ``--expect-json PATH=VALUE``); with a single
``--call``, the ``--expect``/``--expect-json`` options of the command line apply to it.

``--expect TEXT`` passes when TEXT is in the tool's text (its transcript, structured content
included). ``--expect-json PATH=VALUE`` looks PATH up in the result's JSON (``content[0].text``,
``structuredContent.temperature``, an optional leading ``$.``) and compares it with VALUE as JSON,
or as text when VALUE is not JSON.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from orbmcp.commands.arguments import parse_call_arguments
from orbmcp.commands.handlers.tools import find_tool
from orbmcp.commands.results.call import transcript_text
from orbmcp.commands.results.check import SmokeCall
from orbmcp.core.tooling.calls import call_tool
from orbmcp.errors import OrbError, UsageError

if TYPE_CHECKING:
    from orbmcp.core.session.manager import Manager

_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")
OUTPUT_CHARS = 2000
_MISSING = object()


@dataclass(frozen=True)
class Expectation:
    kind: str  # "text" or "json"
    spec: str  # as given

    def describe(self) -> str:
        return f"--expect {self.spec}" if self.kind == "text" else f"--expect-json {self.spec}"


@dataclass(frozen=True)
class SmokeSpec:
    text: str  # the --call value as given
    server: str
    tool: str
    tokens: tuple[str, ...]  # k=v arguments
    expectations: tuple[Expectation, ...]


def parse_smoke_calls(calls: list[str], expect: list[str], expect_json: list[str]) -> list[SmokeSpec]:
    """Every ``--call``, with its expectations; usage errors for anything malformed."""
    loose = [Expectation("text", e) for e in expect] + [Expectation("json", e) for e in expect_json]
    if loose and len(calls) != 1:
        raise UsageError(
            "--expect/--expect-json apply to the one --call of the command line; with several calls, "
            "put them inside each call: --call 'server/tool k=v --expect TEXT'",
            reason="ambiguous_expectation",
        )
    specs = [_parse_one(text) for text in calls]
    if loose:
        first = specs[0]
        specs[0] = replace(first, expectations=first.expectations + tuple(loose))
    for spec in specs:
        for e in spec.expectations:
            if e.kind == "json" and "=" not in e.spec:
                raise UsageError(f"--expect-json {e.spec!r}: expected PATH=VALUE", reason="bad_expectation")
    return specs


def _parse_one(text: str) -> SmokeSpec:
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"--call {text!r}: {exc}", reason="bad_call") from None
    head = words[0] if words else ""
    server, _, tool = head.partition("/")
    if not server or not tool:
        raise UsageError(
            f"--call {text!r}: expected SERVER/TOOL followed by k=v arguments", reason="bad_call"
        )
    tokens: list[str] = []
    expectations: list[Expectation] = []
    rest = iter(words[1:])
    for word in rest:
        if word in ("--expect", "--expect-json"):
            value = next(rest, None)
            if value is None:
                raise UsageError(f"--call {text!r}: {word} needs a value", reason="bad_call")
            expectations.append(Expectation("text" if word == "--expect" else "json", value))
        else:
            tokens.append(word)
    parse_call_arguments(tokens, None)  # syntax only: the schema is checked once connected
    return SmokeSpec(text, server, tool, tuple(tokens), tuple(expectations))


def lookup(document: Any, path: str) -> Any:
    """``content[0].text`` in ``document``; ``_MISSING`` when there is no such element."""
    path = path.strip()
    path = path[1:] if path.startswith("$") else path
    node = document
    pos = 0
    while pos < len(path):
        match = _STEP.match(path, pos)
        if match is None:
            return _MISSING
        key, index = match.group(1), match.group(2)
        if key is not None and isinstance(node, dict) and key in node:
            node = node[key]
        elif index is not None and isinstance(node, list) and int(index) < len(node):
            node = node[int(index)]
        else:
            return _MISSING
        pos = match.end()
    return node


def _failed_expectation(e: Expectation, text: str, document: Any) -> str | None:
    if e.kind == "text":
        return None if e.spec in text else f"the output does not contain {e.spec!r}"
    path, _, raw = e.spec.partition("=")
    found = lookup(document, path)
    if found is _MISSING:
        return f"the result has no {path.strip()!r}"
    try:
        wanted: Any = json.loads(raw)
    except ValueError:
        wanted = raw
    if found == wanted or (isinstance(found, str) and found == raw):
        return None
    shown = json.dumps(found, ensure_ascii=False)[:200]
    return f"{path.strip()} is {shown}, expected {raw}"


async def run_smoke_call(manager: Manager, spec: SmokeSpec, timeout_s: float | None) -> SmokeCall:
    """Call the tool; a failure to connect, an error or an unmet expectation is a failed call."""
    expectations = tuple(e.describe() for e in spec.expectations)
    begin = time.monotonic()

    def failed(why: str, output: str = "") -> SmokeCall:
        return SmokeCall(
            spec.text, spec.server, spec.tool, False, why, output, expectations, time.monotonic() - begin
        )

    try:
        sup = await manager.ready(spec.server)
        tool = find_tool(manager, spec.server, spec.tool)
        values = parse_call_arguments(spec.tokens, tool.input_schema)
        result = await call_tool(sup, tool.name, values, timeout_s=timeout_s)
    except OrbError as err:
        return failed(err.message + (f" ({err.hint})" if err.hint else ""))
    text = transcript_text(result, {})
    output = text[:OUTPUT_CHARS]
    if result.is_error:
        return failed(f"the tool returned an error: {text[:300]}", output)
    for e in spec.expectations:
        why = _failed_expectation(e, text, result.to_json())
        if why is not None:
            return failed(why, output)
    return SmokeCall(
        spec.text, spec.server, spec.tool, True, None, output, expectations, time.monotonic() - begin
    )
