"""Completion candidates only a server knows, through ``completion/complete``.

``orbmcp complete`` first completes a line from the command table and the config alone; when the
word being typed is a prompt argument (``department=E``) or a resource URI, it asks the server
here: prompt argument names from the prompt listing, values from ``completion/complete``, resource
URIs from the listings and template values from ``completion/complete``. In a live session (the
daemon) the session's connection answers; otherwise the one server is connected for the question
and stopped again (connecting is bounded by the server's ``timeoutMs``, like every connection).
The questions are bounded in time and count, and a failure is no candidates: completion never
breaks the line being typed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp.commands.completion_words import Candidate, CandidateKind
from orbmcp.commands.handlers.tools import find_tool
from orbmcp.commands.live_query import LiveQuery
from orbmcp.core.capabilities.templates import completion_point, literal_prefix
from orbmcp.core.tooling.calls import complete_argument, list_prompts, list_resource_templates, list_resources
from orbmcp.log import log_event
from orbmcp.text import one_line

if TYPE_CHECKING:
    from orbmcp.core.session.manager import Manager
    from orbmcp.core.session.supervisor import Supervisor

QUERY_BUDGET_S = 5.0
MAX_CANDIDATES = 100


async def answer(manager: Manager, query: LiveQuery) -> list[Candidate]:
    """Candidates for ``query`` from its server; [] when it cannot say (never raises)."""
    try:
        sup = await manager.ready(query.server)
        with anyio.fail_after(QUERY_BUDGET_S):
            if query.kind == "tool_argument":
                return _tool_argument(manager, query)[:MAX_CANDIDATES]
            if query.kind == "prompt_argument":
                kind: CandidateKind = "value" if "=" in query.current else "argument"
                found = await _prompt_argument(sup, query)
            else:
                kind, found = "resource", await _resource_uri(sup, query)
            return [Candidate(value, kind) for value in found[:MAX_CANDIDATES]]
    except Exception as exc:
        log_event("complete.live_failed", server=query.server, reason=type(exc).__name__)
        return []


async def _prompt_argument(sup: Supervisor, query: LiveQuery) -> list[str]:
    prompt = next((p for p in await list_prompts(sup) if p.get("name") == query.prompt), None)
    if prompt is None or query.prompt is None:
        return []
    raw = prompt.get("arguments")
    names = (
        [str(a["name"]) for a in raw if isinstance(a, Mapping) and isinstance(a.get("name"), str)]
        if isinstance(raw, list)
        else []
    )
    name, eq, value = query.current.partition("=")
    if not eq:
        given = {k for k, _ in query.context}
        return [f"{n}=" for n in names if n not in given]
    if name not in names or not _offers_completions(sup):
        return []
    context = {k: v for k, v in query.context if k != name}
    values = await complete_argument(sup, ("prompt", query.prompt), name, value, context)
    return [f"{name}={v}" for v in values]


async def _resource_uri(sup: Supervisor, query: LiveQuery) -> list[str]:
    typed = query.current
    candidates = [str(r["uri"]) for r in await list_resources(sup) if isinstance(r.get("uri"), str)]
    for template in await list_resource_templates(sup):
        uri_template = template.get("uriTemplate")
        if not isinstance(uri_template, str):
            continue
        prefix = literal_prefix(uri_template)
        if len(typed) < len(prefix):
            candidates.append(prefix)
            continue
        point = completion_point(uri_template, typed)
        if point is None or not _offers_completions(sup):
            continue
        values = await complete_argument(
            sup, ("resource", uri_template), point.variable, point.partial, point.earlier
        )
        candidates += [point.prefix + v for v in values]
    return [c for c in dict.fromkeys(candidates) if c.startswith(typed)]


def _tool_argument(manager: Manager, query: LiveQuery) -> list[Candidate]:
    """``a=`` for each schema property not on the line yet; after ``name=``, the property's enum
    values (or ``true``/``false`` for a boolean). MCP offers no server completion for tool
    arguments (``completion/complete`` takes prompts and resource templates only)."""
    assert query.prompt is not None
    schema = find_tool(manager, query.server, query.prompt).input_schema
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return []
    name, eq, _ = query.current.partition("=")
    if not eq:
        given = {k for k, _ in query.context}
        listed = schema.get("required")
        required = listed if isinstance(listed, list) else []
        out = []
        for key, prop in props.items():
            if not isinstance(key, str) or key in given or one_line(key) != key or " " in key:
                continue
            spec = prop if isinstance(prop, Mapping) else {}
            kind = spec.get("type") if isinstance(spec.get("type"), str) else "value"
            about = " ".join(
                part
                for part in (
                    kind,
                    "(required)" if key in required else "",
                    str(spec.get("description") or ""),
                )
                if part
            )
            out.append(Candidate(f"{key}=", "argument", one_line(about, max_len=200)))
        return out
    prop = props.get(name)
    if not isinstance(prop, Mapping):
        return []
    return [Candidate(f"{name}={v}", "value") for v in _schema_values(prop) if one_line(v) == v]


def _schema_values(spec: Mapping[str, Any]) -> list[str]:
    """The values a property's schema names: its enum, its const, or both booleans."""
    types = spec.get("type")
    if "enum" in spec and isinstance(spec["enum"], list):
        values = spec["enum"]
    elif "const" in spec:
        values = [spec["const"]]
    elif types == "boolean" or (isinstance(types, list) and "boolean" in types):
        values = [True, False]
    else:
        return []
    return [v if isinstance(v, str) else json.dumps(v) for v in values[:MAX_CANDIDATES]]


def _offers_completions(sup: Supervisor) -> bool:
    caps = getattr(sup.client, "server_capabilities", None)
    return getattr(caps, "completions", None) is not None


async def live_candidates(manager: Manager, queries: list[LiveQuery]) -> dict[LiveQuery, list[Candidate]]:
    """Every query's candidates (the same query is asked once)."""
    out: dict[LiveQuery, list[Candidate]] = {}
    for query in dict.fromkeys(queries):
        out[query] = await answer(manager, query)
    return out


__all__ = ["QUERY_BUDGET_S", "answer", "live_candidates"]
