"""Shared pieces of the command tests."""

from __future__ import annotations

from hypothesis import strategies as st

# The keywords that give a JSON Schema its structure, as keys of the generated nodes.
SCHEMA_KEYS = [
    "type",
    "properties",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "a",
    "x",
    "additionalProperties",
    "required",
    "default",
    "prefixItems",
]


def schema_nodes(
    words: list[str], *, max_text: int, max_keys: int, max_leaves: int
) -> st.SearchStrategy[object]:
    """Any JSON value shaped like a schema, sane or not: leaves are scalars and ``words`` (type
    names, references), inner nodes lists and objects keyed by ``SCHEMA_KEYS``."""
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=max_text) | st.sampled_from(words),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.sampled_from(SCHEMA_KEYS), children, max_size=max_keys)
        ),
        max_leaves=max_leaves,
    )
