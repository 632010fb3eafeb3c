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

    def __init__(self, tile: object, mm: MemoryMap) -> None:
        self.n_streams = mm.stream("NOC_NUM_STREAMS")
        self.stride = mm.stream("NOC_STREAM_REG_SPACE_SIZE")
        super().__init__(tile, mm.stream("NOC_OVERLAY_START_ADDR"), self.n_streams * self.stride)
        table = mm.group("stream")
        self.modelled = {table[n]: n.removesuffix("_REG_INDEX") for n in STORAGE if n in table}
        self.values: dict[tuple[int, int], int] = {}

    def locate(self, addr: int, size: int) -> tuple[int, int]:
        w = word_offset(self, addr, size)
        stream, reg = divmod(w, self.stride >> 2)
        if reg not in self.modelled:
            raise Unmodelled(f"{self.name}: stream {stream} register {reg} is not modelled "
                             f"(only {', '.join(sorted(self.modelled.values()))})")
        return stream, reg

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        return self.values.get(self.locate(addr, size), 0)

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        self.values[self.locate(addr, size)] = value & 0xFFFFFFFF

    def get(self, stream: int, name: str) -> int:
        """A stream register by name (``"STREAM_REMOTE_DEST_BUF_SIZE"``), for the host."""
        for reg, n in self.modelled.items():
            if n == name:
                return self.values.get((stream, reg), 0)
        raise KeyError(name)


__all__ = ["STORAGE", "StreamRegs"]
