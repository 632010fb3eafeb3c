"""TDMA-RISC registers: ``RISCV_TDMA_REGS_START_ADDR``.

The firmware only enables clock gating there at boot (``RISCV_TDMA_REG_CLK_GATE_EN``); that and
``CLK_GATE_HYST`` are kept as plain registers with no effect on the model. The mover (XMOV)
and packer FIFO registers are not modelled: an access stops the run.
"""

from __future__ import annotations

from .memmap import CoreInfo, MemoryMap
from .mmio import Unmodelled, Window, word_offset


class TdmaRegs(Window):
    name = "TDMA-RISC registers"

    def __init__(self, tile: object, mm: MemoryMap) -> None:
        base = mm.tensix("RISCV_TDMA_REGS_START_ADDR")
        super().__init__(tile, base, 0x1000)
        self.values = {(mm.tensix(f"RISCV_TDMA_REG_{n}") - base) >> 2: 0
                       for n in ("CLK_GATE_EN", "CLK_GATE_HYST")}

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        w = word_offset(self, addr, size)
        if w in self.values:
            return self.values[w]
        raise Unmodelled(f"{self.name}: register at offset {w * 4:#x} is not modelled")

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        w = word_offset(self, addr, size)
        if w not in self.values:
            raise Unmodelled(f"{self.name}: register at offset {w * 4:#x} is not modelled")
        self.values[w] = value & 0xFFFFFFFF


__all__ = ["TdmaRegs"]
