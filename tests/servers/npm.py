"""Third-party MCP servers from npm, installed once into a cache directory shared by test runs.

As ``scripts/conformance.sh`` installs Node packages: ``npm install`` of a pinned version into
``$ORBMCP_NPM_CACHE`` (default ``~/.cache/orbmcp-npm``), reused by later runs and by parallel
workers (a file lock serialises the install). ``npm_server`` returns the command of the server,
or ``None`` with the reason when npm or the registry is not there (tests then skip, saying why).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "ORBMCP_NPM_CACHE"
INSTALL_TIMEOUT_S = 300.0
# Pinned: the examples in the docs must keep running; upgrading the pin re-checks them.
SERVER_EVERYTHING = ("@modelcontextprotocol/server-everything", "2026.8.31", "dist/index.js")
SERVER_FILESYSTEM = ("@modelcontextprotocol/server-filesystem", "2026.8.31", "dist/index.js")


@dataclass(frozen=True)
class NpmServer:
    command: str
    args: tuple[str, ...]

    def entry(self, **extra: object) -> dict[str, object]:
        """A config entry running it over stdio."""
        return {"command": self.command, "args": list(self.args), **extra}


def default_cache_dir() -> Path:
    return Path.home() / ".cache" / "orbmcp-npm"


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else default_cache_dir()


def npm_server(package: tuple[str, str, str] = SERVER_EVERYTHING, *args: str) -> tuple[NpmServer | None, str]:
    """(the server, "") once installed; (None, why not) when it cannot be."""
    name, version, entry_point = package
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        return None, "node and npm are not installed"
    cache = cache_dir()
    script = cache / "node_modules" / name / entry_point
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with (cache / ".install.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not _installed(cache, name, version):
                why = _install(npm, cache, f"{name}@{version}")
                if why:
                    return None, why
    except OSError as exc:
        return None, f"cannot use the npm cache {cache}: {exc}"
    if not script.is_file():
        return None, f"{name}@{version} has no {entry_point}"
    return NpmServer(node, (str(script), *args)), ""


def _installed(cache: Path, name: str, version: str) -> bool:
    manifest = cache / "node_modules" / name / "package.json"
    try:
        import json

        return bool(json.loads(manifest.read_text(encoding="utf-8")).get("version") == version)
    except (OSError, ValueError):
        return False


def _install(npm: str, cache: Path, spec: str) -> str:
    if not (cache / "package.json").exists():
        (cache / "package.json").write_text('{"private": true}\n', encoding="utf-8")
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", spec],
            cwd=cache,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"npm install {spec} took over {INSTALL_TIMEOUT_S:g} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"npm install {spec} failed (is the npm registry reachable?): {last}"
    return ""
