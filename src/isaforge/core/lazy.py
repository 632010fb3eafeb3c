"""A package's public names bound on first use (PEP 562), so that ``import isaforge.<arch>``
costs only what a command needs: ``__getattr__, __dir__ = lazy_names(__name__, globals(),
WHERE)`` where ``WHERE`` maps each name to the module (relative to the package) defining it.
:func:`functions_over_modules` for a function named as the submodule that defines it.
Only ``importlib`` and ``sys`` are imported."""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_names(package: str, namespace: dict[str, Any],
               where: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: a name of ``where``
    is imported from its module when first asked for, then kept in ``namespace``."""

    def __getattr__(name: str) -> Any:
        mod = where.get(name)
        if mod is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(mod, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__


def functions_over_modules(package: str, names: tuple[str, ...]) -> None:
    """Keep ``package.NAME`` the function ``NAME`` of the submodule ``NAME`` (a package's
    ``listing()`` in its ``listing`` module), however that submodule comes to be imported.

    Importing a submodule binds it as an attribute of its package, after running it: a
    name bound lazily would then be the module once anything imported the submodule
    first. The package's module object is given a class whose attribute assignment binds
    the submodule's function instead (what ``from .NAME import NAME`` at the package's
    start does, without importing the submodule there)."""
    module = sys.modules[package]
    base = type(module)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if name in names and isinstance(value, type(sys)) and value.__name__ == (
                f"{package}.{name}"):
            value = getattr(value, name)
        base.__setattr__(self, name, value)

    module.__class__ = type(base.__name__, (base,), {"__setattr__": __setattr__,
                                                     "__slots__": ()})


__all__ = ["functions_over_modules", "lazy_names"]
