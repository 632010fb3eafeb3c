"""Tensix GPRs seen from RISC-V: ``REGFILE_BASE``.

Each Tensix thread has 64 32-bit GPRs (the Scalar Unit's and Configuration Unit's operands).
TRISC *i* sees thread *i*'s 64 GPRs at ``REGFILE_BASE``; BRISC sees all three threads' GPRs
one after the other; NCRISC has nothing mapped. Sub-word stores write their bytes only (byte
enables); sub-word loads return their bytes.
"""

from __future__ import annotations

from .memmap import CoreInfo
from .mmio import Unmodelled, Window, extract, merge

N_GPRS = 64


class GprWindow(Window):
    name = "Tensix GPRs"
    observes_coprocessor = True

    def _locate(self, core: CoreInfo, addr: int, size: int) -> tuple[int, int]:
        off = addr - self.base
        if size not in (1, 2, 4) or off & (size - 1):
            raise Unmodelled(f"{self.name}: misaligned {size}-byte access at offset {off:#x}")
        index = off >> 2
        if core.thread is not None:
            thread = core.thread
        elif core.name == "brisc":
            thread, index = divmod(index, N_GPRS)
        else:
            raise Unmodelled(f"{self.name} is not mapped for {core.name}")
        if thread > 2 or index >= N_GPRS:
            raise Unmodelled(f"{self.name}: offset {off:#x} is beyond the GPRs {core.name} sees")
        return thread, index

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        thread, index = self._locate(core, addr, size)
        return extract(int(self.tile.cp.gpr.get(thread, index)), addr, size)

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        thread, index = self._locate(core, addr, size)
        old = int(self.tile.cp.gpr.get(thread, index))
        self.tile.cp.gpr.set(thread, index, merge(old, addr, size, value))


__all__ = ["GprWindow", "N_GPRS"]
