"""Tests of orbmcp.config: shared helpers (plain functions, no fixtures)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from orbmcp.config import trust
from orbmcp.config.loader import load_config
from orbmcp.config.model import ResolvedConfig


def write(path: Path, content: str | Mapping[str, object]) -> Path:
    """Write raw text (JSONC as the user typed it) or an object as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


class RecordingEnv(Mapping[str, str]):
    """An environment that remembers every variable that was looked up."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.data = dict(values or {})
        self.read: list[str] = []

    def __getitem__(self, key: str) -> str:
        self.read.append(key)
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


@dataclass
class Layout:
    """A global dir and a project dir under one temporary root."""

    root: Path
    environ: dict[str, str] = field(default_factory=dict)

    @property
    def global_dir(self) -> Path:
        return self.root / "home" / ".orb" / "agent"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def global_file(self, name: str, content: str | Mapping[str, object]) -> Path:
        return write(self.global_dir / name, content)

    def project_file(self, name: str, content: str | Mapping[str, object]) -> Path:
        return write(self.project / ".orb" / name, content)

    def load(self, **kwargs: object) -> ResolvedConfig:
        options: dict[str, object] = {
            "global_dir": self.global_dir,
            "project": self.project,
            "environ": self.environ,
            "cwd": self.project,
        }
        options.update(kwargs)
        return load_config(**options)  # type: ignore[arg-type]

    def approve(self) -> trust.ProjectReview:
        review = trust.describe_project(self.project)
        trust.approve(self.global_dir, self.project, review.digest)
        return review
