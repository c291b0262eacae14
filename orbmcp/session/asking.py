"""A server's questions on a terminal: elicitation forms, URLs to open, sampling requests.

These run in a worker thread (each answer is a blocking line read: this process's stdin, or a
session daemon client's terminal) and talk through two functions, ``write`` (to stderr) and
``readline`` (one line, None at end of input). Every string a server sent is escaped before it
is shown. End of input (Ctrl-D) anywhere cancels; a form can be declined or cancelled before its
first field, and nothing is sent without a final yes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from orbmcp.core.capabilities.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    FormField,
    InvalidValue,
    parse_text,
)
from orbmcp.core.capabilities.sampling import SamplingRequest
from orbmcp.text import one_line, safe_text

Write = Callable[[str], None]
ReadLine = Callable[[], str | None]

_FORMAT_HINTS = {
    "email": "an email address",
    "uri": "a URI, e.g. https://example.com",
    "date": "a date, YYYY-MM-DD",
    "date-time": "a date and time with zone, e.g. 2025-01-31T09:30:00Z",
}
MAX_SHOWN_MESSAGES = 20


class _Stop(Exception):
    """The person ended the form: cancel (Ctrl-D) or decline."""

    def __init__(self, action: str) -> None:
        super().__init__(action)
        self.action = action


def _show_value(f: FormField, value: Any) -> str:
    if f.kind == "choice":
        return next((c.title for c in f.choices if c.value == value), str(value))
    if f.kind == "choices":
        titles = {c.value: c.title for c in f.choices}
        return ", ".join(titles.get(v, v) for v in value)
    if f.kind == "boolean":
        return "yes" if value else "no"
    return str(value)


def _hint(f: FormField) -> str:
    bits: list[str] = []
    if f.kind == "string" and f.format:
        bits.append(_FORMAT_HINTS[f.format])
    if f.kind in ("number", "integer"):
        noun = "a whole number" if f.kind == "integer" else "a number"
        if f.minimum is not None and f.maximum is not None:
            bits.append(f"{noun} from {f.minimum:g} to {f.maximum:g}")
        elif f.minimum is not None:
            bits.append(f"{noun}, at least {f.minimum:g}")
        elif f.maximum is not None:
            bits.append(f"{noun}, at most {f.maximum:g}")
        else:
            bits.append(noun)
    if f.kind == "boolean":
        bits.append("y or n")
    if f.kind == "choice":
        bits.append("type a number")
    if f.kind == "choices":
        span = ""
        if f.min_items is not None or f.max_items is not None:
            low, high = f.min_items or 0, f.max_items
            span = f", {low} to {high}" if high is not None else f", at least {low}"
        bits.append(f"numbers separated by commas{span}")
    if f.default is not None:
        bits.append(f"Enter keeps {_show_value(f, f.default)}")
    elif not f.required:
        bits.append("Enter skips")
    return "; ".join(bits)


def _field_head(f: FormField) -> str:
    title = one_line(f.title, max_len=200)
    head = f"{title}{' (required)' if f.required else ''}"
    if f.description:
        head += f" - {one_line(f.description, max_len=500)}"
    lines = [head]
    defaults = f.default if isinstance(f.default, list) else [f.default]
    for i, choice in enumerate(f.choices, 1):
        mark = "  (default)" if choice.value in defaults else ""
        lines.append(f"  {i}) {one_line(choice.title, max_len=200)}{mark}")
    hint = _hint(f)
    return "\n".join(lines) + (f"\n  [{hint}]" if hint else "")


# Unrecognised answers before a question is taken as its safe answer (no, decline): a person who
# keeps typing something else has not said yes.
MAX_UNCLEAR_ANSWERS = 3
YES_NO = {"y": True, "yes": True, "n": False, "no": False}


def choose_answer(
    write: Write, readline: ReadLine, prompt: str, choices: dict[str, Any], default: Any, *, unclear: Any
) -> Any:
    """The one reader of every short answer orbmcp asks for (yes/no, answer/decline/cancel).

    Only a listed answer (any case) counts; Enter takes ``default`` (pass None where Enter must not
    count); anything else asks again, and after ``MAX_UNCLEAR_ANSWERS`` of those the result is
    ``unclear``. End of input raises ``_Stop("cancel")``."""
    words = "/".join(sorted({key for key in choices if len(key) > 1}))
    for _ in range(MAX_UNCLEAR_ANSWERS):
        write(prompt)
        answer = _read(readline).strip().lower()
        if not answer and default is not None:
            return default
        if answer in choices:
            return choices[answer]
        write(f"  Please answer {words}.\n")
    return unclear


def yes_no(write: Write, readline: ReadLine, prompt: str, *, default: bool) -> bool:
    """True only on an explicit yes (or Enter where the default is yes); False on no, at end of
    input, or after answers that are neither."""
    try:
        return bool(choose_answer(write, readline, prompt, YES_NO, default, unclear=False))
    except _Stop:
        return False


def _read(readline: ReadLine) -> str:
    line = readline()
    if line is None:
        raise _Stop("cancel")
    return line.rstrip("\r\n")


def _ask_field(f: FormField, write: Write, readline: ReadLine) -> Any:
    write(_field_head(f) + "\n")
    while True:
        write("> ")
        text = _read(readline)
        if not text.strip():
            if f.default is not None:
                return f.default
            if not f.required:
                return None
            write("  this field is required\n")
            continue
        try:
            return parse_text(f, text)
        except InvalidValue as exc:
            write(f"  {exc}\n")


def _gate(request: ElicitationRequest, write: Write, readline: ReadLine) -> None:
    server = one_line(request.server)
    write(f"\nServer '{server}' asks for input:\n")
    if request.message.strip():
        write(_indent(safe_text(request.message.strip(), max_len=4000, multiline=True)) + "\n")
    choices = {"y": "accept", "yes": "accept", "d": "decline", "decline": "decline", "n": "decline"}
    choices |= {"no": "decline", "c": "cancel", "cancel": "cancel"}
    action = choose_answer(
        write, readline, "Answer? [Y]es, [d]ecline, [c]ancel: ", choices, "accept", unclear="decline"
    )
    if action != "accept":
        raise _Stop(action)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def ask_form(request: ElicitationRequest, write: Write, readline: ReadLine) -> ElicitationAnswer:
    """Fill in a form-mode elicitation with the person; their answer, or why there is none."""
    try:
        _gate(request, write, readline)
        values = _fill(request, write, readline)
    except _Stop as stop:
        write(f"{'Declined' if stop.action == 'decline' else 'Cancelled'}.\n")
        return ElicitationAnswer("decline" if stop.action == "decline" else "cancel")
    return ElicitationAnswer("accept", values)


def _fill(request: ElicitationRequest, write: Write, readline: ReadLine) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for f in request.fields:
        value = _ask_field(f, write, readline)
        if value is not None:
            values[f.name] = value
    write(f"\nSend to '{one_line(request.server)}':\n")
    for f in request.fields:
        if f.name in values:
            shown = one_line(_show_value(f, values[f.name]), max_len=300)
            write(f"  {one_line(f.title, max_len=100)}: {shown}\n")
    if not values:
        write("  (no values)\n")
    if not choose_answer(write, readline, "Send? [Y/n]: ", YES_NO, True, unclear=False):
        raise _Stop("decline")
    return values


def ask_url(
    request: ElicitationRequest,
    write: Write,
    readline: ReadLine,
    open_url: Callable[[str], bool],
    problem: str | None,
) -> ElicitationAnswer:
    """A URL-mode elicitation: show the URL and its purpose, open it only on consent.

    ``problem`` is why the URL must not be opened (an unsafe scheme or host), if it must not.
    """
    from orbmcp.auth.urlpolicy import display_url

    url = request.url or ""
    server = one_line(request.server)
    write(f"\nServer '{server}' asks you to open a URL:\n")
    if request.message.strip():
        write(_indent(safe_text(request.message.strip(), max_len=4000, multiline=True)) + "\n")
    write(f"  URL: {one_line(display_url(url), max_len=2000)}\n")
    if problem is not None:
        write(f"orbmcp will not open it: {problem}. Declined.\n")
        return ElicitationAnswer("decline", reason=f"unsafe URL: {problem}")
    try:
        if not choose_answer(
            write, readline, "Open it in your browser? [y/N]: ", YES_NO, False, unclear=False
        ):
            write("Declined.\n")
            return ElicitationAnswer("decline")
        if not open_url(url):
            write("Could not open a browser; open the URL above yourself.\n")
        if request.retry:
            write("Press Enter once you have finished in the browser (or type c to cancel): ")
            if _read(readline).strip().lower() in ("c", "cancel"):
                write("Cancelled.\n")
                return ElicitationAnswer("cancel")
    except _Stop:
        write("Cancelled.\n")
        return ElicitationAnswer("cancel")
    return ElicitationAnswer("accept")


def _message_lines(request: SamplingRequest) -> list[str]:
    lines: list[str] = []
    for message in request.messages[:MAX_SHOWN_MESSAGES]:
        role = one_line(str(message.get("role", "?")), max_len=20)
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                text = safe_text(block["text"], max_len=2000, multiline=True)
                lines.append(f"  [{role}] " + text.replace("\n", "\n    "))
            elif isinstance(block, dict):
                lines.append(f"  [{role}] ({one_line(str(block.get('type', '?')), max_len=20)} content)")
    more = len(request.messages) - MAX_SHOWN_MESSAGES
    if more > 0:
        lines.append(f"  ... {more} more messages")
    return lines


def show_sampling(request: SamplingRequest, write: Write) -> None:
    """The request as the person sees it before anything runs: server, prompt, messages, limits."""
    write(f"\nServer '{one_line(request.server)}' asks for a model's answer (sampling):\n")
    if request.system_prompt:
        write("  system prompt: " + one_line(request.system_prompt, max_len=1000) + "\n")
    for line in _message_lines(request):
        write(line + "\n")
    limits = []
    if request.max_tokens is not None:
        limits.append(f"max tokens {request.max_tokens}")
    prefs = request.model_preferences
    if prefs:
        limits.append("model preferences " + one_line(json.dumps(prefs, ensure_ascii=False), max_len=300))
    if limits:
        write("  " + "; ".join(limits) + "\n")


def approve_sampling(request: SamplingRequest, write: Write, readline: ReadLine) -> bool:
    """Ask whether the configured command may answer; False on no or end of input."""
    command = " ".join(request.command or ())
    prompt = f"Run the sampling command ({one_line(command, max_len=300)}) on it? [y/N]: "
    return yes_no(write, readline, prompt, default=False)


__all__ = ["approve_sampling", "ask_form", "ask_url", "choose_answer", "show_sampling", "yes_no"]
