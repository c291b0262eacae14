"""Salvaging a ``tools/list`` page the SDK refuses because of one bad tool.

The SDK validates a listing as a whole: one tool with an invalid schema fails the page, and with
it every tool of the server. Validating each tool ahead of the SDK would double the cost of every
listing (~130 ms for 10,000 tools), so nothing is checked on the way in: the connection's inbound
guard (``inbound``) only keeps a reference to each raw page, and when the SDK refuses one,
discovery asks for it here, checks it tool by tool, and keeps the valid ones; each skipped tool
becomes a warning naming it and the first thing wrong with it. From then on this connection's
listings are filtered on their way in (the SDK lists again on its own before checking a call's
result, and must not fail on the same tool); other servers never pay for the check.

Connect-time only (imports the SDK's types).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

from orbmcp.text import shown_name

_METHOD = "tools/list"
_VERSION_META = "io.modelcontextprotocol/protocolVersion"
_MAX_SKIP_WARNINGS = 20


class ToolListingSalvage:
    """The raw ``tools/list`` pages of one connection, by the cursor that asked for them."""

    def __init__(self, server: str, warn: Callable[[str], None]) -> None:
        self.server = server
        self._warn = warn
        self._asked: dict[types.RequestId, str | None] = {}  # request id -> its cursor
        self._initialize_ids: set[types.RequestId] = set()
        self._pages: dict[str | None, Mapping[str, Any]] = {}
        self.version: str | None = None
        self.filtering = False  # set once a listing of this connection needed salvage

    def sent(self, message: object) -> None:
        if not isinstance(message, types.JSONRPCRequest):
            return
        params = message.params or {}
        if message.method == "initialize":
            self._initialize_ids.add(message.id)
        elif message.method == _METHOD:
            cursor = params.get("cursor")
            self._asked[message.id] = cursor if isinstance(cursor, str) else None
            meta = params.get("_meta")
            if isinstance(meta, Mapping) and isinstance(meta.get(_VERSION_META), str):
                self.version = meta[_VERSION_META]  # a 2026-07-28 request names its version

    def received(self, message: object) -> object:
        """Note an answer; returns it, or (once filtering) a tool listing without its invalid tools."""
        if not isinstance(message, types.JSONRPCResponse):
            return message
        if message.id in self._initialize_ids:
            self._initialize_ids.discard(message.id)
            version = message.result.get("protocolVersion")
            self.version = version if isinstance(version, str) else self.version
        elif message.id in self._asked:
            cursor = self._asked.pop(message.id)
            if self.filtering:
                kept = self._valid_tools(message.result)
                if kept is not None:
                    return message.model_copy(update={"result": {**message.result, "tools": kept}})
            else:
                self._pages[cursor] = message.result
        return message

    def forget(self) -> None:
        """Drop the kept pages (a listing the SDK accepted needs none of them)."""
        self._pages.clear()

    def salvage(self, cursor: str | None) -> types.ListToolsResult | None:
        """The page asked for with ``cursor``, without its invalid tools; None when the page is
        broken beyond its tools (or was never seen), and the SDK's error stands."""
        page = self._pages.pop(cursor, None)
        kept = self._valid_tools(page) if page is not None else None
        if page is None or kept is None:
            return None
        try:
            rescued = types.ListToolsResult.model_validate({**page, "tools": kept}, by_name=False)
        except ValidationError:
            return None
        self.filtering = True
        return rescued

    def _valid_tools(self, page: Mapping[str, Any]) -> list[Any] | None:
        raw_tools = page.get("tools")
        if not isinstance(raw_tools, list):
            return None
        kept: list[Any] = []
        skipped = 0
        for tool in raw_tools:
            problem = self._problem(page, tool)
            if problem is None:
                kept.append(tool)
                continue
            skipped += 1
            if skipped <= _MAX_SKIP_WARNINGS:
                self._warn(f"server '{self.server}': tool '{_name_of(tool)}' skipped: {problem}")
        if skipped > _MAX_SKIP_WARNINGS:
            self._warn(f"server '{self.server}': {skipped - _MAX_SKIP_WARNINGS} more invalid tools skipped")
        return kept

    def _problem(self, page: Mapping[str, Any], tool: object) -> str | None:
        try:
            types.Tool.model_validate(tool, by_name=False)
            if self.version is not None:
                validate_server_result(_METHOD, self.version, {**page, "tools": [tool]})
        except ValidationError as exc:
            return _first_error(exc)
        except (KeyError, ValueError):
            pass  # a version the types package does not know: the version-free check stands
        return None


def _name_of(tool: object) -> str:
    name = tool.get("name") if isinstance(tool, Mapping) else None
    return shown_name(name)[:200] if isinstance(name, str) else "(no name)"


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    loc = tuple(error["loc"])
    if loc[:2] == ("tools", 0):
        loc = loc[2:]
    where = ".".join(str(part) for part in loc) or "entry"
    return f"invalid {where} ({error['msg'][:200]})"


__all__ = ["ToolListingSalvage"]
