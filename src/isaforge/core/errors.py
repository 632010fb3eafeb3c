"""The error hierarchy every front end raises.

Each error carries an optional source location; ``str(err)`` is the one line the CLI prints.
"""

from __future__ import annotations

from .record import Frozen


class SourceLoc(Frozen):
    """A position in a source file: 1-based line and column (immutable; compares and hashes
    as its three values). A plain class, not a dataclass: every command imports this module,
    and ``dataclasses`` costs more to import than a small disassembly."""

    __slots__ = ("file", "line", "col")
    _FIELDS = __slots__
    file: str
    line: int
    col: int

    def __init__(self, file: str, line: int, col: int) -> None:
        _set(self, "file", file)
        _set(self, "line", line)
        _set(self, "col", col)

    def __reduce__(self) -> tuple[type[SourceLoc], tuple[str, int, int]]:
        return SourceLoc, (self.file, self.line, self.col)  # (slots: no state to set)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


_set = object.__setattr__


class IsaforgeError(Exception):
    """Base class of every error isaforge reports to a user."""

    def __init__(self, message: str, loc: SourceLoc | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc

    def __str__(self) -> str:
        if self.loc is not None:
            return f"{self.loc}: error: {self.message}"
        return f"error: {self.message}"


class DecodeError(IsaforgeError):
    """A word (or file) that cannot be decoded."""


class EncodeError(IsaforgeError):
    """Field values that cannot be encoded (out of range, unknown for this generation)."""

    def __init__(self, message: str, loc: SourceLoc | None = None,
                 field: str | None = None) -> None:
        super().__init__(message, loc)
        self.field = field


class AsmError(IsaforgeError):
    """An assembler syntax or semantic error, with its location."""


class FirmwareError(IsaforgeError):
    """A malformed or unrecognised firmware / program file."""


class EmulationError(IsaforgeError):
    """The machine hit something it cannot execute, or a step limit."""
