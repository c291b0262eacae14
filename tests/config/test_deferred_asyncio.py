"""The stand-in that lets pydantic-settings import without asyncio, on a module of its own."""

from __future__ import annotations

import sys
import types

from orbmcp.config.deferred_asyncio import on_first_use

# A small stdlib module no test imports: what the stand-in defers here.
NAME = "colorsys"


def test_the_stand_in_imports_the_module_on_first_read_and_leaves_sys_modules() -> None:
    sys.modules.pop(NAME, None)
    with on_first_use(NAME):
        stand_in = __import__(NAME)
        assert type(stand_in) is not types.ModuleType and sys.modules[NAME] is stand_in
    assert NAME not in sys.modules  # the block is over: nothing imported it for real
    assert stand_in.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)  # read: the real module
    real = sys.modules[NAME]
    assert type(real) is types.ModuleType and real.rgb_to_hsv is stand_in.rgb_to_hsv


def test_a_read_inside_the_block_imports_the_real_module_there() -> None:
    sys.modules.pop(NAME, None)
    with on_first_use(NAME):
        stand_in = __import__(NAME)
        assert stand_in.hsv_to_rgb(0.0, 0.0, 1.0) == (1.0, 1.0, 1.0)
        assert sys.modules[NAME] is not stand_in
    assert type(sys.modules[NAME]) is types.ModuleType


def test_a_module_already_imported_is_left_alone() -> None:
    import json

    with on_first_use("json"):
        assert __import__("json") is json
    assert sys.modules["json"] is json
