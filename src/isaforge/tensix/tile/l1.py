"""L1: the tile's 1.5 MiB scratchpad RAM, shared by the five cores (and the host).

``L1.data`` is the one numpy ``uint8`` array every core maps at ``MEM_L1_BASE``. Part of it can
also be seen through :class:`L1Window`, an MMIO window onto the same bytes, so that the tile
sees each access: the mailbox area (go and launch messages, the subordinate sync word) is mapped
that way, which is how a core polling a mailbox is noticed and parked, and how a write there
wakes it.
"""

from __future__ import annotations

import numpy as np

from .memmap import CoreInfo
from .mmio import Unmodelled, Window


class L1:
    """The scratchpad: ``data`` (``uint8``) and little-endian helpers for the host."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data = np.zeros(size, dtype=np.uint8)

    def _check(self, addr: int, n: int) -> None:
        if addr < 0 or addr + n > self.size:
            raise IndexError(f"L1 access [{addr:#x}, +{n:#x}) is outside L1 (size {self.size:#x})")

    def read(self, addr: int, n: int) -> bytes:
        self._check(addr, n)
        return self.data[addr:addr + n].tobytes()

    def write(self, addr: int, data: bytes) -> None:
        self._check(addr, len(data))
        self.data[addr:addr + len(data)] = np.frombuffer(bytes(data), dtype=np.uint8)

    def read_int(self, addr: int, size: int) -> int:
        return int.from_bytes(self.read(addr, size), "little")

    def write_int(self, addr: int, size: int, value: int) -> None:
        self.write(addr, (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little"))


class L1Window(Window):
    """An MMIO view of ``[base, base + size)`` of L1 (same bytes as the RAM mapping)."""

    name = "L1"

    def __init__(self, tile: object, l1: L1, base: int, size: int, name: str = "L1") -> None:
        super().__init__(tile, base, size)
        self.l1 = l1
        self.name = name

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        if addr & (size - 1):
            raise Unmodelled(f"misaligned {size}-byte L1 read (the hardware rounds it down)")
        return self.l1.read_int(addr, size)

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        if addr & (size - 1):
            raise Unmodelled(f"misaligned {size}-byte L1 write (the hardware rounds it down)")
        self.l1.write_int(addr, size, value)


__all__ = ["L1", "L1Window"]
