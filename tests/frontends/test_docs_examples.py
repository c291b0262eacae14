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
# Examples that serve until stopped: they are checked to parse (with --help), not run.
SERVES_UNTIL_STOPPED = ("orbmcp serve --http",)
NPX_EVERYTHING = "npx -y @modelcontextprotocol/server-everything"
COMMITTED_LOCK = "tests/mcp-lock.json"


@dataclass(frozen=True)
class Example:
    source: str  # where it is documented
    line: str  # the command as documented
    group: str  # one README block, or one command family's --help: run in order, in a fresh workspace

    def commands(self) -> list[tuple[list[str], str]]:
        """Each ``orbmcp ARGS`` (or ``echo TEXT | orbmcp ARGS``) of the line, ``&&``-chained ones
        in order, as argv after the program and stdin."""
        unset = re.search(r"\$\w+", self.line)  # ${VAR} is orbmcp's own syntax, left as is
        assert unset is None, f"{self.source}: a variable the block does not set: {self.line}"
        words = shlex.split(self.line, comments=True)
        chain: list[list[str]] = [[]]
        for word in words:
            if word == "&&":
                chain.append([])
            else:
                chain[-1].append(word)
        return [self._one(command) for command in chain]

    def _one(self, words: list[str]) -> tuple[list[str], str]:
        stdin = ""
        if "|" in words:
            left, right = words[: words.index("|")], words[words.index("|") + 1 :]
            assert left[:1] == ["echo"], f"{self.source}: only `echo ... | orbmcp` pipes are supported"
            stdin, words = " ".join(left[1:]) + "\n", right
        assert words[:1] == ["orbmcp"], f"{self.source}: not an orbmcp command: {self.line}"
        return words[1:], stdin


def readme_examples() -> list[Example]:
    """Every line of a README code block that runs orbmcp (CI snippets: their run lines)."""
    found: list[Example] = []
    for index, (lang, body) in enumerate(FENCE.findall(README.read_text(encoding="utf-8"))):
        for raw in body.splitlines():
            line = raw.strip()
            if lang == "yaml":
                line = re.sub(r"^-\s+(run:\s+)?", "", line)
            if line.startswith(NOT_EXAMPLES) or not re.match(r"^(orbmcp |echo .*\| orbmcp )", line):
                continue
            found.append(Example(f"README ({lang or 'text'} block)", line, f"readme-{index}"))
    return found


def man_examples() -> list[Example]:
    text = MAN_PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"^Example:\n\.RS\n\.nf\n(.*?)\n\.fi", text, re.DOTALL | re.MULTILINE)
    return [Example("man page", block.replace("\\-", "-").replace("\\\\", "\\"), "man") for block in blocks]


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
        source = f"orbmcp {spec.name} --help"
        found += [Example(source, line, f"help-{spec.path[0]}") for line in lines]
    return found


def _groups(examples: list[Example]) -> dict[str, list[Example]]:
    """Each command once (the man page repeats --help), by group in documented order, the
    session-daemon ones last in their group (they change how later commands run)."""
    seen: set[str] = set()
    groups: dict[str, list[Example]] = {}
    for daemon_last in (False, True):
        for example in examples:
            is_daemon = example.line.startswith("orbmcp daemon")
            if is_daemon == daemon_last and example.line not in seen:
                seen.add(example.line)
                groups.setdefault(example.group, []).append(example)
    return groups


# The quick start adds the server itself, as `npx -y @modelcontextprotocol/server-everything`.
QUICK_START = "orbmcp add everything -- npx -y @modelcontextprotocol/server-everything"


def _workspace(where: Path, everything: dict[str, object], *, configured: bool = True) -> dict[str, str]:
    """A checkout-like directory naming ``everything`` (global config and ``.orb/ci.json``), and
    the environment of a CI job in it: a group's edits (``add``, ``disable``) stay in it.

    ``configured=False``: a fresh account (no config at all), whose ``npx`` runs the pinned
    server-everything from the test cache for exactly the quick start's arguments, so the quick
    start runs the real server without fetching the newest one on every run."""
    agent = where / "agent"
    agent.mkdir(parents=True)
    bin_dir = where / "bin"
    bin_dir.mkdir()
    args = everything["args"]
    assert isinstance(args, list)
    command = " ".join(shlex.quote(str(word)) for word in [everything["command"], *args])
    npx = bin_dir / "npx"
    npx.write_text(
        '#!/bin/sh\n[ "$*" = "-y @modelcontextprotocol/server-everything" ] || '
        f'{{ echo "npx shim: unexpected arguments: $*" >&2; exit 127; }}\nexec {command}\n',
        encoding="utf-8",
    )
    npx.chmod(0o755)
    if configured:
        config = json.dumps({"mcpServers": {"everything": everything}})
        (agent / "mcp.json").write_text(config, encoding="utf-8")
        (where / ".orb").mkdir()
        (where / ".orb" / "ci.json").write_text(config, encoding="utf-8")
    return {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(where),
        "ORB_AGENT_DIR": str(agent),
        "ORBMCP_NO_DAEMON": "",
        "GITHUB_STEP_SUMMARY": str(where / "step-summary.md"),
        "NO_COLOR": "1",
        "CI": "true",
    }


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


def _documented() -> dict[str, list[Example]]:
    return _groups(readme_examples() + help_examples() + man_examples())


# One test per group (a README block, a command family's examples), so workers share them out.
GROUPS = _documented()


def test_the_groups_hold_the_examples_people_copy() -> None:
    lines = {example.line for examples in GROUPS.values() for example in examples}
    assert "orbmcp call everything get-sum a=2 b=3" in lines
    assert "orbmcp disable files" in lines and "orbmcp serve --http 8765" in lines
    quick_start = next(examples for examples in GROUPS.values() if examples[0].line == QUICK_START)
    assert [e.line for e in quick_start] == [
        QUICK_START,
        "orbmcp tools everything",
        "orbmcp call everything echo message=hi",
    ]
    assert any("--junit" in line for line in lines) and any("--format github" in line for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize("group", list(GROUPS))
def test_every_documented_example_runs(group: str, tmp_path: Path, everything: dict[str, object]) -> None:
    examples = GROUPS[group]
    where = tmp_path / group
    env = _workspace(where, everything, configured=examples[0].line != QUICK_START)
    # `--stdio "npx -y ..."` runs the copy the test installed (npx would fetch the package again).
    installed = shlex.join([str(everything["command"]), *map(str, everything["args"])])  # type: ignore[call-overload]
    if any(f"--lock {COMMITTED_LOCK}" in e.line for e in examples):
        # The server author's repository holds its committed lock file.
        pinned = run_cli("lock", "--stdio", installed, "--lock", COMMITTED_LOCK, env=env, cwd=where)
        assert pinned.code == 0, pinned.stderr
    try:
        for example in examples:
            for argv, stdin in example.commands():
                argv = [a.replace(NPX_EVERYTHING, installed) for a in argv]
                if example.line.startswith(SERVES_UNTIL_STOPPED):
                    argv = [*argv, "--help"]
                result = run_cli(*argv, env=env, cwd=where, stdin=stdin)
                assert result.code == 0, (
                    f"{example.source}: `{example.line}` exited {result.code}:\n{result.stderr}"
                )
                assert "error" not in result.stderr.lower(), (
                    f"{example.source}: `{example.line}`: {result.stderr}"
                )
    finally:
        if any(e.line.startswith("orbmcp daemon") for e in examples):
            run_cli("daemon", "stop", env=env, cwd=where)
    # The CI snippets' reports: the JUnit file and GitHub's step summary they promise.
    if any("--junit" in e.line for e in examples):
        junit = (where / "orbmcp-junit.xml").read_text(encoding="utf-8")
        assert "<failure" not in junit
        assert '<testcase classname="orbmcp.servers" name="everything"' in junit
    if any("--format github" in e.line for e in examples):
        assert "check passed" in (where / "step-summary.md").read_text(encoding="utf-8")


def test_the_install_line_runs_the_program_by_its_full_path() -> None:
    """A fresh account has no ``~/.local/bin`` on PATH: the README's first command must not end
    in ``orbmcp: command not found`` (the program then prints the PATH line itself, once)."""
    install = next(
        line
        for _, body in FENCE.findall(README.read_text(encoding="utf-8"))
        for line in body.splitlines()
        if line.startswith("python3 -m venv ~/.local/orbmcp")
    )
    steps = [step.strip() for step in install.split("&&")]
    link = next(step for step in steps if step.startswith("ln -sf"))
    target = link.split()[-1]
    assert steps[-1].split()[0] == target == "~/.local/bin/orbmcp"
