"""``check``'s reports for CI systems: JUnit XML, GitHub Actions annotations, a step summary.

Defined once, beside the result, for their readers: the handler writes the JUnit file and the step
summary; the plain renderer prints the annotations (``--format github``). Server text in them is
made safe for the format (XML escaping without the characters XML 1.0 forbids; the workflow-command
escapes), on top of the one-line, masked text the result already holds.
"""

from __future__ import annotations

import os
import re
from xml.sax.saxutils import escape, quoteattr

from orbmcp.commands.results.check import CheckedServer, CheckReport, RequiredTool, SmokeCall

# Characters XML 1.0 cannot carry at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
SUITE = "orbmcp check"


def _x(text: str) -> str:
    return escape(_NOT_XML.sub("\ufffd", text))


def _attr(text: str) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", text))


def _case(classname: str, name: str, seconds: float, body: str = "") -> str:
    head = f'    <testcase classname={_attr(classname)} name={_attr(name)} time="{seconds:.3f}"'
    return f"{head}>\n{body}    </testcase>" if body else f"{head}/>"


def _failure(kind: str, message: str, details: str) -> str:
    return f"      <failure type={_attr(kind)} message={_attr(message)}>{_x(details)}</failure>\n"


def _server_case(s: CheckedServer) -> tuple[str, str]:
    """(testcase, outcome) with outcome one of pass, failure, skipped."""
    body = ""
    outcome = "pass"
    if s.verdict == "disabled":
        body = f"      <skipped message={_attr('disabled in the configuration')}/>\n"
        outcome = "skipped"
    elif not s.ok:
        row = s.row
        details = "\n".join(x for x in (s.problem, f"hint: {row.hint}" if row.hint else None) if x)
        body = _failure(s.verdict, s.problem or s.verdict, details)
        outcome = "failure"
    if s.stderr:
        body += f"      <system-err>{_x(chr(10).join(s.stderr))}</system-err>\n"
    return _case("orbmcp.servers", s.name, s.seconds, body), outcome


def _tool_case(r: RequiredTool) -> tuple[str, str]:
    if r.found:
        return _case("orbmcp.tools", r.spec, 0.0), "pass"
    problem = r.problem or r.spec
    return _case("orbmcp.tools", r.spec, 0.0, _failure("missing", problem, problem)), "failure"


def _call_case(c: SmokeCall) -> tuple[str, str]:
    out = f"      <system-out>{_x(c.output)}</system-out>\n" if c.output else ""
    if c.ok:
        return _case("orbmcp.calls", c.spec, c.seconds, out), "pass"
    failure = _failure("call", c.problem or c.spec, c.failure or "")
    return _case("orbmcp.calls", c.spec, c.seconds, failure + out), "failure"


def _lock_cases(report: CheckReport) -> list[tuple[str, str]]:
    """``--lock``: one testcase per server compared, a failure per tool changed since the lock."""
    if report.lock_file is None:
        return []
    cases = []
    for c in report.lock_changes:
        details = "\n".join([*c.description_diff, *c.schema_changes])
        message = f"tool {c.kind} since the lock: {c.server}/{c.tool}"
        cases.append(
            (_case("orbmcp.lock", f"{c.server}/{c.tool}", 0.0, _failure("lock", message, details)), "failure")
        )
    changed = {c.server for c in report.lock_changes}
    cases += [
        (_case("orbmcp.lock", s.name, 0.0), "pass")
        for s in report.servers
        if s.verdict == "ok" and s.name not in changed
    ]
    return cases


def junit_xml(report: CheckReport, *, timestamp: str, hostname: str = "localhost") -> str:
    """One testcase per server, per required tool and per smoke call (JUnit/Ant format, as
    GitHub's and GitLab's test reporters read it)."""
    cases = [_server_case(s) for s in report.servers]
    cases += [_tool_case(r) for r in report.required]
    cases += [_call_case(c) for c in report.calls]
    cases += _lock_cases(report)
    for note in report.notes:
        cases.append((_case("orbmcp.check", note, 0.0, _failure("check", note, note)), "failure"))
    failures = sum(1 for _, o in cases if o == "failure")
    skipped = sum(1 for _, o in cases if o == "skipped")
    # Wall time: the servers connect at once, so the sum of their times would overstate the run.
    seconds = report.seconds
    counts = f'tests="{len(cases)}" failures="{failures}" errors="0" skipped="{skipped}" time="{seconds:.3f}"'
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<testsuites name={_attr(SUITE)} {counts}>",
        f"  <testsuite name={_attr(SUITE)} {counts} timestamp={_attr(timestamp)} hostname={_attr(hostname)}>",
        *(case for case, _ in cases),
        "  </testsuite>",
        "</testsuites>",
    ]
    return "\n".join(lines) + "\n"


# ---- GitHub Actions ---------------------------------------------------------------------------


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _in_repository(file: str, workdir: str | None) -> str:
    """``file`` relative to the step's directory when it is under it, else as it is."""
    if workdir is None:
        return file
    relative = os.path.relpath(file, workdir)
    return file if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def github_annotations(report: CheckReport) -> list[str]:
    """``::error`` workflow commands, one per problem (with its file when it is a config problem),
    and a ``::notice`` for disabled servers."""
    out: list[str] = []
    for s in report.servers:
        if s.verdict == "disabled":
            title = _gh_property("orbmcp check: " + s.name)
            out.append(f"::notice title={title}::disabled in the configuration: skipped")
            continue
        if s.problem is None:
            continue
        props = f"title={_gh_property('orbmcp check: ' + s.name)}"
        if s.row.unavailable and s.row.file:
            props = f"file={_gh_property(_in_repository(s.row.file, report.workdir))}," + props
        hint = f" (hint: {s.row.hint})" if s.row.hint else ""
        out.append(f"::error {props}::{_gh_data(s.problem + hint)}")
    problems = [r.problem for r in report.required] + [c.problem for c in report.calls] + list(report.notes)
    problems += [f"tool {c.kind} since the lock: {c.server}/{c.tool}" for c in report.lock_changes]
    out += [f"::error title=orbmcp check::{_gh_data(p)}" for p in problems if p]
    return out


# Markdown that could turn server text into an image, a link, a tag or formatting: each such
# character is backslash-escaped (GFM honours that for any ASCII punctuation); HTML's three are
# entities, so no tag or comment survives.
_MD_SPECIAL = re.compile(r"[\\`*_\[\]!|~{}()#+\-.:]")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def _md(text: str) -> str:
    """Server-controlled text as inert Markdown for one table cell: shown, never interpreted."""
    flat = re.sub(r"[\r\n]+", " ", text)
    escaped = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), flat)
    return re.sub("[&<>]", lambda m: _HTML[m.group(0)], escaped)


def _code(text: str) -> str:
    """``text`` as a code span in a table cell: its fence is longer than any run of backticks in it
    (so a backtick cannot close it early); HTML and Markdown inside a code span are literal. Only
    the pipe needs its escape there, or it would split the table cell."""
    flat = re.sub(r"[\r\n]+", " ", text).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def step_summary(report: CheckReport) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: the verdict and a table of every check."""
    mark = {True: "✅", False: "❌"}
    lines = [f"### {_md(report.verdict_line)}", "", "| check | result | details |", "|---|---|---|"]
    for s in report.servers:
        icon = "⏭️" if s.verdict == "disabled" else mark[s.ok]
        details = s.row.error or ""
        if s.row.hint and not s.ok:
            details += f" — {s.row.hint}"
        lines.append(f"| server {_code(s.name)} | {icon} {s.verdict} | {_md(details)} |")
    for r in report.required:
        lines.append(f"| tool {_code(r.spec)} | {mark[r.found]} | {'' if r.found else 'missing'} |")
    for c in report.calls:
        lines.append(f"| call {_code(c.spec)} | {mark[c.ok]} | {_md(c.failure or '')} |")
    for change in report.lock_changes:
        fields = ", ".join(change.fields)
        lines.append(
            f"| lock {_code(change.server + '/' + change.tool)} | ❌ {change.kind} | {_md(fields)} |"
        )
    lines += [f"| {_md(n)} | ❌ | |" for n in report.notes]
    return "\n".join(lines) + "\n"
