"""Pushing Tensix instructions: ``sw`` to ``INSTRN_BUF_BASE`` (and ``.ttinsn``).

Which thread a push reaches depends on the aperture and the core (tt-isa-documentation,
*Push Tensix Instruction*): TRISC *i* storing to ``INSTRN_BUF_BASE`` pushes to Tensix thread
*i*, before its MOP expander; BRISC storing to ``INSTRN_BUF_BASE + k * INSTRN_BUF_STRIDE``
pushes to thread *k*, after the MOP expander; NCRISC cannot push, and a TRISC storing to the
other two apertures would hang. A ``.ttinsn`` custom instruction (its word is the Tensix word
rotated left by two bits) is exactly a ``sw`` of the Tensix word to ``INSTRN_BUF_BASE``: the
core hands it to this window (:meth:`Core._ttinsn`).
"""

from __future__ import annotations

from .memmap import CoreInfo
from .mmio import Unmodelled, Window


class InstructionPush(Window):
    """One of the three push apertures."""

    def __init__(self, tile: object, base: int, size: int, aperture: int) -> None:
        super().__init__(tile, base, size)
        self.aperture = aperture
        self.name = f"Tensix instruction push {aperture}"

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        if size != 4 or addr != self.base:
            raise Unmodelled(f"{self.name}: {size}-byte store at offset {addr - self.base:#x} "
                             f"(a push is a 32-bit sw to the aperture's base)")
        if core.thread is not None:
            if self.aperture:
                raise Unmodelled(f"{self.name}: a TRISC store here hangs the core on hardware")
            self.tile.tensix_push(core.thread, value, after_mop=False)
        elif core.name == "brisc":
            self.tile.tensix_push(self.aperture, value, after_mop=True)
        else:
            raise Unmodelled(f"{self.name} is not mapped for {core.name}")

    def push_many(self, core: CoreInfo, words: list[int]) -> bool:
        """:meth:`write` of each of ``words`` at the base, at once, when that is plain (a
        TRISC's pushes to aperture 0); False (nothing done) otherwise."""
        if core.thread is None or self.aperture:
            return False
        self.tile.tensix_push_many(core.thread, words)
        return True


__all__ = ["InstructionPush"]
