"""The public API leaks no internal type (issue 25 item 8).

Every name in ``orbmcp.host.__all__`` and ``orbmcp.testing.__all__`` is inspected: a function's
annotations; a class's constructor, public methods, properties and annotated fields (dataclass
fields and Protocol members). Each type they mention, followed through unions, generics and the
fields of public dataclasses, must be a builtin, from the standard library or from a third party,
or an orbmcp type the public packages export (or the error tree, ``orbmcp.errors``). An
annotation that only resolves for type checking names an internal type and fails too.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import sys
import typing
from collections.abc import Iterator
from typing import Any

import pytest

PUBLIC_PACKAGES = ("orbmcp.host", "orbmcp.testing")
INTERNAL_NAMES = ("Manager", "ResolvedConfig", "CommandContext", "BridgedTool", "ServerConfig", "HostUI")


def exported() -> dict[int, str]:
    """id -> where it is exported, for every orbmcp object a public package exports."""
    import orbmcp
    import orbmcp.errors

    found: dict[int, str] = {}
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            found[id(getattr(module, name))] = f"{package}.{name}"
    for name in orbmcp.__all__:
        found[id(getattr(orbmcp, name))] = f"orbmcp.{name}"
    for name, value in vars(orbmcp.errors).items():
        if inspect.isclass(value) and issubclass(value, BaseException):
            found[id(value)] = f"orbmcp.errors.{name}"
    return found


def hints_of(obj: Any, where: str) -> Iterator[tuple[str, Any]]:
    # Public names a module imports only for type checking (``Host`` in extension.py) resolve;
    # internal ones do not.
    import orbmcp.errors

    namespace = {k: v for k, v in vars(orbmcp.errors).items() if inspect.isclass(v)}
    namespace |= {name.rsplit(".", 1)[1]: value for name, value in public_names()}
    try:
        hints = typing.get_type_hints(obj, localns=namespace)
    except NameError as exc:
        pytest.fail(f"{where}: an annotation names a type-checking-only (internal) type: {exc}")
    for key, hint in hints.items():
        yield f"{where}[{key}]", hint


def annotations_of(name: str, obj: Any) -> Iterator[tuple[str, Any]]:
    """Every (place, annotation) of one public name."""
    if inspect.isclass(obj):
        yield from hints_of(obj, name)  # fields, Protocol attributes
        for attr, member in vars(obj).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            if isinstance(member, property) and member.fget is not None:
                yield from hints_of(member.fget, f"{name}.{attr}")
            elif isinstance(member, staticmethod | classmethod):
                yield from hints_of(member.__func__, f"{name}.{attr}")
            elif inspect.isfunction(member):
                yield from hints_of(member, f"{name}.{attr}")
    elif inspect.isfunction(obj):
        yield from hints_of(obj, name)
    else:  # a type alias (ProgressCallback) or a constant
        yield name, obj


def orbmcp_types(hint: Any, seen: set[int]) -> Iterator[type]:
    """Every orbmcp class a type mentions, through generics and public dataclasses' fields."""
    if id(hint) in seen:
        return
    seen.add(id(hint))
    for arg in typing.get_args(hint):
        yield from orbmcp_types(arg, seen)
    origin = typing.get_origin(hint)
    if origin is not None:
        yield from orbmcp_types(origin, seen)
    if inspect.isclass(hint) and hint.__module__.split(".")[0] == "orbmcp":
        yield hint
        if dataclasses.is_dataclass(hint):
            for _, field_hint in hints_of(hint, hint.__qualname__):
                yield from orbmcp_types(field_hint, seen)


def public_names() -> list[tuple[str, Any]]:
    names = []
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        names += [(f"{package}.{name}", getattr(module, name)) for name in module.__all__]
    return names


def test_public_signatures_mention_no_internal_type() -> None:
    public = exported()
    leaks: list[str] = []
    for name, obj in public_names():
        for place, hint in annotations_of(name, obj):
            for cls in orbmcp_types(hint, set()):
                if id(cls) not in public:
                    leaks.append(f"{place}: {cls.__module__}.{cls.__qualname__}")
    assert leaks == []


def test_the_check_catches_a_leak() -> None:
    from orbmcp.core.session.manager import Manager

    def leaky(manager: Any) -> None: ...

    leaky.__annotations__ = {"manager": list[Manager | None], "return": None}
    found = [cls for _, hint in annotations_of("leaky", leaky) for cls in orbmcp_types(hint, set())]
    assert Manager in found and id(Manager) not in exported()


def test_the_named_internal_types_and_test_helpers_are_not_exported() -> None:
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        assert not set(module.__all__) & set(INTERNAL_NAMES), package
    import orbmcp.auth.callback

    assert not hasattr(orbmcp.auth.callback, "HeadlessBrowser")  # moved to tests/auth/browser.py


def test_every_exported_name_is_importable_and_documented() -> None:
    for name, obj in public_names():
        assert obj is not None, name
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"{name} has no docstring"
    assert "orbmcp.testing" in sys.modules
