"""The orbmcp program validates with pydantic without pydantic plugins: a start-up trick, measured.

pydantic looks its plugins up when it builds its first model (pydantic-settings builds one as it
is imported): ``pydantic.plugin._loader`` imports ``importlib.metadata`` (with ``email``,
``zipfile``, ``csv``) and scans every installed distribution's entry points. That is ~7 % of every
config-only command (``config show``, ``add``, an empty ``status``: ``bench/bench_startup.py``),
for plugins (validation observability such as logfire) nobody installs into a command-line tool's
environment to watch orbmcp's own config being read.

pydantic's documented switch, ``PYDANTIC_DISABLE_PLUGINS``, skips the scan but not the import, and
as an environment variable it would reach every server orbmcp starts (a stdio server inherits the
environment), turning off the plugins of a server written with pydantic. So the program (never an
embedder's process: ``frontends/process_tuning.tune_for_cli`` calls ``leave_out``) puts a stand-in
for that loader module in ``sys.modules`` before pydantic is imported: it answers "no plugins" and
hands any other name on to the real module, so a pydantic that reads more from it still works.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

LOADER = "pydantic.plugin._loader"


class _NoPlugins(types.ModuleType):
    """Stands in for pydantic's plugin loader: no plugins; any other name from the real module."""

    @staticmethod
    def get_plugins() -> tuple[()]:
        return ()

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # the import system's probes (``__path__``: a package?)
            raise AttributeError(attr)
        del sys.modules[LOADER]  # import the real module under its own name...
        try:
            real = importlib.import_module(LOADER)
        finally:
            sys.modules[LOADER] = self  # ...and keep answering "no plugins"
        return getattr(real, attr)


def leave_out() -> None:
    """From now on this process's pydantic builds models without plugins (a loader imported
    already is left as it is: that process's plugins are loaded)."""
    if LOADER not in sys.modules:
        sys.modules[LOADER] = _NoPlugins(LOADER)


__all__ = ["leave_out"]
