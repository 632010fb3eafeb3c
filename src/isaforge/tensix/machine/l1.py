"""L1 as the coprocessor sees it: the byte array the unpackers read and the packers write.

The coprocessor's ``memory`` (see :class:`~.scalar_mem.Memory`) is what the Scalar Unit's
LOADIND/STOREIND/atomics reach; the unpackers and packers need more than its one-word
accessors: the L1 bytes as one numpy array, to gather and scatter whole rows at once. That is
the :class:`L1Access` protocol, two members any memory given to a Coprocessor provides:

* ``l1``: the ``uint8`` numpy array of L1 (byte ``a`` at ``l1[a]``; the packers write into it
  in place, so it must be the memory itself, not a copy);
* ``l1_written(addr, size)``: told after a packer wrote ``[addr, addr + size)``, so that
  whoever watches L1 (a tile's parked cores) can react.

:class:`L1Memory` is a standalone L1 of Blackhole's size (1.5 MiB) with no MMIO registers: what
a :class:`~.coprocessor.Coprocessor` uses when no tile gives it a memory. A tile's memory
provides the same two members over its own L1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from .state import NotImplementedInstruction

#: Blackhole's L1: 1536 KiB per Tensix tile
L1_SIZE = 1536 * 1024


@runtime_checkable
class L1Access(Protocol):
    """The bulk L1 access of the unpackers and packers."""

    l1: np.ndarray

    def l1_written(self, addr: int, size: int) -> None: ...


class L1Memory:
    """A standalone L1 of ``size`` bytes (zero at construction) and no MMIO registers.

    It is a :class:`~.scalar_mem.Memory` (``read``/``write`` of 1..4 little-endian bytes; the
    MMIO accessors raise :class:`~.state.NotImplementedInstruction`, as there is no tile) and
    an :class:`L1Access`."""

    def __init__(self, size: int = L1_SIZE) -> None:
        self.l1_size = size
        self.l1 = np.zeros(size, dtype=np.uint8)

    def read(self, addr: int, size: int) -> int:
        return int.from_bytes(self.l1[addr:addr + size].tobytes(), "little")

    def write(self, addr: int, size: int, value: int) -> None:
        data = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        self.l1[addr:addr + size] = np.frombuffer(data, dtype=np.uint8)

    def l1_written(self, addr: int, size: int) -> None:
        """Nobody watches a standalone L1."""

    def mmio_read(self, thread: int, addr: int) -> int:
        raise NotImplementedInstruction(f"thread {thread}: MMIO read of {addr:#010x}: the "
                                        f"coprocessor has no tile (no MMIO registers)")

    def mmio_write(self, thread: int, addr: int, value: int) -> None:
        raise NotImplementedInstruction(f"thread {thread}: MMIO write of {addr:#010x}: the "
                                        f"coprocessor has no tile (no MMIO registers)")


class Refused(Exception):
    """What an unpacker or packer instruction does not implement (its executor turns this
    into :class:`~.state.NotImplementedInstruction` naming the thread and instruction)."""


def l1_array(memory: object) -> L1Access:
    """``memory`` as an :class:`L1Access`, or :class:`~.state.NotImplementedInstruction`
    naming what is missing."""
    if memory is None or not isinstance(memory, L1Access):
        raise Refused("the coprocessor's memory gives no L1 array (it needs the L1Access "
                      "members 'l1' and 'l1_written')")
    return memory


class L1Source:
    """The L1 of the coprocessor's memory, which a tile may replace: calling it gives the
    current memory as an :class:`L1Access`, checked once per memory object."""

    def __init__(self, memory: Callable[[], object]) -> None:
        self.memory = memory
        self._mem: object = None
        self._checked: L1Access | None = None

    def __call__(self) -> L1Access:
        mem = self.memory()
        if mem is not self._mem or self._checked is None:
            self._checked = l1_array(mem)
            self._mem = mem
        return self._checked


__all__ = ["L1_SIZE", "L1Access", "L1Memory", "L1Source", "Refused", "l1_array"]
