"""The orbmcp program validates without pydantic plugins (``config/pydantic_plugins.py``); an
embedder's process keeps its own. A real plugin is installed for these tests: a distribution on
``PYTHONPATH`` whose ``pydantic`` entry point names a module that records its own import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.config import write
from tests.core.live import isolated_env

REPO = Path(__file__).resolve().parents[2]
PLUGIN = """
class _Plugin:
    def new_schema_validator(self, *args, **kwargs):
        return None, None, None

plugin = _Plugin()
"""
# After the work: which of the plugin, its loader's imports and the stand-in's names were seen.
REPORT = """
import json, sys
print(json.dumps({
    "plugin": "fake_orbmcp_plugin" in sys.modules,
    "metadata": "importlib.metadata" in sys.modules,
}), file=sys.stderr)
"""
PROGRAM = """
import sys
from orbmcp.__main__ import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
"""
EMBEDDER = """
from orbmcp.config.loader import load_config
assert sorted(load_config().servers) == ["files"]
"""


def _installed_plugin(site: Path) -> Path:
    (site / "fake_orbmcp_plugin.py").parent.mkdir(parents=True, exist_ok=True)
    (site / "fake_orbmcp_plugin.py").write_text(PLUGIN)
    info = site / "fake_orbmcp_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-orbmcp-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nfake = fake_orbmcp_plugin:plugin\n")
    return site


def _run(tmp_path: Path, script: str, *argv: str) -> dict[str, bool]:
    config = write(tmp_path / "mcp.json", {"mcpServers": {"files": {"command": "true", "lifecycle": "lazy"}}})
    site = _installed_plugin(tmp_path / "site")
    env = isolated_env(
        {"ORB_AGENT_DIR": str(tmp_path / "agent"), "ORBMCP_CONFIG": str(config)}
        | {"PYTHONPATH": f"{REPO}:{site}", "NO_COLOR": "1", "ORBMCP_NO_DAEMON": "1"}
    )
    result = subprocess.run(
        [sys.executable, "-c", script + REPORT, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    report: dict[str, bool] = json.loads(result.stderr.strip().splitlines()[-1])
    return report


def test_the_program_loads_no_pydantic_plugin_nor_looks_for_one(tmp_path: Path) -> None:
    for argv in (["config", "show"], ["add", "x", "--lazy", "--overwrite", "--", "true"], ["status"]):
        assert _run(tmp_path / argv[0], PROGRAM, *argv) == {"plugin": False, "metadata": False}


def test_an_embedders_process_keeps_its_pydantic_plugins(tmp_path: Path) -> None:
    assert _run(tmp_path, EMBEDDER) == {"plugin": True, "metadata": True}


def test_the_stand_in_answers_no_plugins_and_hands_other_names_to_the_real_loader() -> None:
    script = (
        "import sys\n"
        "from orbmcp.config import pydantic_plugins\n"
        "pydantic_plugins.leave_out()\n"
        "from pydantic.plugin._loader import get_plugins\n"
        "assert tuple(get_plugins()) == ()\n"
        "assert 'importlib.metadata' not in sys.modules\n"
        "from pydantic.plugin._loader import PYDANTIC_ENTRY_POINT_GROUP\n"
        "assert PYDANTIC_ENTRY_POINT_GROUP == 'pydantic'\n"
        "from pydantic.plugin._loader import get_plugins as again\n"
        "assert tuple(again()) == ()\n"  # still the stand-in's answer after the real import
        "from pydantic import BaseModel\n"
        "class M(BaseModel):\n"
        "    x: int\n"
        "assert M(x=1).x == 1\n"
        "pydantic_plugins.leave_out()\n"  # twice: nothing changes
        "assert sys.modules['pydantic.plugin._loader'].get_plugins is again\n"
    )
    env = isolated_env({"PYTHONPATH": str(REPO)})
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr


def test_a_loader_imported_already_is_left_alone() -> None:
    script = (
        "import sys, pydantic.plugin._loader as real\n"
        "from orbmcp.config import pydantic_plugins\n"
        "pydantic_plugins.leave_out()\n"
        "assert sys.modules['pydantic.plugin._loader'] is real\n"
    )
    env = isolated_env({"PYTHONPATH": str(REPO)})
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
