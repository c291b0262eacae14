"""``orbmcp shell``: the interactive session (frontends/shell.py does the work)."""

from __future__ import annotations

from dataclasses import dataclass

from orbmcp.commands.context import CommandContext


@dataclass(frozen=True)
class ShellExit:
    """The status of the last command, for ``orbmcp shell < script`` (nothing to print)."""

    exit_code: int

    def to_json(self) -> dict[str, int]:
        return {"exitCode": self.exit_code}

    def text(self) -> str:
        return ""


def shell(ctx: CommandContext) -> ShellExit | None:
    """Run the REPL until Ctrl-D or /exit; every server it started is stopped on the way out.

    Interactive sessions exit 0 (130 when SIGTERM/SIGHUP ended them); a script piped in exits
    with its last command's status, like sh.
    """
    from orbmcp.frontends.shell import run_shell

    status = run_shell(ctx)
    return None if status == 0 else ShellExit(status)
