"""The words of a partial line, and what completion offers for the last one.

Standard library only: shells run completion on every Tab. ``split_partial`` is the tokenizer of
``commands/complete.py``; ``word_start`` says where the word being typed begins, so an agent that
replaces a whole argument can rebuild the line as ``line[:replace_from] + value``.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

CandidateKind = Literal[
    "command", "subcommand", "server", "tool", "prompt", "resource", "argument", "value", "option"
]


class Candidate(NamedTuple):
    """One completion: the word, what it is, and a one-line description (may be empty)."""

    value: str
    kind: CandidateKind = "value"
    description: str = ""


def _scan(line: str) -> tuple[list[str], str, bool, int]:
    """Words before the cursor, the word being typed, whether one is being typed, its start."""
    words: list[str] = []
    cur: list[str] = []
    in_word = False
    start = len(line)
    quote: str | None = None
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if not in_word and quote is None and c not in " \t\n":
            start = i
        if quote == "'":
            if c == "'":
                quote = None
            else:
                cur.append(c)
        elif quote == '"':
            if c == '"':
                quote = None
            elif c == "\\" and i + 1 < n and line[i + 1] in '"\\$`':
                i += 1
                cur.append(line[i])
            else:
                cur.append(c)
        elif c in " \t\n":
            if in_word:
                words.append("".join(cur))
                cur = []
                in_word = False
                start = n
        elif c in "'\"":
            quote = c
            in_word = True
        elif c == "\\" and i + 1 < n:
            i += 1
            cur.append(line[i])
            in_word = True
        else:
            cur.append(c)
            in_word = True
        i += 1
    return words, "".join(cur), in_word, start


def split_partial(line: str) -> tuple[list[str], str]:
    """Shell words before the cursor, and the word being typed (``""`` after a space).

    Like ``shlex.split`` (quotes, backslashes), but an unterminated quote is fine: it belongs to
    the word being typed.
    """
    words, current, in_word, _ = _scan(line)
    return words, (current if in_word else "")


def word_start(line: str) -> int:
    """The offset in ``line`` where the word being typed begins (``len(line)`` after a space)."""
    return _scan(line)[3]


__all__ = ["Candidate", "CandidateKind", "split_partial", "word_start"]
