"""orbmcp's environment variables: one reader, one rule per variable, never a ``.env`` file."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from orbmcp import environment

PACKAGE = Path(__file__).resolve().parent.parent / "orbmcp"
# A string that is exactly a variable name is a read of it (``environ.get("X")``, ``envvar="X"``);
# longer texts (help, hints, "ORBMCP_DEBUG=1 orbmcp status") only mention one.
_VARIABLE = re.compile(r"(?:ORBMCP_[A-Z_]+|ORB_[A-Z_]+|NO_COLOR|CI)")


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in environment.VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_unset_and_empty_mean_the_same() -> None:
    empty = dict.fromkeys(environment.VARIABLES, "")
    for environ in (None, {}, empty):
        assert environment.global_dir(environ) is None
        assert environment.config_file(environ) is None
        assert environment.project_dir(environ) is None
        assert environment.debug(environ) is False
        assert environment.no_color(environ) is False
        assert environment.ci(environ) is False


def test_paths_are_taken_as_given() -> None:
    environ = {"ORB_AGENT_DIR": "~/agent", "ORBMCP_CONFIG": "ci/mcp.json", "ORBMCP_PROJECT": "/p"}
    assert environment.global_dir(environ) == Path("~/agent")
    assert environment.config_file(environ) == Path("ci/mcp.json")
    assert environment.project_dir(environ) == Path("/p")


@pytest.mark.parametrize(
    ("value", "on"),
    [("1", True), (" TRUE ", True), ("yes", True), ("on", True), ("0", False), ("maybe", False)],
)
def test_switches(value: str, on: bool) -> None:
    assert environment.debug({"ORBMCP_DEBUG": value}) is on
    assert environment.ci({"CI": value}) is on


def test_no_color_is_any_non_empty_value() -> None:
    assert environment.no_color({"NO_COLOR": "0"}) is True


def test_the_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORBMCP_DEBUG", "1")
    monkeypatch.setenv("ORBMCP_PROJECT", "/proj")
    assert environment.debug() is True
    assert environment.project_dir() == Path("/proj")


def test_a_dotenv_file_in_the_working_directory_is_not_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text("ORBMCP_CONFIG=evil.json\nORB_AGENT_DIR=./state\n")
    monkeypatch.chdir(tmp_path)
    assert (environment.config_file(), environment.global_dir()) == (None, None)


def test_no_other_module_reads_orbmcps_variables() -> None:
    readers: list[str] = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "environment.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and _VARIABLE.fullmatch(node.value)
            ):
                readers.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value}")
    assert readers == [], "read these through orbmcp.environment:\n" + "\n".join(readers)


def test_the_shell_takes_project_and_config_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from orbmcp.frontends.shell_command import run_command
    from orbmcp.session.command_line import parse_program

    monkeypatch.setenv("ORB_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("ORBMCP_PROJECT", str(tmp_path / "project"))
    monkeypatch.setenv("ORBMCP_CONFIG", str(tmp_path / "only.json"))
    (tmp_path / "only.json").write_text("{}")
    # Not cli.main: it ends the process with os._exit once the SDK is loaded, as it is in a test run.
    line = parse_program(["config", "paths", "--json"])
    assert line.invocation is not None
    code = run_command(line.invocation.spec, line.invocation.kwargs, line.options)
    assert code == 0
    paths = json.loads(capsys.readouterr().out)
    assert paths["projectFiles"][0] == str(tmp_path / "project" / ".orb" / "settings.json")
    assert paths["configOverride"] == str(tmp_path / "only.json")
