"""``orbmcp check``: the CI smoke test.

Every entry a config file names is counted (see ``results/check.py``). ``--wait`` retries servers
that are not ready yet until a deadline (a CI service booting beside the job); ``--timeout``
bounds each connection attempt and each smoke call. ``--call`` runs a tool and checks its answer.
Reports: the readable summary, ``--json``, ``--junit FILE`` and ``--format github`` (annotations,
and a step summary when ``GITHUB_STEP_SUMMARY`` is set).
"""

from __future__ import annotations

import platform
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from orbmcp import environment, fs
from orbmcp.commands.complete import CHECK_FORMATS
from orbmcp.commands.context import CommandContext
from orbmcp.commands.durations import apply_timeout, parse_duration
from orbmcp.commands.handlers.lock import live_entry, lock_changes
from orbmcp.commands.handlers.smoke import SmokeSpec, parse_smoke_calls, run_smoke_call
from orbmcp.commands.results.check import CheckedServer, CheckFormat, CheckReport, RequiredTool, Verdict
from orbmcp.commands.results.check_formats import junit_xml, step_summary
from orbmcp.commands.views import server_detail, status_row, unavailable_row
from orbmcp.errors import UsageError, cmd

if TYPE_CHECKING:
    from orbmcp.commands.toollock import ToolChange
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.core.session.manager import Manager

FORMATS = CHECK_FORMATS
# Between two attempts while --wait lasts: short at first, a CI service usually needs seconds.
WAIT_SCHEDULE_S = (0.5, 1.0, 2.0, 3.0, 5.0)


def _format(value: str | None) -> CheckFormat:
    if value is None or value == "text":
        return "text"
    if value == "github":
        return "github"
    # JSON is every command's --json (the front renders it); --format json would be a second way.
    hint = "JSON is --json" if value == "json" else None
    raise UsageError(
        f"--format: expected one of {', '.join(FORMATS)}, got {value!r}", hint=hint, reason="bad_format"
    )


def _names(ctx: CommandContext, config: ResolvedConfig, servers: list[str] | None) -> list[str]:
    """The names to check: the ones given (each must exist in some form), else every entry."""
    if servers:
        for name in servers:
            if name not in config.unavailable:
                ctx.server(name)
        return list(dict.fromkeys(servers))
    if not config.settings.extension_enabled:
        return []
    return [*config.servers, *config.unavailable]


async def _connect(manager: Manager, names: list[str], deadline: float | None) -> dict[str, float]:
    """Start ``names``; until ``deadline`` (monotonic), try the ones that did not get ready again.
    Returns each server's wall time from the start until its last attempt settled (ready or not):
    its JUnit testcase's ``time``, a failed one's included."""
    began = time.monotonic()
    took: dict[str, float] = {}

    async def attempt_one(name: str, first: bool) -> None:
        await (manager.start_many([name]) if first else manager.start(name))
        took[name] = time.monotonic() - began

    async with anyio.create_task_group() as tg:
        for name in names:
            tg.start_soon(attempt_one, name, True)
    attempt = 0
    while deadline is not None:
        pending = [n for n in names if str(manager.get(n).state) not in ("ready", "needs-auth")]
        left = deadline - time.monotonic()
        if not pending or left <= 0:
            break
        await anyio.sleep(min(WAIT_SCHEDULE_S[min(attempt, len(WAIT_SCHEDULE_S) - 1)], left))
        attempt += 1
        async with anyio.create_task_group() as tg:
            for name in pending:
                tg.start_soon(attempt_one, name, False)
    return took


def _checked(
    ctx: CommandContext,
    config: ResolvedConfig,
    manager: Manager | None,
    name: str,
    *,
    connected: bool,
    seconds: float = 0.0,
) -> CheckedServer:
    entry = config.unavailable.get(name)
    if entry is not None:
        return CheckedServer(unavailable_row(entry, front=ctx.front), entry.kind)
    cfg = config.servers[name]
    if not connected or manager is None:
        row = replace(server_detail(cfg, config, None, front=ctx.front).row(), state="disabled")
        return CheckedServer(row, "disabled")
    sup = manager.get(name)
    row = replace(status_row(cfg, config, sup, front=ctx.front), file=cfg.file)
    verdict: Verdict = "ok" if row.state == "ready" else "failed"
    stderr = tuple(sup.stderr_tail()[-20:])
    return CheckedServer(row, verdict, stderr=stderr, seconds=max(0.0, seconds))


async def check(
    ctx: CommandContext,
    servers: list[str] | None = None,
    *,
    require_tool: list[str] | None = None,
    call: list[str] | None = None,
    expect: list[str] | None = None,
    expect_json: list[str] | None = None,
    wait: str | None = None,
    timeout: str | None = None,
    junit: Path | str | None = None,
    format: str | None = None,
    lock_file: Path | str | None = None,
) -> CheckReport:
    report_format = _format(format)
    wait_s = parse_duration(wait, option="--wait") if wait is not None else None
    smoke: list[SmokeSpec] = parse_smoke_calls(call or [], expect or [], expect_json or [])
    junit_path = Path(junit).expanduser() if junit is not None else None
    if junit_path is not None and (junit_path.is_dir() or not junit_path.parent.is_dir()):
        raise UsageError(f"--junit {junit_path}: not a file in an existing directory", reason="bad_path")
    for s in smoke:
        ctx.server(s.server)
    lock_path = Path(lock_file).expanduser() if lock_file is not None else None
    if lock_path is not None and not lock_path.is_file():
        raise UsageError(
            f"--lock {lock_path}: no such lock file",
            hint=f"write it with {cmd('lock', '--lock', str(lock_path))}",
            reason="bad_path",
        )

    timeout_s = apply_timeout(ctx, timeout)
    started = time.monotonic()  # the suite's wall time runs from here to the report
    config = ctx.config()
    names = _names(ctx, config, servers)
    # A disabled server is skipped, unless named: then it is checked, as `start` would connect it.
    to_connect = [n for n in names if n in config.servers and (servers or config.servers[n].enabled)]
    manager = None
    waited = None
    took: dict[str, float] = {}
    if to_connect or smoke:
        manager = await ctx.manager()
        begin = time.monotonic()
        took = await _connect(manager, to_connect, None if wait_s is None else begin + wait_s)
        waited = time.monotonic() - begin if wait_s is not None else None
    checked = tuple(
        _checked(ctx, config, manager, n, connected=n in to_connect, seconds=took.get(n, 0.0)) for n in names
    )
    required = tuple(_required(manager, spec, names) for spec in require_tool or [])
    calls = []
    for s in smoke:
        assert manager is not None
        calls.append(await run_smoke_call(manager, s, timeout_s))
    notes = () if names or smoke else ("no server to check",)
    workdir = str(ctx.project or Path.cwd())
    changes = _lock_changes(manager, lock_path, [c.name for c in checked if c.verdict == "ok"])
    report = CheckReport(
        checked,
        required,
        tuple(calls),
        notes,
        format=report_format,
        waited=waited,
        workdir=workdir,
        lock_file=None if lock_path is None else str(lock_path),
        lock_changes=tuple(changes),
        seconds=time.monotonic() - started,
    )
    return _write_reports(report, junit_path)


def _lock_changes(manager: Manager | None, path: Path | None, ready: list[str]) -> list[ToolChange]:
    """``--lock FILE``: every tool of the ready servers that differs from the lock."""
    if path is None or manager is None:
        return []

    return lock_changes(path, {name: live_entry(manager.get(name)) for name in ready}) or []


def _required(manager: Manager | None, spec: str, names: list[str]) -> RequiredTool:
    server, _, tool = spec.rpartition("/")
    pool = [] if manager is None else manager.tools.all()
    found = any(t.name == tool and (t.server == server if server else t.server in names) for t in pool)
    return RequiredTool(spec, found)


def _write_reports(report: CheckReport, junit_path: Path | None) -> CheckReport:
    if junit_path is not None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        try:
            xml = junit_xml(report, timestamp=stamp, hostname=platform.node() or "localhost")
            fs.atomic_write(junit_path, xml, mode=0o644, private_dir=False)
        except OSError as exc:
            raise UsageError(f"--junit {junit_path}: cannot write ({exc.strerror or exc})") from None
        report = replace(report, junit_file=str(junit_path))
    summary = environment.github_step_summary() if report.format == "github" else None
    if summary is not None:
        # GitHub's file, not orbmcp's: appended to, as every step does.
        try:
            with summary.open("a", encoding="utf-8") as out:
                out.write(step_summary(report))
            report = replace(report, summary_file=str(summary))
        except OSError:
            pass  # a summary is a courtesy; the check's outcome is the exit status
    return report
