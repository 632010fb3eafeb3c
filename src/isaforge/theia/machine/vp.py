"""One THEIA vector processor (VP) at instruction level.

State, sized as the hardware is: 65536 x 64-bit instruction memory, 256 x 96-bit registers
(x, y, z lanes of 32 bits), the OMEM it owns, two hardware threads (SMT). Register roles the
hardware itself uses: R3.x (low 8 bits) is the frame OFFSET, R3.z the INDEX register of the
indexed addressing modes, R2.z the thread control (bit 0: multithreading on; bits 16..1: the
second thread's code offset). Instructions are executed in program order (no timing); the
out-of-order machinery only matters to the cycle model.

Threads: thread 0 starts at PC 0 when the CP starts the VP; while R2.z bit 0 is set, thread 1
runs from its code offset and the two threads alternate one instruction each. A thread stops
at an instruction with the EOF bit (that instruction is not executed). The VP is finished
when thread 0 and (if multithreading is on) thread 1 have stopped.

A branch is decided on the flags of its own result (ZERO: all 96 bits zero, SIGN: all three
lanes negative). An instruction without a result decides on the idle commit bus (NOP and
opcode 7: ZERO set, SIGN clear) or, for IO, is not taken (the RTL's IIU would wait for a
commit that never comes). Registers never written read as 0 (the RTL reads ``x``).

For speed the register file lives in a flat Python list ``r`` (row * 3 + lane) while the
simulator runs, with a ``bytearray`` of written-lane bits per row (lanes never written are
what the RTL dumps as ``x``); :attr:`VectorProcessor.registers` returns it as a (256, 3)
``uint32`` array. Straight-line code is compiled once into Python functions by
:mod:`.jit`; :meth:`VectorProcessor.step_reference` is the plain one-instruction
interpreter built directly on :mod:`.alu` (the tests hold the two to the same results).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from . import alu
from .jit import BlockFn, compile_block
from .memory import TMem

IMEM_SIZE = 1 << 16
RF_ROWS = 256
OMEM_SIZE = 250_000  # the RTL's OMEM_SIZE
BLOCK_LEN = 64
R2Z = 2 * 3 + 2  # flat index of R2.z (thread control)


class VectorProcessor:
    """A VP: instruction memory, registers, OMEM, two threads."""

    def __init__(self, index: int, tmem: TMem | None = None, omem_size: int = OMEM_SIZE,
                 quirks: Iterable[str] = ()) -> None:
        self.index = index
        self.vpid = index + 1  # the id the CCB addresses
        self.imem = np.zeros(IMEM_SIZE, dtype=np.uint64)
        self._imem: dict[int, int] = {}  # sparse mirror used by the compiler
        self.r = [0] * (RF_ROWS * 3)
        self.w = bytearray(RF_ROWS)  # lanes written since reset, per row (x=4, y=2, z=1)
        self.omem = np.zeros(omem_size, dtype=np.uint32)
        self.omem_written = np.zeros(omem_size, dtype=bool)
        self.tmem = tmem if tmem is not None else TMem()
        self.quirks = frozenset(quirks)
        self.tmem_row0 = "tmem-row0" in self.quirks
        self.enabled = False
        self.started = False
        self.pc = [0, 0]
        self.stopped = [False, False]
        self.instructions = 0
        self.muls = 0
        self.divs = 0
        self.tmreads = 0
        self.omwrites = 0
        self.omem_dropped = 0  # OMWRITE lanes whose address is past the OMEM
        self._blocks: dict[int, tuple[BlockFn, int] | None] = {}
        self._turn = 0
        # hooks (see .hooks): the object the hooked blocks call, None without hooks, and
        # the thread running (set where the hooked blocks can read it, for their info)
        self.hook: Any = None
        self.hook_kinds: frozenset[str] = frozenset()
        self.thread = 0

    def set_hook(self, hook: Any) -> None:
        """Run blocks that call ``hook`` (a :class:`.hooks.VpHooks`; None: the plain
        blocks). The blocks compiled so far are dropped."""
        self.hook = hook
        self.hook_kinds = hook.kinds if hook is not None else frozenset()
        self._blocks.clear()

    # ---------------------------------------------------------------- memories

    def write_code(self, address: int, word: int) -> None:
        """Store one instruction (the MCU's code-memory write)."""
        address &= IMEM_SIZE - 1
        self.imem[address] = word
        self._imem[address] = word
        self._blocks.clear()

    def load_code(self, words: Iterable[int], address: int = 0) -> None:
        for i, w in enumerate(words):
            self.write_code(address + i, w)

    def fetch(self, address: int) -> int:
        return self._imem.get(address & (IMEM_SIZE - 1), 0)

    def write_row(self, row: int, lanes: tuple[int, int, int], we: int = 7,
                  known: int = 7) -> None:
        """Write a register row (lanes selected by ``we``, x=4); ``known``: the lanes that
        hold a defined value (the others become x, as if never written)."""
        base = (row & 0xFF) * 3
        for i in range(3):
            if we >> (2 - i) & 1:
                self.r[base + i] = lanes[i] & alu.MASK32
        we &= 7
        self.w[row & 0xFF] = self.w[row & 0xFF] & ~we | known & we

    def read_row(self, row: int) -> tuple[int, int, int]:
        base = (row & 0xFF) * 3
        return (self.r[base], self.r[base + 1], self.r[base + 2])

    @property
    def registers(self) -> np.ndarray:
        """The register file, (256, 3) uint32 (a copy)."""
        return np.array(self.r, dtype=np.uint32).reshape(RF_ROWS, 3)

    @property
    def written(self) -> np.ndarray:
        """(256, 3) bool: lanes written since reset (the others are undefined in the RTL)."""
        bits = np.frombuffer(bytes(self.w), dtype=np.uint8)
        return np.stack([bits & 4 != 0, bits & 2 != 0, bits & 1 != 0], axis=1)

    def omwrite(self, a0: int, a1: int, a2: int, d0: int, d1: int, d2: int) -> None:
        """OMWRITE: OMEM[SRC1.x] = SRC0.x, then y, then z (out-of-range addresses dropped)."""
        self.omwrites += 1
        size = len(self.omem)
        for a, d in ((a0, d0), (a1, d1), (a2, d2)):
            if a < size:
                self.omem[a] = d
                self.omem_written[a] = True
            else:
                self.omem_dropped += 1

    def tmread(self, a0: int, a1: int, a2: int) -> tuple[int, int, int]:
        """TMREAD: three TMEM words at SRC1.x, .y, .z."""
        self.tmreads += 1
        return self.tmem.read3((a0, a1, a2), self.tmem_row0)

    # ---------------------------------------------------------------- control

    def start(self) -> None:
        """CCB START: enable the main thread (it continues from its PC)."""
        self.enabled = True
        self.started = True

    def stop(self) -> None:
        self.enabled = False

    @property
    def multithreaded(self) -> bool:
        return bool(self.r[R2Z] & 1)

    @property
    def thread1_offset(self) -> int:
        return self.r[R2Z] >> 1 & 0xFFFF

    @property
    def running(self) -> bool:
        """Enabled and at least one thread still has instructions to run."""
        if not self.enabled:
            return False
        return not self.stopped[0] or (self.multithreaded and not self.stopped[1])

    def _block(self, pc: int, single: bool) -> tuple[BlockFn, int] | None:
        """The compiled block at ``pc``: (function, length); None at an EOF word."""
        key = pc | (single << 16)
        try:
            return self._blocks[key]
        except KeyError:
            blk = compile_block(self.fetch, pc, 1 if single else BLOCK_LEN, self.quirks,
                                hooks=self.hook_kinds)
            entry = None if blk is None else (blk[0], blk[1])
            self._blocks[key] = entry
            return entry

    def run(self, budget: int) -> int:
        """Execute up to about ``budget`` instructions; returns how many were executed."""
        if not self.enabled:
            return 0
        r, w = self.r, self.w
        blocks = self._blocks
        n = 0
        while n < budget:
            if r[R2Z] & 1:
                done = self._step_mt()
                if done is None:
                    break
                n += done
                if not r[R2Z] & 1:  # switched off: thread 1 is held in reset
                    self._reset_thread1()
                continue
            if self.stopped[0]:
                break
            pc = self.pc[0]
            self.thread = 0
            while n < budget:  # thread 0 alone: the fast path
                blk = blocks.get(pc)
                if blk is None:
                    blk = self._block(pc, False)
                    if blk is None:
                        self.stopped[0] = True
                        break
                pc = blk[0](r, w, self)
                n += blk[1]
                if r[R2Z] & 1:
                    break
            self.pc[0] = pc
            if self.stopped[0]:
                break
            if r[R2Z] & 1:  # multithreading switched on: thread 1 starts
                self._reset_thread1()
        self.instructions += n
        return n

    def step(self) -> bool:
        """Execute exactly one instruction (of the next thread when multithreaded)."""
        if not self.enabled:
            return False
        if self.r[R2Z] & 1:
            done = self._step_mt()
        else:
            done = None
            if not self.stopped[0]:
                blk = self._block(self.pc[0], True)
                if blk is None:
                    self.stopped[0] = True
                else:
                    self.thread = 0
                    self.pc[0] = blk[0](self.r, self.w, self)
                    done = blk[1]
                    if self.r[R2Z] & 1:
                        self._reset_thread1()
        if done is None:
            return False
        self.instructions += done
        return True

    def _reset_thread1(self) -> None:
        self.pc[1] = self.thread1_offset
        self.stopped[1] = False

    def _step_mt(self) -> int | None:
        """One instruction of the next runnable thread (multithreading on)."""
        for _ in range(2):
            t = self._turn
            self._turn ^= 1
            if self.stopped[t]:
                continue
            blk = self._block(self.pc[t], True)
            if blk is None:
                self.stopped[t] = True
                continue
            self.thread = t
            self.pc[t] = blk[0](self.r, self.w, self)
            return blk[1]
        return None

    # ---------------------------------------------------------------- reference

    def step_reference(self, thread: int = 0) -> bool:
        """Execute one instruction of ``thread`` with the plain :mod:`.alu` interpreter
        (no compilation). False if the thread is at an EOF word."""
        pc = self.pc[thread]
        word = self.fetch(pc)
        if word >> 58 & 1:
            self.stopped[thread] = True
            return False
        self.pc[thread] = self._execute(word, pc)
        self.instructions += 1
        return True

    def _execute(self, word: int, pc: int) -> int:
        r = self.r
        ad = alu.addressing(word, r[9] & 0xFF, r[11] & 0xFF)
        raw1_reg = self.read_row(ad.src1_addr) if ad.src1_addr is not None else None
        raw1 = ad.src1_value if ad.src1_value is not None else raw1_reg
        assert raw1 is not None
        raw0 = self.read_row(ad.src0_addr) if ad.src0_addr is not None else alu.ZERO
        src1, src0 = alu.issue_sources(word, raw1, raw0)
        dst = ad.dst_for(raw1_reg)
        op = word >> 48 & 7
        result: alu.Lanes | None
        if op == alu.OP_IO:
            iop = word >> 59 & 7
            result = None
            if iop == alu.IO_OMWRITE:
                self.omwrite(*src1, *src0)
            elif iop == alu.IO_TMREAD:
                result = self.tmread(*src1)
        else:
            if op == alu.OP_MUL:
                self.muls += 1
            elif op == alu.OP_DIV:
                self.divs += 1
            result = alu.execute(word, src1, src0)
        if result is not None:
            w = self.w
            k1 = 7 if ad.src1_value is not None or ad.src1_addr is None else w[ad.src1_addr]
            k0 = 7 if ad.src0_addr is None else w[ad.src0_addr]
            known = alu.result_known(word, alu.operand_known(word, 1, k1),
                                     alu.operand_known(word, 0, k0))
            self.write_row(dst, result, word >> 42 & 7, known)
        nxt = (pc + 1) & 0xFFFF
        if word >> 57 & 1:
            if result is not None:
                zero, sign = alu.flags(result)
            elif op in (alu.OP_NOP, alu.OP_RSVD):  # decided on the idle commit bus
                zero, sign = True, False
            else:  # IO without a commit: the RTL's IIU would wait forever; not taken here
                return nxt
            if alu.branch_taken(word >> 54 & 7, zero, sign):
                return alu.branch_target(word, raw0)
        return nxt


__all__ = ["IMEM_SIZE", "OMEM_SIZE", "RF_ROWS", "VectorProcessor"]
