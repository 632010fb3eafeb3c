"""The NOC overlay's stream registers: ``NOC_OVERLAY_START_ADDR``, ``NOC_NUM_STREAMS`` streams of
``NOC_STREAM_REG_SPACE_SIZE`` bytes, register *r* of stream *s* at ``STREAM_REG_ADDR(s, r)``.

tt-metal's circular-buffer API uses stream *n*'s registers as CB *n*'s counters
(``stream_io_map.h``): ``STREAM_REMOTE_DEST_BUF_SIZE`` holds the pages received (pushed by the
producer), ``STREAM_REMOTE_DEST_BUF_START`` the pages acknowledged (popped by the consumer), and
stream 0's ``STREAM_PHASE_AUTO_CFG_PTR`` is the sync register. Those, the scratch registers, and
the configuration words the firmware programs (``STREAM_REMOTE_SRC``, ``STREAM_PERF_CONFIG``)
are 32-bit storage here; the overlay's stream engines (phases, messages, auto-configuration) are
not modelled, and touching their registers stops the run.
"""

from __future__ import annotations

import numpy as np

from .memmap import CoreInfo, MemoryMap
from .mmio import Unmodelled, Window, word_offset

STORAGE = ("STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX", "STREAM_REMOTE_DEST_BUF_START_REG_INDEX",
           "STREAM_PHASE_AUTO_CFG_PTR_REG_INDEX", "STREAM_REMOTE_SRC_REG_INDEX",
           "STREAM_PERF_CONFIG_REG_INDEX", "STREAM_SCRATCH_REG_INDEX",
           "STREAM_SCRATCH_0_REG_INDEX", "STREAM_SCRATCH_1_REG_INDEX",
           "STREAM_SCRATCH_2_REG_INDEX", "STREAM_SCRATCH_3_REG_INDEX",
           "STREAM_SCRATCH_4_REG_INDEX", "STREAM_SCRATCH_5_REG_INDEX")


class StreamRegs(Window):
    name = "stream registers"

    def __init__(self, tile: object, mm: MemoryMap, words: np.ndarray | None = None,
                 at: int = 0) -> None:
        self.n_streams = mm.stream("NOC_NUM_STREAMS")
        self.stride = mm.stream("NOC_STREAM_REG_SPACE_SIZE")
        super().__init__(tile, mm.stream("NOC_OVERLAY_START_ADDR"), self.n_streams * self.stride)
        table = mm.group("stream")
        self.modelled = {table[n]: n.removesuffix("_REG_INDEX") for n in STORAGE if n in table}
        if words is None:
            words, at = np.zeros(self.words(mm), np.uint32), 0
        self.at = at
        #: every register by (stream, register index) (the modelled ones are used): a view of
        #: the tile's latch array, which the RISC-V compiled path reads itself (:meth:`load_word`)
        self.values = words[at:at + self.words(mm)].reshape(self.n_streams, self.stride >> 2)

    @staticmethod
    def words(mm: MemoryMap) -> int:
        """Words the registers take in the tile's latch array."""
        return mm.stream("NOC_NUM_STREAMS") * mm.stream("NOC_STREAM_REG_SPACE_SIZE") // 4

    def locate(self, addr: int, size: int) -> tuple[int, int]:
        w = word_offset(self, addr, size)
        stream, reg = divmod(w, self.stride >> 2)
        if reg not in self.modelled:
            raise Unmodelled(f"{self.name}: stream {stream} register {reg} is not modelled "
                             f"(only {', '.join(sorted(self.modelled.values()))})")
        return stream, reg

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        return int(self.values[self.locate(addr, size)])

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        self.values[self.locate(addr, size)] = value & 0xFFFFFFFF

    def load_word(self, addr: int, size: int) -> int | None:
        """The word of the tile's latch array an aligned 32-bit read at ``addr`` returns (a
        modelled register: the read does nothing else), else None."""
        off = addr - self.base
        if size != 4 or off & 3 or ((off % self.stride) >> 2) not in self.modelled:
            return None
        return self.at + (off >> 2)

    def store_latch(self, core: CoreInfo, addr: int, size: int) -> tuple[str, int] | None:
        """A modelled register's store only keeps the word (see :meth:`Window.store_latch`)."""
        index = self.load_word(addr, size)
        return None if index is None else ("note", index)

    def get(self, stream: int, name: str) -> int:
        """A stream register by name (``"STREAM_REMOTE_DEST_BUF_SIZE"``), for the host."""
        for reg, n in self.modelled.items():
            if n == name:
                return int(self.values[stream, reg])
        raise KeyError(name)


__all__ = ["STORAGE", "StreamRegs"]
