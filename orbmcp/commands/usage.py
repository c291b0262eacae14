"""How a command is written out: its usage line for the shell or an agent, and a value's
placeholder (``orbmcp start SERVER [--json]``, ``/mcp:start <server> [--json]``). Used by the
REPL's help, the man page, the slash front and the completion scripts."""

from __future__ import annotations

from orbmcp.commands.spec import CommandSpec, Param

PROGRAM = "orbmcp"
SLASH_ROOT = "/mcp"

_TYPE_METAVAR = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH"}


def value_metavar(p: Param) -> str:
    return p.metavar or _TYPE_METAVAR[p.type]


def primary_slash(spec: CommandSpec) -> str:
    """How a slash user spells this command: its first table spelling, else ``/mcp <path>``."""
    return spec.slash[0] if spec.slash else f"{SLASH_ROOT} {spec.name}"


def usage_line(spec: CommandSpec, *, slash: bool = False, program: str = PROGRAM) -> str:
    """``orbmcp start SERVER [--json]`` or ``/mcp:start <server> [--json]``."""
    parts = [primary_slash(spec) if slash else f"{program} {spec.name}".strip()]
    for p in spec.params:
        if p.hidden:
            continue
        if p.kind == "argument":
            name = f"<{p.name.replace('_', '-')}>" if slash else (p.metavar or p.name.upper())
            name += "..." if p.multiple else ""
            parts.append(name if p.required else f"[{name}]")
        elif p.kind == "flag":
            parts.append(f"[{p.option_names[0]}]")
        else:
            rep = "..." if p.multiple else ""
            parts.append(f"[{p.option_names[0]} {value_metavar(p)}]{rep}")
    return " ".join(parts)
