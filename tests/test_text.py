"""Server-supplied text cannot drive the terminal: escapes, overwrites, bidi tricks, rich markup."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orbmcp.text import one_line, safe_text, shown_name

# Anything a terminal would act on: C0 except \n and \t, DEL, C1, bidi embeddings/overrides/isolates.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b[2J\x1b[Hcleared", "cleared"),
        ("\x1b]0;pwned title\x07text", "text"),
        ("\x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\", "click me"),
        ("\x1b]8;;https://evil.example\x07click\x1b]8;;\x07", "click"),
        ("\x9b31mC1 CSI", "C1 CSI"),
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),
        ("\x1b(0line", "line"),
        ("\x1b7saved\x1b8", "saved"),
        ("safe\rEVIL", "safe␍EVIL"),
        ("bell\x07", "bell␇"),
        ("nul\x00byte", "nul␀byte"),
        ("del\x7f", "del␡"),
        ("c1\x85nel", "c1⏎nel"),
        ("abc\u202edcba", "abc\ufffddcba"),
        ("iso\u2066late\u2069", "iso\ufffdlate\ufffd"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("two\nlines\tand tab", "two⏎lines and tab"),
        ("crlf\r\nend", "crlf⏎end"),
        ("unterminated \x1b]8;;https://x", "unterminated 8;;https://x"),
        ("lone escape \x1b", "lone escape ␛"),
        ("plain ünïcödé ✓ 日本", "plain ünïcödé ✓ 日本"),
    ],
)
def test_safe_text_neutralises_terminal_control(raw: str, expected: str) -> None:
    assert safe_text(raw) == expected


def test_multiline_keeps_newlines_and_tabs_only() -> None:
    assert safe_text("a\r\nb\n\tc\rd\x1b[1me", multiline=True) == "a\nb\n\tc␍de"


def test_truncation_notes_what_was_cut() -> None:
    assert safe_text("abcdefghij", max_len=4) == "abcd…[+6 chars]"
    assert safe_text("abcd", max_len=4) == "abcd"
    assert safe_text("\x1b[31mabcdef", max_len=3) == "abc…[+3 chars]"


def test_one_line_collapses_line_breaks() -> None:
    assert one_line("  first\n\n  second\r\nthird  \n") == "first ⏎ second ⏎ third"
    assert one_line("x" * 10 + "\ny", max_len=5) == "xxxxx…[+9 chars]"
    assert "\n" not in one_line("a\u2028b\x0bc")


@given(st.text())
@settings(max_examples=500)
def test_safe_text_output_never_contains_control_characters(text: str) -> None:
    out = safe_text(text)
    assert UNSAFE.search(out) is None
    assert "\n" not in out and "\t" not in out
    assert UNSAFE.search(safe_text(text, multiline=True)) is None
    assert UNSAFE.search(one_line(text)) is None


# Invisible characters a person cannot see but a program (or an LLM) reads: zero-width spaces and
# joiners, word joiner, BOM, soft hyphen, Hangul fillers, tag characters.
INVISIBLE = (
    "\u200b\u200c\u200d\u2060\ufeff\u00ad\u3164\u115f\u034f\U000e0041\U000e007f\u180e\u061c\u200e\u200f"
)


@pytest.mark.parametrize("char", list(INVISIBLE))
def test_invisible_characters_are_made_visible(char: str) -> None:
    assert safe_text(f"ad{char}min") == "ad\ufffdmin"
    assert one_line(f"ad{char}min") == "ad\ufffdmin"


def test_a_zero_width_joiner_inside_an_emoji_sequence_is_kept() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert safe_text(f"team {family}") == f"team {family}"
    assert safe_text("a\u200db") == "a\ufffdb"
    assert safe_text("\u200d\U0001f469") == "\ufffd\U0001f469"


EVERY_UNSAFE = re.compile(
    UNSAFE.pattern[:-1] + "\u200b\u200c\u2060\ufeff\u00ad\u3164\u115f\u034f\U000e0000-\U000e007f]"
)


@given(st.text(alphabet=st.characters(codec=None) | st.sampled_from(INVISIBLE + "\x1b[]\u202e\x85")))
@settings(max_examples=500, derandomize=True)
def test_property_no_control_bidi_or_invisible_character_survives(text: str) -> None:
    for out in (safe_text(text), safe_text(text, multiline=True), one_line(text)):
        assert EVERY_UNSAFE.search(out) is None
        # A joiner survives only between two emoji-like characters.
        for match in re.finditer("\u200d", out):
            assert 0 < match.start() < len(out) - 1


def _unescape(shown: str) -> str:
    return re.sub(
        r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})",
        lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1)[1:], 16)),
        shown,
    )


def test_shown_name_spells_control_and_invisible_characters() -> None:
    assert shown_name("plain_name-1 ünï") == "plain_name-1 ünï"
    assert shown_name("back\\slash") == "back\\slash"  # nothing to escape: shown as it is
    assert shown_name("bad\x1b[31mname") == "bad\\x1b[31mname"
    assert shown_name("ad\u200bmin") == "ad\\u200bmin"
    assert shown_name("a\\b\x00") == "a\\\\b\\x00"
    assert shown_name("tag\U000e0041") == "tag\\U000e0041"


@given(st.text(alphabet=st.characters(codec=None) | st.sampled_from(INVISIBLE + "\\\x1b\n")))
@settings(max_examples=500, derandomize=True)
def test_property_shown_names_are_safe_and_say_exactly_which_name(name: str) -> None:
    shown = shown_name(name)
    assert EVERY_UNSAFE.search(shown) is None and "\n" not in shown
    assert shown == name or _unescape(shown) == name
    assert safe_text(shown) == shown  # nothing left for the sanitiser to hide
