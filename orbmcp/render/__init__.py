"""Renderers: json (versioned envelope), plain (agent UI text), rich (terminal).

``render_to_terminal`` is the only place the shell front writes a result to stdout.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def to_json_text(result: Any, *, pretty: bool) -> str:
    data = result.to_json() if hasattr(result, "to_json") else result
    return json.dumps(data, indent=2 if pretty else None, ensure_ascii=False)


def exit_code_of(result: Any) -> int:
    code = getattr(result, "exit_code", 0)
    return int(code) if isinstance(code, int) else 0


def render_to_terminal(result: Any, *, json_output: bool, no_color: bool) -> int:
    if result is None:
        return 0
    out = sys.stdout
    if json_output:
        out.write(to_json_text(result, pretty=out.isatty()) + "\n")
    elif not no_color and out.isatty():
        from orbmcp.render.rich_view import render_rich

        render_rich(result)
    else:
        from orbmcp.render.plain import render_plain

        text = render_plain(result)
        if text:
            out.write(text if text.endswith("\n") else text + "\n")
    out.flush()
    return exit_code_of(result)
