"""``${VAR}`` expansion: the forms, the errors, and properties over arbitrary text."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orbmcp.config.expand import ExpansionError, MissingVariable, expand, referenced_variables

ENV = {"A": "alpha", "EMPTY": "", "WITH_DOLLAR": "$x${A}"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${A}", "alpha"),
        ("${env:A}", "alpha"),
        ("pre-${A}-post", "pre-alpha-post"),
        ("${MISSING:-fallback}", "fallback"),
        ("${env:MISSING:-fallback}", "fallback"),
        ("${EMPTY:-fallback}", "fallback"),  # as in a POSIX shell: empty counts as unset for :-
        ("${EMPTY}", ""),
        ("${MISSING:-}", ""),
        ("${MISSING:-a:-b}", "a:-b"),
        ("$$", "$"),
        ("$${A}", "${A}"),
        ("$$$${A}", "$${A}"),
        ("$$${A}", "$alpha"),
        ("cost: $5 and $HOME", "cost: $5 and $HOME"),  # other $ forms are left alone
        ("${WITH_DOLLAR}", "$x${A}"),  # values are not expanded again
        ("", ""),
    ],
)
def test_forms(text: str, expected: str) -> None:
    assert expand(text, ENV) == expected


def test_missing_variable_names_it() -> None:
    with pytest.raises(MissingVariable) as caught:
        expand("Bearer ${GITHUB_TOKEN}", ENV)
    assert caught.value.name == "GITHUB_TOKEN"
    assert "${GITHUB_TOKEN}" in str(caught.value)


@pytest.mark.parametrize("text", ["${", "abc ${A", "${}", "${1A}", "${A B}", "${env:}", "${A:default}"])
def test_malformed_references_are_errors(text: str) -> None:
    with pytest.raises(ExpansionError):
        expand(text, ENV)
    assert referenced_variables(text) == ()


def test_referenced_variables_in_order_without_duplicates() -> None:
    assert referenced_variables("${B} $$ ${env:A} ${B:-x} $C") == ("B", "A")
    assert referenced_variables("no variables") == ()


class EveryVariableSet(Mapping[str, str]):
    def __getitem__(self, key: str) -> str:
        return f"<{key}>"

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
NO_DOLLAR = st.text(alphabet=st.characters(blacklist_characters="$"), max_size=30)


@given(NO_DOLLAR)
def test_property_text_without_dollar_is_unchanged(text: str) -> None:
    assert expand(text, {}) == text
    assert referenced_variables(text) == ()


@given(NO_DOLLAR, NO_DOLLAR)
def test_property_double_dollar_is_one_dollar(left: str, right: str) -> None:
    assert expand(f"{left}$${right}", {}) == f"{left}${right}"


@given(NAMES, st.text(max_size=30), NO_DOLLAR, NO_DOLLAR)
def test_property_set_variable_expands_to_its_value(name: str, value: str, left: str, right: str) -> None:
    env = {name: value}
    assert expand(f"{left}${{{name}}}{right}", env) == f"{left}{value}{right}"
    assert expand(f"${{env:{name}}}", env) == value
    assert referenced_variables(f"{left}${{{name}}}{right}") == (name,)


@given(st.text(alphabet=st.sampled_from("${}:-env_AZaz0 \n"), max_size=40) | st.text(max_size=40))
def test_property_never_raises_anything_but_expansion_error(text: str) -> None:
    try:
        result = expand(text, EveryVariableSet())
    except ExpansionError:
        return
    assert isinstance(result, str)
    referenced_variables(text)  # never raises


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${B:-${HOME}}", "/home/me"),
        ("${B:-x${HOME}y}z", "x/home/meyz"),
        ("${A:-${NOPE}}", "alpha"),  # a default that is not used is not expanded
        ("${B:-${C:-${HOME}/d}}", "/home/me/d"),
        ("${B:-$$}", "$"),
    ],
)
def test_nested_defaults_are_expanded_when_used(text: str, expected: str) -> None:
    assert expand(text, {**ENV, "HOME": "/home/me"}) == expected


def test_nested_defaults_read_their_variables_and_are_listed_for_review() -> None:
    assert referenced_variables("${B:-${C:-${HOME}}}") == ("B", "C", "HOME")
    with pytest.raises(MissingVariable) as caught:
        expand("${B:-${C}}", ENV)
    assert caught.value.name == "C"


def test_defaults_nested_too_deep_are_an_error() -> None:
    text = "${A0:-" * 12 + "x" + "}" * 12
    with pytest.raises(ExpansionError, match="nested more than"):
        expand(text, {})
    assert referenced_variables(text) == ()
