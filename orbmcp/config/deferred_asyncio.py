"""pydantic-settings imported without importing asyncio: a start-up trick, kept because it is measured.

``pydantic_settings.main`` runs ``import asyncio`` at its top for one use, ``CliApp.run`` of an
async command, which orbmcp never calls. asyncio (with ssl, socket, subprocess and
concurrent.futures) costs ~40 ms of CPU, ~0.4x of ``import typer, rich.console``, on every
config-only command (``config show``, ``add``, ...), whose budget is 3x that import (issue 25;
``bench/bench_startup.py``). While ``settings.py`` imports pydantic-settings, ``asyncio`` in
``sys.modules`` is a stand-in whose first attribute read imports the real module; the stand-in
leaves ``sys.modules`` as soon as that import is done, so every other module imports the real
asyncio as usual, and pydantic-settings' own reference reads through to it.

Nothing else is deferred this way: a ``from X import Y`` reads the attribute at once, so only a
plain ``import X`` whose module is not used at import time can wait (``fastpath/__init__.py``
lists the start-up tricks).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _OnFirstUse(types.ModuleType):
    """Stands in for a module not imported yet; reading any attribute imports it."""

    def __getattr__(self, attr: str) -> Any:
        if sys.modules.get(self.__name__) is self:  # read while the stand-in is still in place
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), attr)


@contextmanager
def on_first_use(name: str) -> Iterator[None]:
    """Within the block, ``import <name>`` binds a stand-in instead of importing the module (a
    module already imported is left as it is)."""
    if name in sys.modules:
        yield
        return
    stand_in = _OnFirstUse(name)
    # ``import`` reads the spec (is it still initialising?) without importing anything.
    stand_in.__spec__ = importlib.util.find_spec(name)
    sys.modules[name] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
