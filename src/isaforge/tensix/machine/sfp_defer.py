"""Deferred SFP loops: what one is, and which instructions of other threads leave it alone.

A thread that issues a loop of SFP instructions while other threads still move may defer them
(``Coprocessor._sfp_defer``): it takes each word as issued, one round each, and the loop runs
later as one pass (:class:`~.sfpu.block.SfpBlocks`). That is exact only while every other
thread's instruction in between neither reads nor writes what the loop reads or writes: Dst
cells, valid and addressing bits, LRegs, lane state, the deferring thread's RWCs, and the
Config words the Vector Unit reads (:data:`SFP_CONFIG_READS`). :class:`Interference` says
whether an instruction is such a one (``harmless``); the coprocessor executes the deferred
instructions before any instruction that is not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.errors import DecodeError
from ..decode import decode
from ..isa import config_fields
from .frontend import EXPANDED, Thread
from .l1 import Refused
from .matrix import MatrixUnit
from .pack import Packer
from .regfiles import Dst
from .scalar_mem import MMIO_BASE, MMIO_LOWEST, Memory
from .state import Config, ThreadConfig

#: instructions that touch nothing SFP instructions read or write: NOP, the Scalar Unit's
#: DMANOP/FLUSHDMA and SETDMAREG (GPRs), the ADC unit's counters, the semaphores and the
#: issuing thread's own Wait Gate latch (no STALLWAIT condition watches the Vector Unit),
#: UNPACR_NOP (Src banks)
HARMLESS = frozenset({
    "NOP", "DMANOP", "FLUSHDMA", "SETDMAREG", "SETADC", "SETADCXX", "SETADCXY", "SETADCZW",
    "INCADCXY", "INCADCZW", "ADDRCRXY", "ADDRCRZW", "SEMINIT", "SEMPOST", "SEMGET", "SEMWAIT",
    "STALLWAIT", "UNPACR_NOP"})
#: harmless in some forms (see :meth:`Interference.harmless`)
SOMETIMES = frozenset({"UNPACR", "WRCFG", "ZEROACC", "PACR", "STOREREG"})
#: the Config fields the Vector Unit's SFPLOAD/SFPSTORE/MADs read: _SfpuRegs' and MathRegs'
#: (tests check both lists)
SFP_CONFIG_READS = (
    "ALU_ACC_CTRL_SFPU_Fp32_enabled", "ALU_FORMAT_SPEC_REG_SrcB_override",
    "ALU_FORMAT_SPEC_REG_SrcB_val", "ALU_FORMAT_SPEC_REG1_SrcB", "DEST_REGW_BASE_Base",
    "DEST_SP_BASE_Base", "ALU_FORMAT_SPEC_REG_SrcA_override", "ALU_FORMAT_SPEC_REG_SrcA_val",
    "ALU_FORMAT_SPEC_REG0_SrcA", "ALU_ACC_CTRL_Fp32_enabled", "ALU_ACC_CTRL_INT8_math_enabled",
    "ALU_ACC_CTRL_Zero_Flag_disabled_src", "DEST_ACCESS_CFG_remap_addrs",
    "DEST_ACCESS_CFG_swizzle_32b")
#: the Config fields that send unpacker 0's output to Dst (any context)
_UNPACK_TO_DST = ("THCON_SEC0_REG2_Unpack_If_Sel",
                  *(f"THCON_SEC0_REG2_Unpack_if_sel_cntx{c}" for c in range(8)))
#: ZEROACC's clear_mode of half of Dst
_ZEROACC_HALF = 2
#: what Interference.harmless asks of the instructions harmless in some forms
_UNPACR0, _WRCFG, _PACR, _ZEROACC, _STOREREG = range(5)


class Deferred:
    """SFP instructions thread ``t`` issued but has not executed: the first ``k`` of the
    loop ``words`` (body length ``period``, ``n`` words), whose pass touches Dst ``rows``
    (None: no Dst) with the Dst addressing bits ``flags``."""

    __slots__ = ("t", "words", "period", "n", "k", "rows", "flags", "ready", "span")

    def __init__(self, t: int, words: tuple[int, ...], period: int, n: int,
                 rows: np.ndarray | None, flags: tuple[bool, bool], ready: Any) -> None:
        self.t, self.words, self.period, self.n, self.rows = t, words, period, n, rows
        self.flags = flags
        self.ready = ready  # (SfpBlocks.prepare's, for the whole loop)
        self.k = 1
        #: the first and last Dst rows it touches (None: none)
        self.span: tuple[int, int] | None = None


class Interference:
    """Whether another thread's next instruction leaves a :class:`Deferred` loop alone."""

    def __init__(self, config: Config, thread_config: ThreadConfig, dst: Dst,
                 matrix: MatrixUnit, pack: Packer, memory: Callable[[], Memory],
                 names: list[str | None]) -> None:
        self.config, self.thread_config, self.dst = config, thread_config, dst
        self.matrix, self.pack, self.memory = matrix, pack, memory
        self._names = names  # opcode -> instruction name (None: not implemented)
        #: word -> what harmless needs of it (_kind)
        self._harm: dict[int, Any] = {}
        #: a PACR plan's id -> (the plan, Read_32b_data, Dst addressing bits, its Dst rows'
        #: first and last, and 8 more for 32-bit halves)
        self._pacr_spans: dict[int, tuple[Any, bool, tuple[bool, bool], tuple[int, int]]] = {}
        #: an SFP loop plan's id -> (the plan, Deferred.span)
        self._sfp_spans: dict[int, tuple[Any, tuple[int, int]]] = {}
        fields = config_fields()
        #: (Config word index, mask) of the fields that send unpacker 0's output to Dst
        masks: dict[int, int] = {}
        for name in _UNPACK_TO_DST:
            masks[fields[name].index] = masks.get(fields[name].index, 0) | fields[name].mask
        self._unpack_dst = tuple(masks.items())
        #: Config word indices the Vector Unit reads (through _SfpuRegs and MathRegs)
        self._sfp_cfg_words = frozenset(fields[name].index for name in SFP_CONFIG_READS)

    def span_of(self, plan: Any) -> tuple[int, int]:
        """The first and last Dst rows (the last + 8: its 32-bit cells' low halves) an SFP
        loop's pass ``plan`` (with rows) touches; kept per plan."""
        hit = self._sfp_spans.get(id(plan))
        if hit is None or hit[0] is not plan:
            if len(self._sfp_spans) > 64:
                self._sfp_spans.clear()
            hit = self._sfp_spans[id(plan)] = (
                plan, (int(plan.rows.min()), int(plan.rows.max()) + 8))
        return hit[1]

    def harmless(self, th: Thread, t: int, d: Deferred | None) -> bool:
        """Whether thread ``th``'s next instruction (finished: none) changes nothing that
        thread ``t``'s deferred SFP instructions read or write, and reads nothing they
        write: Dst cells, valid and addressing bits, LRegs, lane state, ``t``'s RWCs, the
        Config words the Vector Unit reads (:data:`SFP_CONFIG_READS`). A STOREREG is when
        the memory has a method ``mmio_write_quiet(thread, addr)`` that says the register at
        ``addr`` only keeps the value (no window into the coprocessor's state). ``d``: the deferral
        (None: one about to start, whose Dst rows are not known yet: a ZEROACC of half of Dst
        may be, the caller asks again with them)."""
        if th.pending:
            word = th.pending[0]
        elif th.pc >= len(th.program):
            return True
        else:
            word = th.program[th.pc]
            if word >> 24 in EXPANDED or th.replay.load_left:
                return False  # (what the expanders give is not known yet)
        kind = self._harm.get(word)
        if kind is None:
            kind = self._kind(word)
        if kind is True or kind is False:
            return kind
        what, arg = kind
        u = th.index
        if what == _UNPACR0:  # (Unpack_If_Sel clear in every context of unpacker 0)
            bank, item = self.thread_config.bank(u), self.config.words.item
            for index, mask in self._unpack_dst:
                if item(bank, index) & mask:
                    return False
            return True
        if what == _WRCFG:  # (a Config word the Vector Unit reads: in t's bank)
            return self.thread_config.bank(u) != self.thread_config.bank(t)
        if what == _STOREREG:  # (a register the memory says only keeps the value)
            quiet = getattr(self.memory(), "mmio_write_quiet", None)
            return quiet is not None and bool(quiet(u, arg))
        if d is None:
            return True  # (to be asked again with the rows)
        if what == _PACR:
            return self._pacr_apart(u, word, d)
        # ZEROACC of the Dst half without the deferred rows, with t's Dst addressing bits
        span = d.span
        if span is None:
            return False
        regs = self.matrix.math_regs(u)
        if (regs.remap_addrs, regs.swizzle_32b) != d.flags:
            return False
        return span[1] - 8 < 512 if arg else span[0] >= 512

    def _kind(self, word: int) -> Any:
        """What :meth:`harmless` needs of ``word`` (kept): True, False, or (_UNPACR0, None),
        (_WRCFG, None) (a word the Vector Unit reads), (_PACR, None), (_ZEROACC, the half:
        where bit 0), (_STOREREG, the MMIO address)."""
        name = self._names[word >> 24]
        kind: Any = False
        if name in HARMLESS:
            kind = True
        elif name is not None and name in SOMETIMES:
            try:
                f = decode(word).fields
            except DecodeError:
                f = None
            if f is None:
                pass
            elif name == "UNPACR":  # (not into Dst: unpacker 1 never)
                kind = (_UNPACR0, None) if not f["Unpack_block_selection"] else True
            elif name == "WRCFG":
                idx = f["CfgReg"]
                first = idx & ~3 if f["wr128b"] else idx
                if idx >= Config.N_WORDS:
                    kind = False
                elif any(i in self._sfp_cfg_words
                         for i in range(first, first + (4 if f["wr128b"] else 1))):
                    kind = (_WRCFG, None)
                else:
                    kind = True
            elif name == "PACR":
                kind = (_PACR, None)
            elif name == "STOREREG":  # (below MMIO_LOWEST: undefined behaviour)
                addr = MMIO_BASE + ((f["RegAddr"] << 2) & 0x000FFFFC)
                kind = (_STOREREG, addr) if addr >= MMIO_LOWEST else False
            elif f["clear_mode"] == _ZEROACC_HALF and not f["clear_zero_flags"]:
                kind = (_ZEROACC, f["where"] & 1)
        if len(self._harm) > 4096:
            self._harm.clear()
        self._harm[word] = kind
        return kind

    def _pacr_apart(self, u: int, word: int, d: Deferred) -> bool:
        """Whether PACR ``word`` of thread ``u`` reads Dst rows (and their 32-bit halves)
        apart from the deferred loop's, with its Dst addressing bits (it writes L1, its ADCs
        and packer state, which SFP instructions do not read)."""
        if d.span is None:
            return False
        pack = self.pack
        try:
            r = pack.regs(u)
            if (r.remap_addrs, r.swizzle_32b) != d.flags:
                return False
            plan = pack.plan(u, (word,), r)
        except Refused:
            return False  # (it says so when it runs)
        hit = self._pacr_spans.get(id(plan))
        if hit is None or hit[0] is not plan or hit[1] != r.read32 or hit[2] != d.flags:
            dst = self.dst
            was = dst.remap_addrs, dst.swizzle_32b
            dst.remap_addrs, dst.swizzle_32b = d.flags
            phys = dst.phys_table(r.read32)[plan.rows]
            dst.remap_addrs, dst.swizzle_32b = was
            span = (int(phys.min()), int(phys.max()) + 8) if len(phys) else (1, 0)
            if len(self._pacr_spans) > 256:
                self._pacr_spans.clear()
            hit = self._pacr_spans[id(plan)] = (plan, r.read32, d.flags, span)
        lo, hi = hit[3]
        return hi < d.span[0] or lo > d.span[1] or lo > hi


__all__ = ["HARMLESS", "SFP_CONFIG_READS", "SOMETIMES", "Deferred", "Interference"]
