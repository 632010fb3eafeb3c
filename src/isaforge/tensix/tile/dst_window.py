"""Dst seen from RISC-V: ``RISCV_DEST_START_ADDR`` (tt-llk's ``ckernel_dest.h``).

A TRISC reads and writes Dst through this window in the element format its
``RISC_DEST_ACCESS_CTRL_SEC<i>`` configuration selects (``fmt``): the 32-bit formats (FP32,
INT32) see ``Dst32b`` as consecutive 32-bit elements (element *e* is row ``e // 16``, column
``e % 16``), the 16-bit ones (FP16A, FP16B, INT16) see ``Dst16b`` as consecutive 16-bit elements.
Elements move as raw bits. What the hardware does with ``no_swizzle`` clear, with the INT8
format or with ``unsigned_int`` is not publicly documented, and is not modelled: such an access
stops the run, as do accesses narrower than an element and accesses from BRISC or NCRISC.
"""

from __future__ import annotations

from .memmap import CoreInfo
from .mmio import Unmodelled, Window

FMT_FP32, FMT_INT32, FMT_FP16A, FMT_FP16B, FMT_INT16, FMT_INT8 = range(6)
COLS = 16


class DstWindow(Window):
    name = "Dst"
    observes_coprocessor = True

    def _mode(self, core: CoreInfo, addr: int, size: int) -> tuple[int, int, int]:
        """(element width in bytes, row, column) of an access."""
        t = core.thread
        if t is None:
            raise Unmodelled(f"{self.name} window is not mapped for {core.name}")
        cp = self.tile.cp

        def cfg(field: str) -> int:
            return cp.cfg(t, f"RISC_DEST_ACCESS_CTRL_SEC{t}_{field}")
        fmt = cfg("fmt")
        if not cfg("no_swizzle") or cfg("unsigned_int") or fmt not in (
                FMT_FP32, FMT_INT32, FMT_FP16A, FMT_FP16B, FMT_INT16):
            raise Unmodelled(f"{self.name} window: RISC_DEST_ACCESS_CTRL_SEC{t} fmt={fmt} "
                             f"no_swizzle={cfg('no_swizzle')} unsigned_int="
                             f"{cfg('unsigned_int')} (only unswizzled FP32/INT32/FP16/BF16/"
                             f"INT16 element access is modelled)")
        width = 4 if fmt in (FMT_FP32, FMT_INT32) else 2
        off = addr - self.base
        if size != width or off % width:
            raise Unmodelled(f"{self.name} window: {size}-byte access at offset {off:#x} with "
                             f"{8 * width}-bit elements")
        row, col = divmod(off // width, COLS)
        return width, row, col

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        width, row, col = self._mode(core, addr, size)
        dst = self.tile.cp.dst
        return int((dst.read32(row) if width == 4 else dst.read16(row))[0, col])

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        width, row, col = self._mode(core, addr, size)
        dst = self.tile.cp.dst
        if width == 4:
            cells = dst.read32(row)
            cells[0, col] = value & 0xFFFFFFFF
            dst.write32(row, cells)
        else:
            cells = dst.read16(row)
            cells[0, col] = value & 0xFFFF
            dst.write16(row, cells)


__all__ = ["DstWindow"]
