"""Consent means yes (issue 24): only an explicit yes, or Enter on a default of yes, continues or
sends; anything unrecognised asks again, and a person who never says yes has not consented."""

from __future__ import annotations

import io
from collections.abc import Iterator

from orbmcp.core.capabilities.elicitation import ElicitationRequest, parse_form
from orbmcp.core.capabilities.sampling import SamplingRequest
from orbmcp.session.asking import MAX_UNCLEAR_ANSWERS, approve_sampling, ask_form, ask_url, yes_no
from orbmcp.session.console import Console
from orbmcp.session.terminal import TerminalUI

FORM = parse_form({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})


class Person:
    """Answers from a script, and what orbmcp wrote to them."""

    def __init__(self, *answers: str | None) -> None:
        self._answers: Iterator[str | None] = iter(answers)
        self.shown: list[str] = []
        self.asked = 0

    def readline(self) -> str | None:
        self.asked += 1
        return next(self._answers, None)

    def write(self, text: str) -> None:
        self.shown.append(text)

    @property
    def text(self) -> str:
        return "".join(self.shown)


def _form(person: Person) -> str:
    answer = ask_form(ElicitationRequest("srv", "form", "Who?", FORM), person.write, person.readline)
    return answer.action + (f" {answer.content}" if answer.content else "")


def test_an_unrecognised_answer_at_the_door_asks_again() -> None:
    person = Person("1", "sure", "y", "Ada", "yes")
    assert _form(person) == "accept {'name': 'Ada'}"
    assert person.text.count("Answer? [Y]es, [d]ecline, [c]ancel: ") == 3
    assert "Please answer cancel/decline/no/yes." in person.text


def test_send_takes_only_a_yes_or_enter() -> None:
    assert _form(Person("", "Ada", "1", "")) == "accept {'name': 'Ada'}"  # "1" asked again, Enter sends
    person = Person("", "Ada", *["maybe"] * MAX_UNCLEAR_ANSWERS)
    assert _form(person) == "decline"  # never a yes: nothing is sent
    assert person.text.count("Send? [Y/n]: ") == MAX_UNCLEAR_ANSWERS


def test_answers_that_are_never_clear_decline_at_the_door() -> None:
    person = Person(*["x"] * MAX_UNCLEAR_ANSWERS)
    assert _form(person) == "decline"
    assert person.asked == MAX_UNCLEAR_ANSWERS


def test_end_of_input_cancels() -> None:
    assert _form(Person()) == "cancel"
    assert _form(Person("", "Ada")) == "cancel"


def test_a_url_opens_only_on_yes() -> None:
    opened: list[str] = []

    def url_answer(*answers: str | None) -> str:
        request = ElicitationRequest("srv", "url", "Sign in", url="https://example.com/a")
        person = Person(*answers)
        return ask_url(
            request, person.write, person.readline, lambda u: opened.append(u) or True, None
        ).action

    assert url_answer("1", "") == "decline" and opened == []  # "1" asked again; Enter is the default no
    assert url_answer("ok", "YES") == "accept" and opened == ["https://example.com/a"]


def test_sampling_and_every_terminal_yes_no() -> None:
    request = SamplingRequest("srv", {}, command=("answer",))
    assert not approve_sampling(request, Person().write, Person("1").readline)  # then end of input
    assert approve_sampling(request, Person().write, Person("hmm", "Y").readline)
    assert yes_no(Person().write, Person("").readline, "? ", default=True)
    assert not yes_no(Person().write, Person("").readline, "? ", default=False)

    def confirm(*answers: str, default: bool) -> bool:
        person = Person(*answers)
        err = io.StringIO()
        console = Console(io.StringIO(), err, True, True, True, {}, readline=person.readline)
        answer = TerminalUI(interactive=True, console=console).confirm("Trust it?", default=default)
        assert err.getvalue().count("Trust it?") == person.asked
        return answer

    assert not confirm("1", "2", "3", default=True)
    assert confirm("1", "", default=True)
    assert confirm("yes", default=False)
    assert not confirm("", default=False)
