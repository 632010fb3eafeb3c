"""The one instruction record every architecture's disassembler yields.

Shaped like Capstone's ``CsInsn``: ``address`` is a byte address, ``size`` the
instruction's length in bytes, ``bytes`` its encoding as it sits in memory; ``mnemonic`` and
``op_str`` are the two halves of ``text`` as the formatter produced them (never parsed back
out of the text); ``fields`` holds the decoded field values by name. What only one
architecture has (afuc's listing comment, a Tensix word's rotated form, THEIA's lossless
assembly text) goes in ``detail``, an object of that architecture's choosing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Instruction:
    """One decoded instruction word."""

    address: int  # byte address (byte offset in the input, plus any base given)
    size: int  # bytes
    word: int  # the instruction word, as the ISA description numbers its bits
    mnemonic: str  # "add", "ttsetc16", "DIV"; a directive such as ".word" for data
    op_str: str  # the operands as printed, "" if none
    text: str  # the whole instruction as the listing prints it
    name: str | None = None  # the ISA entry it decoded as; None for undecodable data
    fields: dict[str, int] = field(default_factory=dict)
    detail: Any = None  # the architecture's extras, or None
    endian: str = "little"  # byte order of ``bytes``

    @property
    def bytes(self) -> bytes:
        """The encoding as it sits in memory (``size`` bytes)."""
        return self.word.to_bytes(self.size, self.endian)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return self.text


__all__ = ["Instruction"]
