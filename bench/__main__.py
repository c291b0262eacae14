"""Run every benchmark: each ``bench/bench_*.py`` module's ``main(argv)``; exit 1 if any failed."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    here = Path(__file__).resolve().parent
    failed = []
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"bench.{info.name}")
        print(f"== {info.name}", flush=True)
        if module.main(args) != 0:
            failed.append(info.name)
    if failed:
        print(f"over budget: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
