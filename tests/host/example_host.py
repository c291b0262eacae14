"""An example agent host driving orbmcp's embedding API (``orbmcp.host``).

It keeps a tool table the way an agent does: tools are registered once and toggled active; only
active tools are offered to the model. ``blocked`` plays "another extension" that keeps some tools
inactive whatever orbmcp says.

    python tests/host/example_host.py [--config FILE] [--call TOOL JSON] [--zero-work-report]

prints one JSON object describing what happened (used by the tests; handy to try by hand).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orbmcp.core.tooling.results import ToolResult
from orbmcp.host import HostTool, McpExtension

HEAVY_MODULES = ("mcp", "mcp_types", "httpx2")  # pydantic-settings carries the config: allowed


class ExampleHost:
    def __init__(
        self,
        *,
        interactive: bool = False,
        trust: bool | None = None,
        answers: Mapping[str, str] | None = None,
    ) -> None:
        self.interactive = interactive
        self.trust = trust
        self.answers = dict(answers or {})
        self.tools: dict[str, HostTool] = {}
        self.active: set[str] = set()
        self.blocked: set[str] = set()  # kept inactive by "another extension"
        self.registrations: list[str] = []
        self.activations: list[tuple[str, bool]] = []
        self.notifications: list[tuple[str, str]] = []
        self.questions: list[tuple[str, list[str]]] = []
        self.trust_asked: list[Path] = []

    # -- the Host protocol -----------------------------------------------------------------------

    def register_tool(self, tool: HostTool) -> None:
        if tool.name in self.tools:
            raise AssertionError(f"{tool.name} registered twice")
        self.tools[tool.name] = tool
        self.registrations.append(tool.name)

    def set_tool_active(self, bridged_name: str, active: bool) -> None:
        if bridged_name not in self.tools:
            raise AssertionError(f"{bridged_name} toggled before it was registered")
        self.activations.append((bridged_name, active))
        if active:
            self.active.add(bridged_name)
        else:
            self.active.discard(bridged_name)

    def notify(self, message: str, level: str) -> None:
        self.notifications.append((level, message))

    def choose(self, question: str, options: list[str]) -> str | None:
        self.questions.append((question, options))
        for needle, answer in self.answers.items():
            if needle in question:
                return answer
        return None

    def is_project_trusted(self, project_dir: Path) -> bool | None:
        self.trust_asked.append(project_dir)
        return self.trust

    def active_tool_names(self) -> set[str]:
        return self.active - self.blocked

    # -- what an agent loop does -----------------------------------------------------------------

    def offered(self) -> list[dict[str, Any]]:
        """The tool definitions a model would see this turn."""
        return [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
            for name, t in sorted(self.tools.items())
            if name in self.active_tool_names()
        ]

    async def call(self, name: str, args: Mapping[str, Any] | None = None, **kw: Any) -> ToolResult:
        if name not in self.active_tool_names():
            raise LookupError(f"tool {name} is not active")
        return await self.tools[name].call(args, **kw)


async def drive(config: Path | None, call: tuple[str, str] | None) -> dict[str, Any]:
    host = ExampleHost()
    report: dict[str, Any] = {}
    async with McpExtension(host, config_file=config) as ext:
        report["active"] = ext.active
        report["registered"] = list(host.registrations)
        report["offered"] = [t["name"] for t in host.offered()]
        if ext.active:
            status = await host.call("mcp_status")
            report["mcp_status"] = json.loads(status.text())
        if call is not None:
            server_tool, args = call
            name = next(t.name for t in ext.tools if f"{t.server}/{t.tool_name}" == server_tool)
            result = await host.call(name, json.loads(args))
            report["call"] = result.to_json()
    report["active_after_shutdown"] = sorted(host.active)
    report["heavy_modules"] = [m for m in HEAVY_MODULES if m in sys.modules]
    return report


def main(argv: list[str]) -> int:
    import anyio

    p = argparse.ArgumentParser(description="Drive orbmcp's host API end to end")
    p.add_argument("--config", type=Path)
    p.add_argument("--call", nargs=2, metavar=("SERVER/TOOL", "JSON"))
    args = p.parse_args(argv)
    report = anyio.run(drive, args.config, tuple(args.call) if args.call else None)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
