"""Tile control / debug / status registers: ``RISCV_DEBUG_REGS_START_ADDR``.

Modelled (addresses from ``tensix.h`` through the memory map):

* ``SOFT_RESET_0``: which cores are held in reset. Writing it starts a core leaving reset at its
  reset PC and stops one entering it (:meth:`Tile.set_soft_reset`); it reads back. Its value at
  power-on holds every core in reset.
* the reset PCs: ``TRISC<i>_RESET_PC`` with ``TRISC_RESET_PC_OVERRIDE`` (bit *i*),
  ``NCRISC_RESET_PC`` with ``NCRISC_RESET_PC_OVERRIDE`` (bit 0), plain registers the reset logic
  reads.
* the wall clock (*Debug Timestamper*): ``WALL_CLOCK_L`` returns the low half of the tile's cycle
  counter and latches its high half for ``WALL_CLOCK_H``; ``WALL_CLOCK_L + 4`` returns the high
  half directly.
* ``TRISC_PC_BUF_OVERRIDE`` (the PC buffers' override bits) and ``INSTRN_BUF_STATUS`` (bits 4..6:
  thread *i*'s instruction FIFO is empty; bits 0..2: it is not full, always true here).
* registers the firmware programs for power/clock gating and debug features, kept as plain
  storage with no effect on the model: ``DEST_CG_CTRL``, ``CG_CTRL_EN``, ``CG_CTRL_HYST0..2``,
  ``DBG_FEATURE_DISABLE``.

Anything else in the window is not modelled and stops the run.
"""

from __future__ import annotations

from .memmap import CoreInfo, MemoryMap
from .mmio import Unmodelled, Window, word_offset

_STORAGE = ("DEST_CG_CTRL", "CG_CTRL_EN", "CG_CTRL_HYST0", "CG_CTRL_HYST1", "CG_CTRL_HYST2",
            "DBG_FEATURE_DISABLE", "TRISC0_RESET_PC", "TRISC1_RESET_PC", "TRISC2_RESET_PC",
            "TRISC_RESET_PC_OVERRIDE", "NCRISC_RESET_PC", "NCRISC_RESET_PC_OVERRIDE")


class DebugRegs(Window):
    name = "tile control/debug registers"
    volatile = True  # the wall clock

    def __init__(self, tile: object, mm: MemoryMap) -> None:
        base = mm.tensix("RISCV_DEBUG_REGS_START_ADDR")
        super().__init__(tile, base, 0x1000)

        def off(name: str) -> int:
            return (mm.tensix("RISCV_DEBUG_REG_" + name) - base) >> 2
        self.soft_reset = off("SOFT_RESET_0")
        self.clock_l = off("WALL_CLOCK_L")
        self.clock_h = off("WALL_CLOCK_H")
        self.clock_hi_now = self.clock_l + 1
        self.pcbuf_override = off("TRISC_PC_BUF_OVERRIDE")
        self.instrn_status = off("INSTRN_BUF_STATUS")
        #: word index -> register name, for the plain-storage registers
        self.names = {off(n): n for n in _STORAGE}
        self.values = dict.fromkeys(self.names, 0)
        self.latched_hi = 0

    def reg(self, name: str) -> int:
        """The current value of a plain-storage register (reset PCs, overrides, ...)."""
        for w, n in self.names.items():
            if n == name:
                return self.values[w]
        raise KeyError(name)

    def set_reg(self, name: str, value: int) -> None:
        for w, n in self.names.items():
            if n == name:
                self.values[w] = value & 0xFFFFFFFF
                return
        raise KeyError(name)

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        w = word_offset(self, addr, size)
        tile = self.tile
        if w == self.soft_reset:
            return tile.soft_reset
        if w == self.clock_l:
            now = tile.wall_clock(core)
            self.latched_hi = now >> 32
            return now & 0xFFFFFFFF
        if w == self.clock_hi_now:
            return tile.wall_clock(core) >> 32
        if w == self.clock_h:
            return self.latched_hi
        if w == self.pcbuf_override:
            return tile.pcbuf_override
        if w == self.instrn_status:
            return 0x7 | sum(int(tile.tensix_fifo_empty(t)) << (4 + t) for t in range(3))
        if w in self.values:
            return self.values[w]
        raise Unmodelled(f"{self.name}: register at offset {w * 4:#x} is not modelled")

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        w = word_offset(self, addr, size)
        tile = self.tile
        value &= 0xFFFFFFFF
        if w == self.soft_reset:
            tile.set_soft_reset(value, by=core.name)
        elif w == self.clock_l:
            self.latched_hi = tile.wall_clock(core) >> 32
        elif w in (self.clock_hi_now, self.clock_h):
            pass  # no effect
        elif w == self.pcbuf_override:
            tile.pcbuf_override = value
        elif w in self.values:
            self.values[w] = value
        else:
            raise Unmodelled(f"{self.name}: register at offset {w * 4:#x} is not modelled")


__all__ = ["DebugRegs"]
