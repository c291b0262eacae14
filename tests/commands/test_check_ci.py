"""`orbmcp check` for CI: every configured entry counts, reports CI systems read, smoke calls.

Real servers (raw.py over stdio), the CLI in-process. The JUnit report is validated against an
XML Schema of the JUnit/Ant format GitHub's and GitLab's test reporters read (written here from
that format's rules: a testsuites root, suites of testcases, at most one skipped/failure/error
per case, then system-out/system-err; counts and times typed).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from tests.cli import CliResult, run_cli
from tests.core.live import cli_env, raw_entry, write_config

JUNIT_XSD = """<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
  <xs:simpleType name="seconds">
    <xs:restriction base="xs:decimal"><xs:minInclusive value="0"/></xs:restriction>
  </xs:simpleType>
  <xs:complexType name="outcome">
    <xs:simpleContent>
      <xs:extension base="xs:string">
        <xs:attribute name="message" type="xs:string"/>
        <xs:attribute name="type" type="xs:string"/>
      </xs:extension>
    </xs:simpleContent>
  </xs:complexType>
  <xs:complexType name="testcase">
    <xs:sequence>
      <xs:choice minOccurs="0">
        <xs:element name="skipped" type="outcome"/>
        <xs:element name="error" type="outcome"/>
        <xs:element name="failure" type="outcome"/>
      </xs:choice>
      <xs:element name="system-out" type="xs:string" minOccurs="0"/>
      <xs:element name="system-err" type="xs:string" minOccurs="0"/>
    </xs:sequence>
    <xs:attribute name="name" type="xs:string" use="required"/>
    <xs:attribute name="classname" type="xs:string" use="required"/>
    <xs:attribute name="time" type="seconds" use="required"/>
  </xs:complexType>
  <xs:attributeGroup name="counts">
    <xs:attribute name="name" type="xs:string" use="required"/>
    <xs:attribute name="tests" type="xs:nonNegativeInteger" use="required"/>
    <xs:attribute name="failures" type="xs:nonNegativeInteger" use="required"/>
    <xs:attribute name="errors" type="xs:nonNegativeInteger" use="required"/>
    <xs:attribute name="skipped" type="xs:nonNegativeInteger"/>
    <xs:attribute name="time" type="seconds"/>
  </xs:attributeGroup>
  <xs:element name="testsuites">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="testsuite" maxOccurs="unbounded">
          <xs:complexType>
            <xs:sequence>
              <xs:element name="testcase" type="testcase" minOccurs="0" maxOccurs="unbounded"/>
            </xs:sequence>
            <xs:attributeGroup ref="counts"/>
            <xs:attribute name="timestamp" type="xs:dateTime" use="required"/>
            <xs:attribute name="hostname" type="xs:string" use="required"/>
          </xs:complexType>
        </xs:element>
      </xs:sequence>
      <xs:attributeGroup ref="counts"/>
    </xs:complexType>
  </xs:element>
</xs:schema>
"""
SCHEMA = xmlschema.XMLSchema(JUNIT_XSD)


def check(config: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> CliResult:
    return run_cli("--config", str(config), "check", *args, env=cli_env(env), cwd=cwd)


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A ready server, one skipped for an unset variable, one invalid, one disabled."""
    return write_config(
        tmp_path / "ci.json",
        {
            "ok": raw_entry(),
            "gh": raw_entry(env={"TOKEN": "${ORB_TEST_UNSET_GITHUB_TOKEN}"}),
            "typo": {"comand": "x"},
            "off": raw_entry(enabled=False),
        },
    )


def test_every_entry_counts_and_a_skipped_one_fails_with_its_name(mixed: Path) -> None:
    result = check(mixed, "--json")
    assert result.code == 3, result.stderr  # an invalid entry: the configuration is wrong
    body = result.json()
    verdicts = {s["name"]: (s["verdict"], s["ok"]) for s in body["servers"]}
    assert verdicts == {
        "ok": ("ok", True),
        "off": ("disabled", True),
        "typo": ("invalid", False),
        "gh": ("skipped", False),
    }
    gh = next(s for s in body["servers"] if s["name"] == "gh")
    assert gh["file"] == str(mixed) and "${ORB_TEST_UNSET_GITHUB_TOKEN} is not set" in gh["lastError"]
    assert gh["hint"].startswith("set ORB_TEST_UNSET_GITHUB_TOKEN in the environment")
    typo = next(s for s in body["servers"] if s["name"] == "typo")
    assert typo["hint"] == "'comand' — did you mean 'command'?"
    assert body["ok"] is False and body["exitCode"] == 3
    assert [p.split(":")[0] for p in body["problems"]] == ["typo", "gh"]

    # Without the invalid entry the skipped one still fails the check: exit 1, its name said.
    config = json.loads(mixed.read_text())
    del config["mcpServers"]["typo"]
    mixed.write_text(json.dumps(config))
    plain = check(mixed)
    assert plain.code == 1
    lines = plain.stdout.splitlines()
    assert lines[0].split()[:2] == ["ok", "ok"]
    assert any(line.split()[:3] == ["gh", "skipped", "skipped:"] for line in lines)
    assert any(line.split()[:2] == ["off", "disabled"] for line in lines)
    assert lines[-1] == "check FAILED (1 problem): 1 of 3 servers ready, 1 disabled, 1 skipped"
    assert "  - gh: skipped in " in plain.stdout

    # With the variable set, the same entry passes.
    ok = check(mixed, env={"ORB_TEST_UNSET_GITHUB_TOKEN": "t0ken-value"})
    assert ok.code == 0, ok.stdout
    assert ok.stdout.splitlines()[-1] == "check passed: 2 of 3 servers ready, 1 disabled"


def test_a_named_disabled_server_is_checked(mixed: Path) -> None:
    result = check(mixed, "off", "--json")
    assert result.code == 0, result.stderr
    assert [(s["name"], s["verdict"]) for s in result.json()["servers"]] == [("off", "ok")]
    assert check(mixed, "off").stdout.splitlines()[-1] == "check passed: 1 of 1 server ready"


def test_an_untrusted_project_server_fails_the_check_naming_the_fix(tmp_path: Path) -> None:
    agent = Path(cli_env()["ORB_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    write_config(agent / "mcp.json", {"ok": raw_entry()})
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    write_config(project / ".orb" / "mcp.json", {"p": raw_entry()})
    result = run_cli("check", "--json", cwd=project, env=cli_env())
    assert result.code == 1
    p = next(s for s in result.json()["servers"] if s["name"] == "p")
    assert (p["verdict"], p["source"]) == ("untrusted", "project")
    assert p["hint"] == "review and approve the project's servers: `orbmcp trust`"


def test_junit_report_validates_and_carries_failures_and_the_stderr_tail(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "ci.json",
        {
            "ok": raw_entry("--stderr-lines", "2"),
            "crashy": raw_entry("--die-at", "start"),
            "off": raw_entry(enabled=False),
        },
    )
    report = tmp_path / "reports" / "junit.xml"
    report.parent.mkdir()
    result = check(config, "--require-tool", "ok/echo", "--require-tool", "ok/nope", "--junit", str(report))
    assert result.code == 1
    assert f"JUnit report: {report}" in result.stdout
    SCHEMA.validate(str(report))  # raises on any violation of the schema
    root = ET.parse(report).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("5", "2", "1")
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert set(cases) == {
        ("orbmcp.servers", "ok"),
        ("orbmcp.servers", "crashy"),
        ("orbmcp.servers", "off"),
        ("orbmcp.tools", "ok/echo"),
        ("orbmcp.tools", "ok/nope"),
    }
    crash = cases[("orbmcp.servers", "crashy")]
    failure = crash.find("failure")
    assert failure is not None and failure.get("type") == "failed"
    assert "exited with code 3 while connecting" in (failure.get("message") or "")
    assert crash.findtext("system-err") == "fatal: missing API_KEY"
    ok_err = cases[("orbmcp.servers", "ok")].findtext("system-err") or ""
    assert "Bearer <redacted>" in ok_err and "SECRET123" not in ok_err  # masked like status NAME
    assert cases[("orbmcp.servers", "off")].find("skipped") is not None
    assert cases[("orbmcp.tools", "ok/nope")].find("failure") is not None
    # Wall times: a failed server's case carries the time its connection took, and the suite's
    # time covers every case (the servers connect at once: it is no sum of theirs).
    times = {key: float(case.get("time") or "nan") for key, case in cases.items()}
    assert times[("orbmcp.servers", "crashy")] > 0 and times[("orbmcp.servers", "ok")] > 0
    assert float(suite.get("time") or "nan") >= max(times.values())
    assert root.get("time") == suite.get("time")


def test_the_junit_suite_time_is_the_checks_wall_time() -> None:
    from orbmcp.commands.results.check import CheckedServer, CheckReport
    from orbmcp.commands.results.check_formats import junit_xml
    from orbmcp.commands.results.status import StatusRow, ToolCounts

    def server(name: str, state: str) -> CheckedServer:
        row = StatusRow(name, "eager", state, ToolCounts(0, 0), "-", "config", error="boom")
        return CheckedServer(row, "ok" if state == "ready" else "failed", seconds=1.5)

    report = CheckReport((server("a", "ready"), server("b", "failed")), seconds=1.75)
    root = ET.fromstring(junit_xml(report, timestamp="2026-01-02T03:04:05"))
    assert root.get("time") == "1.750"
    assert [c.get("time") for c in root.iter("testcase")] == ["1.500", "1.500"]


def test_github_format_annotates_and_appends_a_step_summary(mixed: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    result = check(mixed, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.code == 3
    # Run in the repository (the config under it), the annotation names the file as GitHub does.
    inside = check(mixed, "--format", "github", cwd=mixed.parent)
    assert f"::error file={mixed.name},title=orbmcp check%3A gh::" in inside.stdout
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert annotations[0] == "::notice title=orbmcp check%3A off::disabled in the configuration: skipped"
    gh = next(a for a in annotations if "orbmcp check%3A gh" in a)
    assert gh.startswith(
        f"::error file={str(mixed).replace(':', '%3A')},title=orbmcp check%3A gh::gh: skipped"
    )
    assert "(hint: set ORB_TEST_UNSET_GITHUB_TOKEN" in gh
    text = summary.read_text()
    assert text.startswith("earlier step\n### check FAILED")  # appended, as every step does
    assert "| server `gh` | ❌ skipped |" in text and "| server `off` | ⏭️ disabled |" in text


def test_smoke_calls_and_their_expectations(tmp_path: Path) -> None:
    config = write_config(tmp_path / "ci.json", {"raw": raw_entry("--rich-tool")})
    passed = check(
        config,
        "--call",
        "raw/echo text=hello --expect ell",
        "--call",
        'raw/configure mode=fast --expect-json \'content[0].text={"mode": "fast"}\'',
        "--json",
    )
    assert passed.code == 0, passed.stdout
    calls = passed.json()["calls"]
    assert [(c["call"].split()[0], c["ok"], c["output"]) for c in calls] == [
        ("raw/echo", True, "hello"),
        ("raw/configure", True, '{"mode": "fast"}'),
    ]
    single = check(config, "--call", "raw/echo text=hi", "--expect", "bye")
    assert single.code == 1
    assert "raw/echo text=hi  FAILED: the output does not contain 'bye'" in single.stdout
    wrong_path = check(config, "--call", "raw/echo text=hi", "--expect-json", "structuredContent.x=1")
    assert wrong_path.code == 1 and "the result has no 'structuredContent.x'" in wrong_path.stdout
    typo = check(config, "--call", "raw/echo txt=hi", "--json")
    assert typo.code == 1
    assert typo.json()["calls"][0]["error"].startswith("unknown argument 'txt' — did you mean 'text'?")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--call", "raw/echo a=1", "--call", "raw/echo b=2", "--expect", "x"), "apply to the one --call"),
        (("--call", "echo-without-server"), "expected SERVER/TOOL"),
        (("--call", "raw/echo --expect"), "--expect needs a value"),
        (("--call", "raw/echo", "--expect-json", "nothing"), "expected PATH=VALUE"),
        (("--wait", "soon"), "--wait: expected a positive duration"),
        (("--timeout", "0"), "--timeout: expected a positive duration"),
        (("--format", "xml"), "--format: expected one of text, github, got 'xml'"),
        (("--format", "json"), "hint: JSON is --json"),
        (("--call", "nope/echo"), "unknown server 'nope'"),
    ],
)
def test_usage_errors_are_caught_before_connecting(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    config = write_config(tmp_path / "ci.json", {"raw": raw_entry()})
    result = check(config, *args)
    assert result.code == 2 and message in result.stderr


def test_wait_retries_a_server_until_it_is_ready(tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    config = write_config(tmp_path / "ci.json", {"slow": raw_entry("--fail-first", f"2:{starts}")})
    first = check(config, "--json")
    assert first.code == 1 and first.json()["servers"][0]["verdict"] == "failed"
    starts.unlink()
    waited = check(config, "--wait", "60s", "--json")
    assert waited.code == 0, waited.stdout
    assert starts.read_text().splitlines() == ["start"] * 3  # two failed starts, then the ready one


def test_timeout_bounds_each_connection_attempt_and_each_call(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "ci.json",
        {"hung": raw_entry("--hang", timeoutMs=60000), "raw": raw_entry(requestTimeoutMs=60000)},
    )
    result = check(config, "--timeout", "1s", "--call", "raw/never", "--json")
    assert result.code == 1
    body = result.json()
    hung = next(s for s in body["servers"] if s["name"] == "hung")
    assert hung["lastError"].startswith("server 'hung' did not become ready within 1000 ms")
    assert "did not answer" in body["calls"][0]["error"] or "timed out" in body["calls"][0]["error"]


def test_no_server_at_all_fails(tmp_path: Path) -> None:
    result = check(write_config(tmp_path / "ci.json", {}), "--json")
    assert result.code == 1 and result.json()["problems"] == ["no server to check"]


def test_reports_of_calls_and_notes_with_hostile_text() -> None:
    from orbmcp.commands.handlers.smoke import lookup
    from orbmcp.commands.results.check import CheckReport, RequiredTool, SmokeCall
    from orbmcp.commands.results.check_formats import github_annotations, junit_xml, step_summary

    calls = (
        SmokeCall("s/t a=1", "s", "t", True, None, "out\x1b[31m"),
        SmokeCall("s/t b=2", "s", "t", False, "the output does not contain 'x|y'\ninjected", "o"),
    )
    report = CheckReport((), (RequiredTool("s/t", True),), calls, notes=("no server to check",))
    xml = junit_xml(report, timestamp="2026-01-02T03:04:05")
    SCHEMA.validate(xml)
    root = ET.fromstring(xml)
    assert (root.get("tests"), root.get("failures")) == ("4", "2")
    outs = [c.findtext("system-out") for c in root.iter("testcase") if c.get("classname") == "orbmcp.calls"]
    assert outs == ["out\ufffd[31m", "o"]  # a control character XML cannot carry is replaced
    annotations = github_annotations(report)
    assert annotations == [
        "::error title=orbmcp check::call s/t b=2: the output does not contain 'x|y'%0Ainjected",
        "::error title=orbmcp check::no server to check",
    ]
    summary = step_summary(report)
    assert "| call `s/t b=2` | ❌ | the output does not contain 'x\\|y' injected |" in summary
    assert "| tool `s/t` | ✅ |  |" in summary and "| no server to check | ❌ | |" in summary

    document = {"content": [{"text": "a"}], "structuredContent": {"n": 1}}
    assert lookup(document, "$.content[0].text") == "a"
    assert lookup(document, "structuredContent.n") == 1
    missing = lookup(document, "content[3].text")
    assert missing is lookup(document, "content..text") is lookup(document, "nope")


def test_a_junit_file_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    config = write_config(tmp_path / "ci.json", {})
    result = check(config, "--junit", str(tmp_path / "missing-dir" / "j.xml"))
    assert (
        result.code == 2
        and "--junit" in result.stderr
        and "not a file in an existing directory" in result.stderr
    )


def test_the_step_summary_shows_server_text_and_never_renders_it() -> None:
    from markdown_it import MarkdownIt

    from orbmcp.commands.results.check import CheckReport, RequiredTool, SmokeCall
    from orbmcp.commands.results.check_formats import step_summary

    hostile = "![pixel](https://evil.example/p.png) <img src=x onerror=alert(1)> `tick` **b** [l](https://e.example) <!--"
    calls = (SmokeCall("s/t`` a=<b>", "s", "t", False, hostile, ""),)
    report = CheckReport((), (RequiredTool("s/`x`|y", False),), calls, notes=("<script>x</script>",))
    summary = step_summary(report)
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(summary)  # raw HTML on
    assert "<img" not in html and "<a " not in html and "<script" not in html and "<!--" not in html
    assert "<strong>" not in html and "<b>" not in html
    # ... and every word of it is still there to read, as text.
    assert "![pixel](https://evil.example/p.png) &lt;img src=x onerror=alert(1)&gt;" in html
    assert "s/t`` a=&lt;b&gt;" in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<td>" in html and html.count("<tr>") == 4  # the table holds: no cell was split or closed
