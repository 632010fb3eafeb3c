"""Binary images of Tensix code: little-endian 32-bit words, in Tensix order or in RISC-V
stream order.

A RISC-V core hands Tensix instructions to its coprocessor through its own instruction
stream, where each Tensix word sits rotated left by 2 (:func:`~isaforge.tensix.isa.rotl2`,
what ``.ttinsn`` emits). A file of Tensix code is either form; the rotation is the caller's
choice (``rotated``). The other input formats have their own modules: objdump listings
(:mod:`.listing`) and PROG.s programs (:mod:`.program`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from ..core.errors import DecodeError
from .isa import rotl2


def words_of(data: bytes | bytearray | Iterable[int], what: str = "input") -> list[int]:
    """Little-endian 32-bit words of ``data`` (bytes), or the words themselves (checked to
    be 32-bit values); a :class:`DecodeError` names ``what`` otherwise."""
    if isinstance(data, (bytes, bytearray)):
        if len(data) % 4:
            raise DecodeError(f"{what}: {len(data)} bytes is not a whole number of 32-bit words")
        return list(struct.unpack(f"<{len(data) // 4}I", bytes(data)))
    out = []
    for i, w in enumerate(data):
        if not 0 <= int(w) <= 0xFFFFFFFF:
            raise DecodeError(f"{what}: word {i} ({w:#x}) is not a 32-bit value")
        out.append(int(w))
    return out


def to_bytes(words: Iterable[int], rotated: bool = False) -> bytes:
    """Tensix words as a little-endian image (``rotated``: in RISC-V stream order)."""
    ws = [rotl2(w) if rotated else w & 0xFFFFFFFF for w in words]
    return struct.pack(f"<{len(ws)}I", *ws)


__all__ = ["to_bytes", "words_of"]
