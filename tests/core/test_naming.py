"""Bridged tool names and LLM-facing descriptions."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orbmcp.core.tooling.naming import annotation_hints, bridged_name, describe_tool, name_hash

SAFE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def expected_hash(server: str, tool: str) -> str:
    server_bytes = server.encode("utf-8", "surrogatepass")
    payload = f"{len(server_bytes)}:".encode() + server_bytes + tool.encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()[:8]


def test_plain_name_keeps_every_part() -> None:
    name = bridged_name("mcp", "files", "read_file")
    assert name == f"mcp__files__read_file_{expected_hash('files', 'read_file')}"


@pytest.mark.parametrize(
    ("server", "tool", "readable"),
    [
        ("my server", "tool.v2", "mcp__my_server__tool_v2"),
        ("srv", "résumé/get", "mcp__srv__r_sum__get"),
        ("a-b", "c_d", "mcp__a-b__c_d"),
        ("", "", "mcp____"),
    ],
)
def test_sanitised_names(server: str, tool: str, readable: str) -> None:
    assert bridged_name("mcp", server, tool) == f"{readable}_{expected_hash(server, tool)}"


def test_names_that_sanitise_alike_differ_by_hash() -> None:
    first = bridged_name("mcp", "a b", "c")
    second = bridged_name("mcp", "a_b", "c")
    assert first[:-8] == second[:-8]
    assert first != second


def test_hash_encoding_is_unambiguous() -> None:
    # naive concatenation would make these equal
    assert name_hash("ab", "c") != name_hash("a", "bc")
    assert name_hash("a\x00b", "c") != name_hash("a", "b\x00c")


def test_long_names_keep_the_tool_readable_and_the_hash() -> None:
    name = bridged_name("mcp", "s" * 100, "list_issues")
    assert len(name) == 64
    assert name.endswith("__list_issues_" + expected_hash("s" * 100, "list_issues"))
    long_tool = bridged_name("mcp", "github", "t" * 200)
    assert long_tool.startswith("mcp__github__ttt")
    assert len(long_tool) == 64
    both = bridged_name("mcp", "s" * 100, "t" * 100)
    assert len(both) == 64
    assert both.count("s") == both.count("t")  # the room is shared fairly


def test_prefix_is_sanitised_capped_and_optional() -> None:
    assert bridged_name("my.prefix", "s", "t").startswith("my_prefix__s__t_")
    assert bridged_name("p" * 40, "s", "t").startswith("p" * 16 + "__s__t_")
    assert bridged_name("", "s", "t") == f"s__t_{expected_hash('s', 't')}"


names = st.text(max_size=120)
narrow = st.text(alphabet="ab _.-é", max_size=6)  # collides a lot after sanitising


@given(prefix=st.text(max_size=30), server=names, tool=names)
def test_names_are_provider_safe_and_deterministic(prefix: str, server: str, tool: str) -> None:
    name = bridged_name(prefix, server, tool)
    assert SAFE.fullmatch(name)
    assert name == bridged_name(prefix, server, tool)
    assert name.endswith("_" + expected_hash(server, tool))


@settings(max_examples=200)
@given(st.sets(st.tuples(st.one_of(narrow, names), st.one_of(narrow, names)), min_size=2, max_size=60))
def test_distinct_pairs_never_collide(pairs: set[tuple[str, str]]) -> None:
    bridged = {bridged_name("mcp", server, tool) for server, tool in pairs}
    assert len(bridged) == len(pairs)


@given(st.sets(st.tuples(narrow, narrow), min_size=2, max_size=40))
def test_pairs_that_sanitise_alike_still_differ(pairs: set[tuple[str, str]]) -> None:
    bridged = [bridged_name("mcp", server, tool) for server, tool in pairs]
    assert len(set(bridged)) == len(bridged)


def test_very_long_pairs_sharing_a_truncated_prefix_differ() -> None:
    pairs = {("s" * 80 + str(i), "t" * 80 + str(j)) for i in range(10) for j in range(10)}
    bridged = {bridged_name("mcp", server, tool) for server, tool in pairs}
    assert len(bridged) == 100
    assert all(len(name) == 64 for name in bridged)


# ------------------------------------------------------------------------------------ describe_tool


@pytest.mark.parametrize(
    ("annotations", "hints"),
    [
        (None, []),
        ({}, []),
        ({"readOnlyHint": True}, ["read-only"]),
        ({"readOnlyHint": True, "idempotentHint": True}, ["read-only", "idempotent"]),
        # per the spec destructive/idempotent only mean something when not read-only
        ({"readOnlyHint": True, "destructiveHint": True, "idempotentHint": False}, ["read-only"]),
        ({"destructiveHint": True}, ["destructive"]),
        ({"readOnlyHint": False, "destructiveHint": False}, ["may modify state", "non-destructive"]),
        ({"destructiveHint": True, "idempotentHint": False}, ["destructive", "not idempotent"]),
        ({"openWorldHint": True}, ["open-world"]),
        ({"openWorldHint": False}, ["closed-world"]),
        ({"read_only_hint": True, "open_world_hint": False}, ["read-only", "closed-world"]),
        ({"readOnlyHint": None, "destructiveHint": "yes"}, []),  # not given / not a boolean
    ],
)
def test_annotation_hints(annotations: dict[str, object] | None, hints: list[str]) -> None:
    assert annotation_hints(annotations) == hints


def test_describe_tool_appends_one_hint_line() -> None:
    text = describe_tool("Reads a file.", {"readOnlyHint": True, "idempotentHint": True}, None)
    assert text == "Reads a file.\n\n[read-only, idempotent]"


def test_describe_tool_without_hints_is_the_description() -> None:
    assert describe_tool("  Reads a file.\n", None, None) == "Reads a file."
    assert describe_tool(None, None, None) == ""


def test_describe_tool_title_adds_a_line_unless_redundant() -> None:
    assert describe_tool("Lists open issues.", None, "List issues") == "List issues\n\nLists open issues."
    assert describe_tool("List issues in a repo.", None, "List issues") == "List issues in a repo."
    assert describe_tool(None, {"title": "Delete file", "destructiveHint": True}, None) == (
        "Delete file\n\n[destructive]"
    )


def test_describe_tool_accepts_sdk_annotations_dump() -> None:
    import mcp_types

    annotations = mcp_types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, open_world_hint=False
    )
    dumped = annotations.model_dump(by_alias=True, exclude_none=True)
    assert describe_tool("Drops a table.", dumped, None) == (
        "Drops a table.\n\n[may modify state, destructive, closed-world]"
    )
