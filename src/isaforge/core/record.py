"""Plain record classes with a dataclass's equality, hash and repr, without ``dataclasses``.

Importing ``dataclasses`` (it imports ``inspect``) and making each class with it cost a
command's start-up more than a small disassembly or assembly: the records on those paths
(:mod:`isaforge.core.isa`, :mod:`isaforge.core.tokens`) derive from these and write their
``__init__`` out; ``_FIELDS`` names the values compared, hashed and shown.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Record:
    """Equality and repr over ``_FIELDS``, as a dataclass has them (these records are plain
    classes: importing ``dataclasses`` and making the classes costs a disassembler's
    start-up more than its work on a small firmware). Unhashable, as a mutable dataclass."""

    _FIELDS: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, n) for n in self._FIELDS])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        args = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS)
        return f"{type(self).__qualname__}({args})"


class Frozen(Record):
    """A :class:`Record` that cannot be changed once made, hashed by its values."""

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} ({type(self).__name__} is "
                             "immutable)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} ({type(self).__name__} is "
                             "immutable)")

    def __hash__(self) -> int:
        return hash(self._values())


__all__ = ["Frozen", "Record"]
