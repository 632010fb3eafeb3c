"""Core-local data memory at ``MEM_LOCAL_BASE`` (BRISC/NCRISC 8 KiB, TRISCs 4 KiB on Blackhole).

Each core sees only its own RAM there; the firmware keeps its stack, ``.data`` and ``.bss`` in
it (``do_crt1`` copies the image the host staged in L1). The array is what the core's address
space maps as RAM; the host and tests read it through :meth:`LocalMemory.read`.
"""

from __future__ import annotations

import numpy as np


class LocalMemory:
    """One core's local data RAM."""

    def __init__(self, core: str, base: int, size: int) -> None:
        self.core = core
        self.base = base
        self.size = size
        self.data = np.zeros(size, dtype=np.uint8)

    def _offset(self, addr: int, n: int) -> int:
        off = addr - self.base
        if off < 0 or off + n > self.size:
            raise IndexError(f"{self.core} local memory access [{addr:#x}, +{n:#x}) is outside "
                             f"[{self.base:#x}, +{self.size:#x})")
        return off

    def read(self, addr: int, n: int) -> bytes:
        off = self._offset(addr, n)
        return self.data[off:off + n].tobytes()

    def write(self, addr: int, data: bytes) -> None:
        off = self._offset(addr, len(data))
        self.data[off:off + len(data)] = np.frombuffer(bytes(data), dtype=np.uint8)

    def read_int(self, addr: int, size: int) -> int:
        return int.from_bytes(self.read(addr, size), "little")


__all__ = ["LocalMemory"]
