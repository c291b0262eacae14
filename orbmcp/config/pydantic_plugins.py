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
embedder's process: ``frontends/process_tuning.tune_for_cli`` calls ``leave_out``) gives a stand-in
for that loader module when pydantic imports it (a finder first on ``sys.meta_path``: nothing is
in ``sys.modules`` before pydantic itself is imported, so a fast path that never imports pydantic
shows none of it): it answers "no plugins" and hands any other name on to the real module, so a
pydantic that reads more from it still works.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

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
        _FINDER.aside = True
        try:
            real = importlib.import_module(LOADER)
        finally:
            _FINDER.aside = False
            sys.modules[LOADER] = self  # ...and keep answering "no plugins"
        return getattr(real, attr)


class _StandInFinder:
    """Finds the stand-in for the loader's name (and nothing else); steps aside while the stand-in
    imports the real module. A finder and loader by protocol (``find_spec``, ``create_module``,
    ``exec_module``), not by ``importlib.abc``'s classes: importing those costs ~10 ms on Python
    3.11 (``importlib.resources``, ``tempfile``, the compression modules), more than this trick saves."""

    aside = False

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: object = None
    ) -> ModuleSpec | None:
        if name != LOADER or self.aside:
            return None
        return ModuleSpec(name, cast("Loader", self))

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        return _NoPlugins(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the stand-in is complete as made."""


_FINDER = _StandInFinder()


def leave_out() -> None:
    """From now on this process's pydantic builds models without plugins (a loader imported
    already is left as it is: that process's plugins are loaded)."""
    if LOADER not in sys.modules and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


__all__ = ["leave_out"]
