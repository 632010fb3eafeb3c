"""THEIA memories outside the VPs: main memory, the banked TMEM, and the memory controller.

* :class:`MainMemory`: the read-only "main memory" of 32-bit words the test bench fills from
  ``code.mem`` (each 64-bit VP instruction is two words, high word first).
* :class:`TMem`: the texture memory, ``banks`` interleaved banks; word ``a`` lives in bank
  ``a % banks``, row ``a // banks`` (the RTL's crossbar). The RTL's TMREAD defect (every read
  returns row 0 of banks 0, 1, 2) is :meth:`TMem.read3` with ``row0_quirk``.
* :class:`MemoryController`: the MCU. A COPYBLOCK request ``{BLOCK_DST, SRC offset, tag,
  BLKLEN, DST offset}`` copies BLKLEN blocks from main memory into one VP: tag 1 = code
  memory (2 words per block, one instruction), tag 0 = data memory (3 words per block, one
  register row x, y, z). The destination VP is ``DstId`` modulo the VP-select width, as the
  RTL's ``SELECT_1_TO_N`` decodes it (DstId 0 is the NULL destination). Copies complete at
  once (the ISA-level view). The RTL's MCU mishandles a request that arrives while another
  is in flight (it re-loads its address counters, the copies land shifted or elsewhere): that
  is the cycle model's MCU (:mod:`isaforge.theia.cycle.mcu`, quirk ``mcu-lost``, a timed
  run); here such requests are only counted (``back_to_back``, for the run's notes).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MASK32 = 0xFFFF_FFFF
TMEM_BANKS = 4


class MainMemory:
    """Word-addressed 32-bit main memory (read only for the GPU)."""

    def __init__(self, words: Iterable[int] = ()) -> None:
        self.words = array("I", words)  # 32-bit (stdlib: the cycle model runs without numpy)

    @classmethod
    def from_vp_words(cls, instructions: Iterable[int]) -> MainMemory:
        """The test bench's layout: each 64-bit VP instruction as (high, low) words."""
        out: list[int] = []
        for w in instructions:
            out += [w >> 32 & MASK32, w & MASK32]
        return cls(out)

    def read(self, address: int) -> int:
        """A word; addresses past the loaded image read as 0."""
        return int(self.words[address]) if 0 <= address < len(self.words) else 0


class TMem:
    """Interleaved texture memory: ``banks`` x ``rows`` 32-bit words."""

    def __init__(self, words: Iterable[int] = (), banks: int = TMEM_BANKS) -> None:
        import numpy as np  # (the instruction-level simulator's; see MainMemory)

        data = list(words)
        self.banks = banks
        rows = max(1, -(-len(data) // banks))
        self.data = np.zeros((banks, rows), dtype=np.uint32)
        for a, v in enumerate(data):
            self.data[a % banks, a // banks] = v & MASK32
        self.reads = 0

    def read(self, address: int) -> int:
        bank, row = address % self.banks, address // self.banks
        if row >= self.data.shape[1]:
            return 0
        return int(self.data[bank, row])

    def read3(self, addresses: tuple[int, int, int], row0_quirk: bool = False
              ) -> tuple[int, int, int]:
        """A TMREAD: three words. With ``row0_quirk`` the RTL's result: row 0 of banks 0..2."""
        self.reads += 1
        if row0_quirk:
            return (int(self.data[0, 0]), int(self.data[1 % self.banks, 0]),
                    int(self.data[2 % self.banks, 0]))
        return (self.read(addresses[0]), self.read(addresses[1]), self.read(addresses[2]))


@dataclass(frozen=True)
class CopyRequest:
    """One COPYBLOCK command as the CP builds it."""

    dst_id: int  # CP register 3 (BLOCK_DST), low 16 bits
    src_offset: int  # main-memory word address
    code: bool  # tag bit 31: True = VP code memory, False = VP data memory (registers)
    blocks: int  # BLKLEN (bits 30..20); 0 means 2048 (the RTL's 11-bit counter wraps)
    dst_offset: int  # bits 19..0

    @classmethod
    def from_registers(cls, block_dst: int, src: int, dst_and_len: int) -> CopyRequest:
        return cls(block_dst & 0xFFFF, src & MASK32, bool(dst_and_len >> 31 & 1),
                   dst_and_len >> 20 & 0x7FF, dst_and_len & 0xFFFFF)

    def __str__(self) -> str:
        kind = "code" if self.code else "data"
        return (f"COPYBLOCK DstId {self.dst_id} {kind} {self.blocks} blocks "
                f"src {self.src_offset:#x} -> dst {self.dst_offset:#x}")


class MemoryController:
    """The MCU: executes copy requests into VP code or data memory."""

    def __init__(self, memory: MainMemory, cores: int) -> None:
        self.memory = memory
        self.cores = cores
        self.select_mask = (1 << max(1, (cores - 1).bit_length())) - 1
        self.pending = False  # a request not yet observed complete by a STATUS read
        self.done: list[CopyRequest] = []
        self.unrouted: list[CopyRequest] = []  # NULL destination or no such VP
        self.back_to_back = 0  # requests made while another was pending (the RTL's MCU
        # mishandles them: quirk mcu-lost, a timed run of isaforge.theia.cycle)

    def target(self, request: CopyRequest) -> int | None:
        """The VP index a request writes, or None (NULL destination / no such VP)."""
        if request.dst_id == 0:
            return None
        index = request.dst_id & self.select_mask
        return index if index < self.cores else None

    def request(self, req: CopyRequest,
                write_code: Callable[[int, int, int], None],
                write_data: Callable[[int, int, tuple[int, int, int]], None]) -> None:
        """Perform a copy. ``write_code(vp, address, word)`` and
        ``write_data(vp, row, lanes)`` store into the VPs."""
        vp = self.target(req)
        if vp is None:
            self.unrouted.append(req)
            return
        if self.pending:
            self.back_to_back += 1
        self.pending = True
        n = req.blocks or 2048
        src = req.src_offset
        read = self.memory.read
        for i in range(n):
            if req.code:
                write_code(vp, (req.dst_offset + i) & 0xFFFF,
                           read(src + 2 * i) << 32 | read(src + 2 * i + 1))
            else:
                a = src + 3 * i
                write_data(vp, (req.dst_offset + i) & 0xFF, (read(a), read(a + 1), read(a + 2)))
        self.done.append(req)

    def status(self) -> int:
        """CP register 2: 1 when no copy is pending (the RTL's MCU FIFO-empty bit)."""
        self.pending = False
        return 1


__all__ = ["TMEM_BANKS", "CopyRequest", "MainMemory", "MemoryController", "TMem"]
