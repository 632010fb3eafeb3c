"""A package's public names bound on first use (PEP 562), so that ``import isaforge.<arch>``
costs only what a command needs: ``__getattr__, __dir__ = lazy_names(__name__, globals(),
WHERE)`` where ``WHERE`` maps each name to the module (relative to the package) defining it.
Only ``importlib`` is imported."""

from __future__ import annotations

import importlib

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


__all__ = ["lazy_names"]
