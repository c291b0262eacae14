"""Every example command of the README, the man page and the ``--help`` epilogs runs, for real.

They name ``everything``: ``@modelcontextprotocol/server-everything`` from npm (installed into a
cache directory, as the conformance suite's Node packages are; the test skips, saying why, where
npm or the registry is missing). A renamed tool or argument then breaks the build, not the user.
The README's CI snippets (GitHub Actions, GitLab CI) run too: their ``orbmcp`` lines, in a
checkout-like directory, with the JUnit report and the step summary they promise.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from orbmcp.commands.table import COMMANDS
from tests.cli import run_cli
from tests.servers.npm import npm_server

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAN_PAGE = ROOT / "man" / "orbmcp.1"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
# Lines of the fresh-machine section install orbmcp or run the whole suite: CI runs those itself.
NOT_EXAMPLES = ("python3 -m venv",)
ASSIGNMENT = re.compile(r"^([A-Z_]+)=(\S.*)$")


@dataclass(frozen=True)
class Example:
    source: str  # where it is documented
    line: str  # the command as documented

    def argv_and_stdin(self) -> tuple[list[str], str]:
        """``orbmcp ARGS`` (or ``echo TEXT | orbmcp ARGS``) as argv after the program, and stdin."""
        words = shlex.split(self.line, comments=True)
        stdin = ""
        if "|" in words:
            left, right = words[: words.index("|")], words[words.index("|") + 1 :]
            assert left[:1] == ["echo"], f"{self.source}: only `echo ... | orbmcp` pipes are supported"
            stdin, words = " ".join(left[1:]) + "\n", right
        assert words[:1] == ["orbmcp"], f"{self.source}: not an orbmcp command: {self.line}"
        assert "$" not in self.line, f"{self.source}: a variable the block does not set: {self.line}"
        return words[1:], stdin


def readme_examples() -> list[Example]:
    """Every line of a README code block that runs orbmcp (CI snippets: their run lines)."""
    found: list[Example] = []
    for lang, body in FENCE.findall(README.read_text(encoding="utf-8")):
        variables: dict[str, str] = {}  # `NAME="value"` lines of the block, as a shell would
        for raw in body.splitlines():
            line = raw.strip()
            if lang == "yaml":
                line = re.sub(r"^-\s+(run:\s+)?", "", line)
            if assignment := ASSIGNMENT.match(line):
                variables[assignment[1]] = shlex.split(assignment[2], comments=True)[0]
                continue
            line = _expanded(line, variables)
            if line.startswith(NOT_EXAMPLES) or not re.match(r"^(orbmcp |echo .*\| orbmcp )", line):
                continue
            found.append(Example(f"README ({lang or 'text'} block)", line))
    return found


def _expanded(line: str, variables: dict[str, str]) -> str:
    return re.sub(r"\$(\w+)", lambda m: variables.get(m[1], m[0]), line)


def man_examples() -> list[Example]:
    text = MAN_PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"^Example:\n\.RS\n\.nf\n(.*?)\n\.fi", text, re.DOTALL | re.MULTILINE)
    return [Example("man page", block.replace("\\-", "-").replace("\\\\", "\\")) for block in blocks]


def help_examples() -> list[Example]:
    found: list[Example] = []
    for spec in COMMANDS:
        if not spec.examples:
            continue
        shown = run_cli(*spec.path, "--help")
        assert shown.code == 0, shown.stderr
        epilog = shown.stdout.split("Examples:", 1)[1]
        lines = [
            line.strip() for line in epilog.splitlines() if line.strip().startswith(("orbmcp ", "echo "))
        ]
        assert lines, f"orbmcp {spec.name} --help shows no example"
        found += [Example(f"orbmcp {spec.name} --help", line) for line in lines]
    return found


def _ordered(examples: list[Example]) -> Iterator[Example]:
    """Each command once, the session-daemon ones last (they change how later commands run)."""
    seen: set[str] = set()
    for daemon_last in (False, True):
        for example in examples:
            is_daemon = example.line.startswith("orbmcp daemon")
            if is_daemon == daemon_last and example.line not in seen:
                seen.add(example.line)
                yield example


@pytest.fixture
def everything() -> dict[str, object]:
    server, why = npm_server()
    if server is None:
        pytest.skip(f"server-everything from npm is not available: {why}")
    return server.entry()


def test_every_documented_example_is_collected() -> None:
    readme, man, shown = readme_examples(), man_examples(), help_examples()
    assert len(readme) >= 9 and any("--junit" in e.line for e in readme)
    # The man page and --help print the same examples: both come from the command table.
    assert [e.line for e in man] == [e.line for e in shown]
    assert {e.line for e in man} == {example for spec in COMMANDS for example in spec.examples}


@pytest.mark.slow
def test_every_documented_example_runs(tmp_path: Path, everything: dict[str, object]) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    config = {"mcpServers": {"everything": everything}}
    (agent / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / ".orb").mkdir()
    (tmp_path / ".orb" / "ci.json").write_text(json.dumps(config), encoding="utf-8")
    summary = tmp_path / "step-summary.md"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "ORB_AGENT_DIR": str(agent),
        "ORBMCP_NO_DAEMON": "",
        "GITHUB_STEP_SUMMARY": str(summary),
        "NO_COLOR": "1",
        "CI": "true",
    }
    examples = list(_ordered(readme_examples() + man_examples() + help_examples()))
    ran: list[str] = []
    try:
        for example in examples:
            argv, stdin = example.argv_and_stdin()
            result = run_cli(*argv, env=env, cwd=tmp_path, stdin=stdin)
            assert result.code == 0, (
                f"{example.source}: `{example.line}` exited {result.code}:\n{result.stderr}"
            )
            assert "error" not in result.stderr.lower(), (
                f"{example.source}: `{example.line}`: {result.stderr}"
            )
            ran.append(example.line)
    finally:
        run_cli("daemon", "stop", env=env, cwd=tmp_path)
    assert "orbmcp call everything get-sum a=2 b=3" in ran
    # The CI snippets' reports: the JUnit file and GitHub's step summary.
    junit = (tmp_path / "orbmcp-junit.xml").read_text(encoding="utf-8")
    assert '<testcase classname="orbmcp.servers" name="everything"' in junit and "<failure" not in junit
    assert "check passed" in summary.read_text(encoding="utf-8")
