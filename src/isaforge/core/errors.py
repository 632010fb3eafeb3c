"""The error hierarchy every front end raises.

Each error carries an optional source location; ``str(err)`` is the one line the CLI prints.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A position in a source file: 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


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
