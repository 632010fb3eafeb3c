"""Matrix Unit (FPU) dispatch: resolves addresses, formats, fidelity and bank ownership, then
calls :mod:`.fpu` for the arithmetic; also the Matrix Unit's data movement (MOVD2A, MOVD2B,
MOVA2D, MOVB2D, MOVB2A, with LaneConfig's BLOCK_DEST_MOV column masks), ZEROACC, ZEROSRC,
TRNSPSRCB, GMPOOL's ArgMax form and the Src bank hand-over instructions
(SETDVALID, CLEARDVALID, UNPACR_NOP's SETDVALID and ZEROSRC forms).

The Matrix Unit also executes SETRWC and INCRWC (the counters' arithmetic is :mod:`.rwc`'s).

Where things are: MVMUL & co. on the coprocessor start here (:class:`MatrixUnit`; MVMUL's
handler is :meth:`MatrixUnit.mvmul`, a run of them :meth:`MatrixUnit.mvmul_run`); the
arithmetic and the conversions of the moves are :mod:`.fpu`'s (the documented numpy
reference), whose compiled twins are in :mod:`.fpu_jit`; this module resolves what the
instruction word, the RWCs and the configuration say and then advances the RWCs.

The unit gets the state it uses, not the machine: Dst, SrcA, SrcB, the RWCs, Config and
ThreadConfig, the Vector Unit's LaneConfig (its BLOCK_DEST_MOV masks) and ``report_ub``.

Speed: what an instruction reads from Config and ThreadConfig is read once per configuration
into a :class:`MathRegs` (:meth:`MatrixUnit.math_regs`), cached per thread and recomputed
after any write to either (their arrays count writes, whatever the path: WRCFG, RMWCIB*,
SETC16, ``.config``, ``Config.set``, plain assignment); the RWC updates of
:meth:`MatrixUnit.advance` are remembered with it.

Formats (ISA documentation, Blackhole): the SrcA format is ``ALU_FORMAT_SPEC_REG_SrcA_val``
when ``..._override`` is set, else ``ALU_FORMAT_SPEC_REG0_SrcA``, except that Blackhole uses
the *implied* format latched with the Matrix Unit's SrcA bank unless the thread's
``DISABLE_IMPLIED_SRCA_FMT_Base`` is set. ``FP16A_FORCE_Enable`` forces FP16 style and a 16-bit
Dst; ``ALU_ACC_CTRL_INT8_math_enabled`` selects integer math with a 32-bit Dst; otherwise
``ALU_ACC_CTRL_Fp32_enabled`` selects the 32-bit Dst.

Rows of Dst read as the identity when invalid (ZEROACC'd) and become valid when written.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Collection, Mapping
from typing import NamedTuple

import numpy as np

from ...core.errors import EmulationError
from ..decode import decode
from ..isa import config_fields, thread_config_fields
from . import formats as F
from . import fpu, fpu_jit
from .dispatch import Changes, Execute, Fields, Report, Unit, Wait
from .regfiles import Dst, SrcClient, SrcRegs
from .rwc import addr_mod_index, apply_addr_mod, incrwc, setrwc
from .state import (
    DST,
    FIDELITY,
    N_THREADS,
    RWC_MASKS,
    SRCA,
    SRCB,
    AddrMod,
    Config,
    NotImplementedInstruction,
    RWCs,
    ThreadConfig,
    config_versions,
    field_bits,
)

NEEDS_BOTH = frozenset({"MVMUL", "ELWADD", "ELWSUB", "ELWMUL", "GMPOOL", "GAPOOL"})
NEEDS_SRCA = frozenset({"MOVA2D"})
NEEDS_SRCB = frozenset({"MOVB2D", "MOVB2A", "TRNSPSRCB"})

#: Src-load format name -> the data-format code an unpacker would latch as the implied format.
IMPLIED_CODE = {"bf16": F.DataFormat.FLOAT16_B, "fp16": F.DataFormat.FLOAT16,
                "tf32": F.DataFormat.TF32, "fp32": F.DataFormat.TF32,
                "int8": F.DataFormat.INT8, "int16": F.DataFormat.INT16,
                "raw": F.DataFormat.FLOAT16_B}

MVMUL_OPCODE = 0x26


#: fields the fast paths read without a whole MathRegs (as state.field_bits gives them)
_CLR_DVALID_DISABLE = (field_bits(thread_config_fields()["CLR_DVALID_SrcA_Disable"]),
                       field_bits(thread_config_fields()["CLR_DVALID_SrcB_Disable"]))
_REMAP_ADDRS = field_bits(config_fields()["DEST_ACCESS_CFG_remap_addrs"])
_SWIZZLE_32B = field_bits(config_fields()["DEST_ACCESS_CFG_swizzle_32b"])
_NO_COLUMNS = np.zeros(0, dtype=np.int64)
_NO_COLUMNS.flags.writeable = False


def thread_cfg(config: Config, thread_config: ThreadConfig, t: int, name: str) -> int:
    """A Config field as thread ``t`` sees it (its CFG_STATE_ID bank)."""
    return config.get(name, thread_config.bank(t))


# --------------------------------------------------------------------------------------------
# The configuration an instruction reads
# --------------------------------------------------------------------------------------------


class MathRegs:
    """What thread ``t``'s Matrix Unit instructions read from Config and ThreadConfig, read
    once per configuration (see :meth:`MatrixUnit.math_regs`): the SrcA/SrcB formats the
    configuration selects, whether the implied (latched) formats win, the accumulator flags,
    the Dst addressing bits and offsets, FIDELITY_BASE, the CLR_DVALID disables, the decoded
    AddrMod sections and the RWC updates :meth:`MatrixUnit.advance` has computed with them.
    The :class:`~.fpu.MathConfig` for a pair of formats is made once and reused
    (:meth:`math_config`)."""

    __slots__ = ("srca_fmt", "srcb_fmt", "implied_a", "implied_b", "fp32", "int8",
                 "fp16a_force", "zero_flag_disabled_src", "remap_addrs", "swizzle_32b",
                 "dst_offset", "fidelity_base", "clr_dvalid_disable", "moves", "plans",
                 "signature", "_tc", "_t", "_configs", "_addr_mods")

    def __init__(self, config: Config, thread_config: ThreadConfig, t: int) -> None:
        def cfg(t: int, name: str) -> int:
            return thread_cfg(config, thread_config, t, name)

        tc = thread_config.get
        if cfg(t, "ALU_FORMAT_SPEC_REG_SrcA_override"):
            self.srca_fmt = cfg(t, "ALU_FORMAT_SPEC_REG_SrcA_val")
        else:
            self.srca_fmt = cfg(t, "ALU_FORMAT_SPEC_REG0_SrcA")
        if cfg(t, "ALU_FORMAT_SPEC_REG_SrcB_override"):
            self.srcb_fmt = cfg(t, "ALU_FORMAT_SPEC_REG_SrcB_val")
        else:
            self.srcb_fmt = cfg(t, "ALU_FORMAT_SPEC_REG1_SrcB")
        self.implied_a = not tc(t, "DISABLE_IMPLIED_SRCA_FMT_Base")
        self.implied_b = not tc(t, "DISABLE_IMPLIED_SRCB_FMT_Base")
        self.fp32 = bool(cfg(t, "ALU_ACC_CTRL_Fp32_enabled"))
        self.int8 = bool(cfg(t, "ALU_ACC_CTRL_INT8_math_enabled"))
        self.fp16a_force = bool(tc(t, "FP16A_FORCE_Enable"))
        self.zero_flag_disabled_src = bool(cfg(t, "ALU_ACC_CTRL_Zero_Flag_disabled_src"))
        self.remap_addrs = bool(cfg(t, "DEST_ACCESS_CFG_remap_addrs"))
        self.swizzle_32b = bool(cfg(t, "DEST_ACCESS_CFG_swizzle_32b"))
        # DEST_TARGET_REG_CFG_MATH_Offset + DEST_REGW_BASE_Base (dst_base adds the rest)
        self.dst_offset = (tc(t, "DEST_TARGET_REG_CFG_MATH_Offset")
                           + cfg(t, "DEST_REGW_BASE_Base"))
        self.fidelity_base = tc(t, "FIDELITY_BASE_Phase")
        self.clr_dvalid_disable = (bool(tc(t, "CLR_DVALID_SrcA_Disable")),
                                   bool(tc(t, "CLR_DVALID_SrcB_Disable")))
        self._tc, self._t = thread_config, t
        #: everything read above, and the thread's ThreadConfig row (the AddrMod sections)
        self.signature = (self.srca_fmt, self.srcb_fmt, self.implied_a, self.implied_b,
                          self.fp32, self.int8, self.fp16a_force, self.zero_flag_disabled_src,
                          self.remap_addrs, self.swizzle_32b, self.dst_offset,
                          self.fidelity_base, self.clr_dvalid_disable,
                          thread_config.regs[t].tobytes())
        self._configs: dict[tuple[int, int], fpu.MathConfig] = {}
        self._addr_mods: list[AddrMod | None] = [None] * 8
        #: (addr_mode, update_fidelity, RWC row) -> RWC row after :meth:`MatrixUnit.advance`
        self.moves: dict[tuple[int, bool, tuple[int, ...]], np.ndarray] = {}
        #: (pending words, RWC row) -> :class:`MvmulPlan` of :meth:`MatrixUnit.mvmul_run`
        #: (None: no run)
        self.plans: dict[tuple[tuple[int, ...], tuple[int, ...]], MvmulPlan | None] = {}

    def math_config(self, srca_fmt: int, srcb_fmt: int) -> fpu.MathConfig:
        """The MathConfig with these (effective) Src formats and this configuration's flags."""
        try:
            return self._configs[srca_fmt, srcb_fmt]
        except KeyError:
            mc = self._configs[srca_fmt, srcb_fmt] = fpu.MathConfig(
                srca_fmt=srca_fmt, srcb_fmt=srcb_fmt, fp32_dst=self.fp32, int8_math=self.int8,
                fp16a_force=self.fp16a_force, zero_flag_disabled_src=self.zero_flag_disabled_src)
            return mc

    def addr_mod(self, index: int) -> AddrMod:
        """AddrMod section ``index`` of the thread, decoded once."""
        am = self._addr_mods[index]
        if am is None:
            am = self._addr_mods[index] = self._tc.addr_mod(self._t, index)
        return am


class _CounterRow:
    """One thread's RWCs as a Python list, in the shape :func:`~.rwc.apply_addr_mod` uses
    (``get``/``set`` with the counters' widths)."""

    __slots__ = ("row",)

    def __init__(self, row: list[int]) -> None:
        self.row = row

    def get(self, thread: int, col: int) -> int:
        return self.row[col]

    def set(self, thread: int, col: int, value: int) -> None:
        self.row[col] = value & RWC_MASKS[col]


class MvmulPlan(NamedTuple):
    """A run of MVMULs worked out once (see :meth:`MatrixUnit.mvmul_run`)."""

    rows: np.ndarray  # (N, 7) int64, one row per MVMUL: fpu.RUN_FIELDS
    end: np.ndarray  # the thread's RWCs after the run
    flips: int  # the last MVMUL's clear_dvalid (the run ends at the first that flips)


#: :attr:`MathRegs.plans` has no entry yet (None there: the words do not start a run)
_UNPLANNED = MvmulPlan(np.zeros((0, 7), dtype=np.int64), np.zeros(0), 0)

ZEROACC_ONE_ROW, ZEROACC_16_ROWS, ZEROACC_HALF, ZEROACC_ALL = range(4)


# --------------------------------------------------------------------------------------------
# The unit
# --------------------------------------------------------------------------------------------


class _Mova2d(NamedTuple):
    """One MOVA2D worked out (:meth:`MatrixUnit._mova2d_planned`): the ``plan`` argument of
    the compiled move :func:`~.fpu_jit._k_src2dst_planned` (what :func:`~.fpu.mova2d` would
    pass :func:`~.fpu_jit._k_src2dst`, the physical Dst rows looked up, and the RWCs after,
    which it sets) and the RWCs after."""

    f: Fields
    regs: MathRegs
    plan: np.ndarray
    rwc_after: np.ndarray


class MatrixUnit(Unit):
    """The Matrix Unit (FPU) of the coprocessor, on the state it is given."""

    #: MOVA2D from plans worked out once (False: each the long way; tests compare)
    mova2d_plans = True
    #: SETRWC's and ZEROACC's results remembered per (fields, counters, configuration), and
    #: UNPACR_NOP's ZEROSRC form decoded once per word (False: each worked out again; tests
    #: compare)
    rwc_plans = True

    def __init__(self, dst: Dst, srca: SrcRegs, srcb: SrcRegs, rwc: RWCs, config: Config,
                 thread_config: ThreadConfig, lane_config: np.ndarray,
                 report_ub: Report) -> None:
        self.dst = dst
        self.srca = srca
        self.srcb = srcb
        self.rwc = rwc
        self.config = config
        self.thread_config = thread_config
        #: the Vector Unit's LaneConfig (18 bits per lane): the MOV*s' BLOCK_DEST_MOV masks
        self.lane_config = lane_config
        self._report = report_ub
        self._ubs = 0  # undefined behaviour reported so far (a MOVA2D plan is made only without)
        #: (fields' id, thread, MathRegs' id, RWC row bytes, Src implied formats) -> _Mova2d
        self._mova2d: dict[tuple[int, int, int, bytes, int, int], _Mova2d] = {}
        #: (fields' id, RWC row bytes) -> (fields, the row after SETRWC)
        self._setrwc: dict[tuple[int, bytes], tuple[Fields, np.ndarray]] = {}
        #: (fields' id, thread, MathRegs' id, RWC row bytes) -> (fields, MathRegs, the Dst
        #: rows ZEROACC marks, the RWC row after or None)
        self._zeroacc: dict[tuple[int, int, int, bytes],
                            tuple[Fields, MathRegs, np.ndarray | slice, np.ndarray | None]] = {}
        #: fields' id -> (fields, Unpacker_Select, clear value) of UNPACR_NOP's ZEROSRC form
        #: on the unpacker's bank
        self._zerosrc_forms: dict[int, tuple[Fields, int, int]] = {}
        #: LaneConfig's bytes when it blocks no column (the usual case)
        self._no_lanes = bytes(np.asarray(lane_config).nbytes)
        #: per thread, (config versions, :class:`MathRegs`): see :meth:`math_regs`
        self.regs_cache: list[tuple[tuple[int, int], MathRegs] | None] = [None] * N_THREADS
        #: (thread, its ThreadConfig row's bytes, its bank's Config words' bytes) -> MathRegs
        self._regs_by_content: dict[tuple[int, bytes, bytes], MathRegs] = {}
        #: per thread, the last (ThreadConfig row's bytes, Config words' bytes, MathRegs)
        self._last_content: list[tuple[bytes, bytes, MathRegs] | None] = [None] * N_THREADS

    def report_ub(self, message: str) -> None:
        self._ubs += 1
        self._report(message)

    def handlers(self) -> Mapping[str, Execute]:
        def arith(op: str) -> Execute:
            return lambda t, f: self._arith(t, f, op)

        def move(op: str) -> Execute:
            return lambda t, f: self._move(t, f, op)

        return {
            "MVMUL": self.mvmul,
            **{op: arith(op) for op in ("ELWADD", "ELWSUB", "ELWMUL", "GMPOOL", "GAPOOL")},
            **{op: move(op) for op in ("MOVD2A", "MOVD2B", "MOVB2D", "MOVB2A")},
            "MOVA2D": self._mova2d_planned,  # (which checks mova2d_plans: one call fewer)
            "ZEROACC": self.zeroacc,
            "ZEROSRC": self.zerosrc,
            "TRNSPSRCB": self.trnspsrcb,
            "SETDVALID": self.setdvalid,
            "CLEARDVALID": self.cleardvalid,
            "UNPACR_NOP": self.unpacr_nop,
            "SETRWC": self.setrwc,
            "INCRWC": self.incrwc,
        }

    def waits(self) -> Mapping[str, Wait]:
        # (src.matrix_ready() inline: these run at every issue attempt, retries included)
        def both(t: int, f: Fields) -> str | None:
            return _bank_wait(self.srca) or _bank_wait(self.srcb)

        def srca(t: int, f: Fields) -> str | None:
            src = self.srca
            if src.allowed_client[src.matrix_bank] == _MATRIX_UNIT:
                return None
            return _bank_reason(src.name, src.matrix_bank)

        def srcb(t: int, f: Fields) -> str | None:
            src = self.srcb
            if src.allowed_client[src.matrix_bank] == _MATRIX_UNIT:
                return None
            return _bank_reason(src.name, src.matrix_bank)

        waits: dict[str, Wait] = dict.fromkeys(NEEDS_BOTH, both)
        waits.update(dict.fromkeys(NEEDS_SRCA, srca))
        waits.update(dict.fromkeys(NEEDS_SRCB, srcb))
        waits["UNPACR_NOP"] = self.unpacr_nop_wait
        return waits

    def wait_reads(self) -> Mapping[str, Changes]:
        # every wait above reads the Src banks' owners and indices only (and its fields)
        if self.srca.owners is not self.srcb.owners:
            return {}
        return dict.fromkeys(self.waits(), self.srca.owners)

    def cfg(self, t: int, name: str) -> int:
        return thread_cfg(self.config, self.thread_config, t, name)

    # -- shared helpers ---------------------------------------------------------------------

    def math_regs(self, t: int) -> MathRegs:
        """Thread ``t``'s :class:`MathRegs`, cached and read again only after a write to
        Config or ThreadConfig. Every write path goes through the registers' arrays (WRCFG,
        RMWCIB*, SETC16, ``Config.set``, ``ThreadConfig.set``, a program's ``.config`` /
        ``.threadconfig``, a user assigning to ``words``/``regs``), and those arrays count
        writes (:class:`~.state.WriteCountedArray`), so the cache cannot go stale."""
        key = config_versions(self.config, self.thread_config)
        cache = self.regs_cache
        hit = cache[t]
        if hit is not None and hit[0] == key:
            return hit[1]
        # MathRegs reads only the thread's ThreadConfig row and its bank's Config words (and
        # what it derives, the RWC moves and plans, depends on nothing else): the same bytes
        # again (a kernel's setup rewritten tile after tile, or another thread's writes
        # moving the versions) find the same object; first the bytes this thread saw last
        # (compared, not hashed), then any seen before
        # (through plain ndarray views: a WriteCountedArray's view costs a Python call)
        row_bytes = self.thread_config.regs.view(np.ndarray)[t].tobytes()
        words_bytes = self.config.words.view(np.ndarray)[self.thread_config.bank(t)].tobytes()
        last = self._last_content[t]
        if last is not None and last[0] == row_bytes and last[1] == words_bytes:
            cache[t] = (key, last[2])
            return last[2]
        content = (t, row_bytes, words_bytes)
        regs = self._regs_by_content.get(content)  # type: ignore[assignment]
        if regs is None:
            regs = MathRegs(self.config, self.thread_config, t)
            if hit is not None and hit[1].signature == regs.signature:
                regs = hit[1]  # the same values written again (a program's setup, rerun)
            if len(self._regs_by_content) > 256:
                self._regs_by_content.clear()
            self._regs_by_content[content] = regs
        self._last_content[t] = (row_bytes, words_bytes, regs)
        cache[t] = (key, regs)
        return regs

    def sync_dst_config(self, t: int, regs: MathRegs | None = None) -> None:
        """Keep the Dst addressing bits in step with the configuration."""
        regs = regs or self.math_regs(t)
        self.dst.remap_addrs = regs.remap_addrs
        self.dst.swizzle_32b = regs.swizzle_32b

    def src_format(self, t: int, which: str, regs: MathRegs | None = None) -> int:
        """The data-format code the Matrix Unit uses for SrcA (``which="A"``) or SrcB."""
        regs = regs or self.math_regs(t)
        if which == "A":
            if regs.implied_a:
                return int(self.srca.implied_fmt[self.srca.matrix_bank])
            return regs.srca_fmt
        if regs.implied_b:
            return int(self.srcb.implied_fmt[self.srcb.matrix_bank])
        return regs.srcb_fmt

    def dst_base(self, t: int, field: int, regs: MathRegs | None = None) -> int:
        """``field + DEST_TARGET_REG_CFG_MATH_Offset + RWC.Dst + DEST_REGW_BASE_Base``
        (unmasked)."""
        regs = regs or self.math_regs(t)
        return field + regs.dst_offset + int(self.rwc.v[t, DST])

    def fidelity_phase(self, t: int, regs: MathRegs | None = None) -> int:
        regs = regs or self.math_regs(t)
        return (int(self.rwc.v[t, FIDELITY]) + regs.fidelity_base) & 3

    def math_config(self, t: int, regs: MathRegs | None = None) -> fpu.MathConfig:
        """The configuration a Matrix Unit instruction of thread ``t`` reads (the same object
        for as long as the configuration and the Src formats stay the same)."""
        regs = regs or self.math_regs(t)
        return regs.math_config(self.src_format(t, "A", regs), self.src_format(t, "B", regs))

    def advance(self, t: int, addr_mode: int, update_fidelity: bool = True) -> None:
        """ApplyAddrMod (or ApplyPartialAddrMod) with the section ``addr_mode`` selects.

        :func:`~.rwc.apply_addr_mod` is a pure function of the counters, the section and
        ``update_fidelity``; its results are remembered per configuration (in
        :class:`MathRegs`, which a ThreadConfig write replaces), so a loop that revisits the
        same counter values (every matmul) pays one dictionary lookup per instruction."""
        self._advance(t, addr_mode, update_fidelity, self.math_regs(t),
                      self.rwc.v[t].tolist())

    def _advance(self, t: int, addr_mode: int, update_fidelity: bool, regs: MathRegs,
                 row_list: list[int]) -> None:
        """:meth:`advance` with the thread's :class:`MathRegs` and RWC row already read."""
        row = tuple(row_list)
        moves = regs.moves
        key = (addr_mode, update_fidelity, row)
        new = moves.get(key)
        if new is None:
            new = moves[key] = self._apply(t, addr_mode, update_fidelity, row)
            if len(moves) > 65536:  # a program wandering through many states: start over
                moves.clear()
        self.rwc.v[t] = new

    def _apply(self, t: int, addr_mode: int, update_fidelity: bool,
               row: tuple[int, ...]) -> np.ndarray:
        counters = _CounterRow(list(row))
        index = addr_mod_index(counters, self.thread_config, t, addr_mode)  # type: ignore[arg-type]
        am = self.math_regs(t).addr_mod(index)
        if am.ab2:
            raise NotImplementedInstruction("not implemented: ADDR_MOD_AB2 section bits (their "
                                            "effect is not documented)")
        apply_addr_mod(counters, t, am, update_fidelity)  # type: ignore[arg-type]
        return np.array(counters.row, dtype=self.rwc.v.dtype)

    def flip_banks(self, t: int, flips: int, regs: MathRegs | None = None) -> None:
        """The end-of-instruction bank flips of MVMUL/ELW*/SETRWC (``clear_dvalid`` /
        ``clear_ab_vld``): bit 0 SrcA, bit 1 SrcB; CLR_DVALID_Src?_Disable keeps the bank
        with the Matrix Unit but it still moves to the other bank."""
        if not flips & 3:
            return
        if regs is not None:
            keep_a, keep_b = regs.clr_dvalid_disable
        else:  # (what MathRegs reads, without the rest of it)
            tc_regs = self.thread_config.regs
            (ia, sa, ma), (ib, sb, mb) = _CLR_DVALID_DISABLE
            keep_a = bool(tc_regs.item(t, ia) >> sa & ma)
            keep_b = bool(tc_regs.item(t, ib) >> sb & mb)
        if flips & 1:
            self.srca.release_to_unpackers(flip=True, release=not keep_a)
        if flips & 2:
            self.srcb.release_to_unpackers(flip=True, release=not keep_b)

    def _fpu(self, call: Callable[[], None]) -> None:
        """Run an fpu.py operation; the configurations it rejects are undefined behaviour."""
        try:
            call()
        except fpu.FpuError as e:
            self.report_ub(e.message)

    # -- SETRWC, INCRWC ---------------------------------------------------------------------

    def setrwc(self, t: int, f: Fields) -> None:
        """SETRWC: the counters (:func:`~.rwc.setrwc`, a function of the fields and the
        thread's counters only, remembered per pair with :attr:`rwc_plans`), then the bank
        flips of ``clear_ab_vld``."""
        v = self.rwc.v
        key = (id(f), v[t].tobytes())
        hit = self._setrwc.get(key) if self.rwc_plans else None
        if hit is not None and hit[0] is f:
            v[t] = hit[1]
        else:
            setrwc(self.rwc, t, f["rwc_cr"], f["rwc_d"], f["rwc_b"], f["rwc_a"], f["BitMask"])
            if self.rwc_plans:
                if len(self._setrwc) > 4096:
                    self._setrwc.clear()
                self._setrwc[key] = (f, v[t].copy())
        flips = f["clear_ab_vld"]
        if flips & 3:
            self.flip_banks(t, flips)

    def incrwc(self, t: int, f: Fields) -> None:
        incrwc(self.rwc, t, f["rwc_cr"] & 7, f["rwc_d"], f["rwc_b"], f["rwc_a"])

    # -- arithmetic and data movement (through fpu.py) --------------------------------------

    def mvmul(self, t: int, f: Fields) -> None:
        """MVMUL, the hot path of every matmul: :meth:`_arith` for one operation, with the
        configuration from :meth:`math_regs` and no per-instruction allocations but the
        call."""
        regs = self.math_regs(t)
        dst, srca, srcb = self.dst, self.srca, self.srcb
        dst.remap_addrs, dst.swizzle_32b = regs.remap_addrs, regs.swizzle_32b
        cfg = regs.math_config(
            int(srca.implied_fmt[srca.matrix_bank]) if regs.implied_a else regs.srca_fmt,
            int(srcb.implied_fmt[srcb.matrix_bank]) if regs.implied_b else regs.srcb_fmt)
        v = self.rwc.v[t].tolist()
        try:
            fpu.mvmul(dst, srca, srcb, srca_row=v[SRCA], srcb_row=v[SRCB],
                      dst_row=(f["dst"] + regs.dst_offset + v[DST]) & 0x3FF,
                      phase=(v[FIDELITY] + regs.fidelity_base) & 3, cfg=cfg,
                      bcast_srcb_row=bool(f["instr_mod19"] & 1))
        except fpu.FpuError as e:
            self.report_ub(e.message)
        self.flip_banks(t, f["clear_dvalid"], regs)
        self._advance(t, f["addr_mode"], True, regs, v)

    def mvmul_run(self, t: int, words: Collection[int], limit: int) -> int:
        """Execute the MVMULs at the head of ``words`` (thread ``t``'s pending instructions)
        in one compiled call, if there are at most ``limit``; returns how many ran (0: none,
        run them one by one).

        The caller (:meth:`.Coprocessor.run`) calls this only when the first MVMUL may issue
        and no other thread has anything left, so running the MVMULs back to back is what
        the scheduler would do. A run needs one configuration and the same Src banks, so it
        ends at the first MVMUL that flips a bank; it is worked out once per (pending words,
        RWCs, configuration) (:class:`MvmulPlan`, kept on :class:`MathRegs`, so a matmul's
        runs repeat from the second tile on without Python work per instruction). Its result
        is that of :meth:`mvmul` per instruction, bit for bit."""
        regs = self.math_regs(t)
        key = (tuple(words), tuple(self.rwc.v[t].tolist()))
        plan = regs.plans.get(key, _UNPLANNED)
        if plan is _UNPLANNED:
            head = list(itertools.takewhile(lambda w: w >> 24 == MVMUL_OPCODE, key[0]))
            plan = self._mvmul_plan(t, regs, head, list(key[1])) if len(head) > 1 else None
            if len(regs.plans) > 4096:
                regs.plans.clear()
            regs.plans[key] = plan
        if plan is None or len(plan.rows) > limit:
            return 0
        dst, srca, srcb = self.dst, self.srca, self.srcb
        cfg = self.math_config(t, regs)
        dst.remap_addrs, dst.swizzle_32b = regs.remap_addrs, regs.swizzle_32b
        try:
            if not fpu.mvmul_run(dst, srca, srcb, plan.rows, cfg):
                return 0
        except fpu.FpuError:
            return 0  # one by one, each reporting it
        self.flip_banks(t, plan.flips, regs)
        self.rwc.v[t] = plan.end
        return len(plan.rows)

    def _mvmul_plan(self, t: int, regs: MathRegs, words: list[int], v: list[int]
                    ) -> MvmulPlan | None:
        """The rows and RWC updates of the MVMULs ``words`` from RWCs ``v``, as :meth:`mvmul`
        computes them; stops before an instruction whose RWC update fails (it then runs alone
        and reports its error) and after the first that flips a bank."""
        rows: list[tuple[int, ...]] = []
        flips = 0
        for w in words:
            f = decode(w).fields
            row = fpu.run_row(v[SRCA], v[SRCB], (f["dst"] + regs.dst_offset + v[DST]) & 0x3FF,
                              v[FIDELITY] + regs.fidelity_base, bool(f["instr_mod19"] & 1))
            key = (f["addr_mode"], True, tuple(v))
            new = regs.moves.get(key)
            if new is None:
                try:
                    new = regs.moves[key] = self._apply(t, f["addr_mode"], True, tuple(v))
                except EmulationError:
                    break
            rows.append(row)
            v = new.tolist()
            flips = f["clear_dvalid"]
            if flips & 3:
                break
        if len(rows) < 2:
            return None
        return MvmulPlan(np.array(rows, dtype=np.int64), np.array(v, dtype=self.rwc.v.dtype),
                         flips)

    def _arith(self, t: int, f: Fields, op: str) -> None:
        regs = self.math_regs(t)
        self.sync_dst_config(t, regs)
        cfg = self.math_config(t, regs)
        dst, srca, srcb = self.dst, self.srca, self.srcb
        rows = dict(srca_row=self.rwc.get(t, SRCA), srcb_row=self.rwc.get(t, SRCB),
                    dst_row=self.dst_base(t, f["dst"], regs) & 0x3FF)
        phase = self.fidelity_phase(t, regs)
        mod = f["instr_mod19"]
        if op == "MVMUL":
            self._fpu(lambda: fpu.mvmul(dst, srca, srcb, **rows, phase=phase, cfg=cfg,
                                        bcast_srcb_row=bool(mod & 1)))
        elif op in ("ELWADD", "ELWSUB", "ELWMUL"):
            fn = {"ELWADD": fpu.elwadd, "ELWSUB": fpu.elwsub, "ELWMUL": fpu.elwmul}[op]
            kw = dict(bcast_srcb_row=bool(mod & 2), bcast_srcb_col=bool(mod & 1), phase=phase)
            if op != "ELWMUL":
                kw["accumulate"] = bool(f["dest_accum_en"])
            elif f["dest_accum_en"]:
                self.report_ub("ELWMUL with dest_accum_en (ELWMUL always accumulates)")
            self._fpu(lambda: fn(dst, srca, srcb, **rows, cfg=cfg, **kw))
        elif op == "GAPOOL":
            self._fpu(lambda: fpu.gapool(dst, srca, srcb, **rows, phase=phase, cfg=cfg))
        else:  # GMPOOL
            fn = fpu.gmpool_argmax if f["max_pool_index_en"] else fpu.gmpool
            self._fpu(lambda: fn(dst, srca, srcb, **rows, cfg=cfg))
        self.flip_banks(t, f["clear_dvalid"], regs)
        if op in ("GMPOOL", "GAPOOL"):
            if f["pool_addr_mode"] > 7:
                self.report_ub(f"{op} pool_addr_mode {f['pool_addr_mode']} (sections are 0..7)")
            self.advance(t, f["pool_addr_mode"] & 7)
        else:
            self.advance(t, f["addr_mode"])

    def blocked_mov_columns(self) -> np.ndarray:
        """The columns MOVA2D, MOVB2D, MOVD2A and MOVD2B leave alone: column ``c`` when bit
        ``c & 1`` of ``LaneConfig[c // 2].BLOCK_DEST_MOV`` (LaneConfig bits 9..10) is set (ISA
        documentation, SFPCONFIG and the MOV* functional models)."""
        lane_config = self.lane_config
        if lane_config.tobytes() == bytes(lane_config.nbytes):  # no LaneConfig (usual)
            return _NO_COLUMNS
        block = (lane_config[np.arange(16) // 2] >> 9) & 3
        return np.flatnonzero(block >> (np.arange(16) & 1) & 1)

    def _move(self, t: int, f: Fields, op: str) -> None:
        if op == "MOVA2D" and self.mova2d_plans:
            self._mova2d_planned(t, f)
            return
        self._move_columns(t, f, op)

    def _mova2d_planned(self, t: int, f: Fields) -> None:
        """MOVA2D from a :class:`_Mova2d` plan when one was made for its word, thread,
        configuration, RWCs and Src implied formats (no LaneConfig column masks, the
        compiled kernels loaded); else the long way, which makes one when it reported
        nothing."""
        kernels = fpu_jit._LOADED.get("kernels") if fpu.USE_JIT else None
        lanes = self.lane_config.tobytes()
        if not kernels or (lanes != self._no_lanes and lanes != bytes(len(lanes))) \
                or not self.mova2d_plans:
            self._move_columns(t, f, "MOVA2D")
            return
        regs = self.math_regs(t)
        srca, srcb, dst, rwc = self.srca, self.srcb, self.dst, self.rwc
        row = rwc.v[t]
        key = (id(f), t, id(regs), row.tobytes(), srca.implied_fmt.item(srca.matrix_bank),
               srcb.implied_fmt.item(srcb.matrix_bank))
        plan = self._mova2d.get(key)
        if plan is not None and plan.f is f and plan.regs is regs:
            self.sync_dst_config(t, regs)
            kernels.src2dst_planned(dst.bits, dst.valid, srca.cells, srca.matrix_bank,
                                    plan.plan, rwc.v, t)  # (and rwc.v[t] = plan.rwc_after)
            return
        before, ubs = row.tolist(), self._ubs
        self._move_columns(t, f, "MOVA2D")
        if self._ubs != ubs:
            return
        cfg = self.math_config(t, regs)
        n = 8 if f["instr_mod"] >> 1 & 1 else 1
        drow0 = (f.get("dst", 0) + regs.dst_offset + before[DST]) & 0x3FF & (0x400 - n)
        srow0 = (f["src"] + before[SRCA]) & (0x40 - n)
        bf16 = not cfg.fp16a_force and F.src_style(cfg.srca_fmt) in ("bf16", "tf32")
        tf32 = not cfg.fp16a_force and int(cfg.srca_fmt) == F.DataFormat.TF32
        lo = bool(f.get("dest_32b_lo", 0))
        # (what _k_src2dst does with sstep 1, col0 False and the full premask)
        table = dst.phys_table(tf32 or lo)
        rows = [(int(table[(drow0 + k) & 0x3FF]), (srow0 + k) & 0x3F) for k in range(n)]
        after = rwc.v[t].copy()
        args = np.array([0, not cfg.zero_flag_disabled_src, bf16, tf32, lo, F.SRC_MASK, n,
                         *itertools.chain.from_iterable(rows), *after.tolist()],
                        dtype=np.int64)
        args.flags.writeable = False
        if len(self._mova2d) > 1024:
            self._mova2d.clear()
        self._mova2d[key] = _Mova2d(f, regs, args, after)

    def _move_columns(self, t: int, f: Fields, op: str) -> None:
        blocked = self.blocked_mov_columns() if op != "MOVB2A" else _NO_COLUMNS
        if blocked.size:  # do the move, then put the blocked columns back as they were
            if op in ("MOVA2D", "MOVB2D"):
                kept = self.dst.bits[:, blocked].copy()
                self._move_all_columns(t, f, op)
                self.dst.bits[:, blocked] = kept
            else:
                src = self.srca if op == "MOVD2A" else self.srcb
                kept = src.cells[:, :, blocked].copy()
                self._move_all_columns(t, f, op)
                src.cells[:, :, blocked] = kept
            return
        self._move_all_columns(t, f, op)

    def _move_all_columns(self, t: int, f: Fields, op: str) -> None:
        regs = self.math_regs(t)
        self.sync_dst_config(t, regs)
        if op in ("MOVD2B", "MOVB2D"):
            # the moves into and out of SrcB take the implied format of SrcB's bank in both
            # roles (the official simulator; SrcA's configured formats otherwise)
            implied = int(self.srcb.implied_fmt[self.srcb.matrix_bank])
            cfg = regs.math_config(implied if regs.implied_a else regs.srca_fmt,
                                   implied if regs.implied_b else regs.srcb_fmt)
        else:
            cfg = self.math_config(t, regs)
        dst, rwc = self.dst, self.rwc
        dst_row = self.dst_base(t, f.get("dst", 0), regs) & 0x3FF
        lo = bool(f.get("dest_32b_lo", 0))
        if op in ("MOVD2A", "MOVD2B"):
            four = bool(f["instr_mod"] >> 1 & 1)
            src, col = (self.srca, SRCA) if op == "MOVD2A" else (self.srcb, SRCB)
            fn = fpu.movd2a if op == "MOVD2A" else fpu.movd2b
            src_row = f["src"] + rwc.get(t, col)
            self._fpu(lambda: fn(dst, src, dst_row=dst_row, src_row=src_row, cfg=cfg,
                                 four_rows=four, use_dst32b_lo=lo))
        elif op == "MOVA2D":
            eight = bool(f["instr_mod"] >> 1 & 1)
            src_row = f["src"] + rwc.get(t, SRCA)
            self._fpu(lambda: fpu.mova2d(dst, self.srca, src_row=src_row, dst_row=dst_row,
                                         cfg=cfg, eight_rows=eight, use_dst32b_lo=lo))
        elif op == "MOVB2D":
            mod = f["movb2d_instr_mod"]
            src_row = f["src"] + rwc.get(t, SRCB)
            self._fpu(lambda: fpu.movb2d(dst, self.srcb, src_row=src_row, dst_row=dst_row,
                                         cfg=cfg, four_rows=bool(mod & 4),
                                         bcast_row_to8=bool(mod & 2), bcast_col0=bool(mod & 1),
                                         use_dst32b_lo=lo))
        else:  # MOVB2A
            four = bool(f["instr_mod"] >> 1 & 1)
            fpu.movb2a(self.srca, self.srcb, srcb_row=f["srcb"] + rwc.get(t, SRCB),
                       srca_row=f["srca"] + rwc.get(t, SRCA), four_rows=four,
                       flush=not regs.zero_flag_disabled_src)
        self.advance(t, f["addr_mode"])

    # -- ZEROACC, ZEROSRC, TRNSPSRCB --------------------------------------------------------

    def zeroacc_rows(self, t: int, f: Fields) -> np.ndarray | slice:
        """The physical Dst rows ZEROACC marks (empty for an out-of-range 16-row block; a
        slice for half or all of Dst)."""
        mode = f["clear_mode"] & 3
        imm = f["where"] & 0x3FF
        if mode == ZEROACC_ONE_ROW:
            row = self.dst_base(t, imm) & 0x3FF
            is32 = bool(self.cfg(t, "ALU_ACC_CTRL_Fp32_enabled")
                        or self.cfg(t, "ALU_ACC_CTRL_INT8_math_enabled"))
            return np.atleast_1d(self.dst.phys(row, is32))
        if mode == ZEROACC_16_ROWS:
            imm &= 0xFF  # current silicon uses the low 8 bits
            i = np.arange(16)
            if f["use_32_bit_mode"]:
                return imm * 32 + (i & 8) * 2 + (i & 7) if imm < 32 else np.zeros(0, dtype=int)
            return imm * 16 + i if imm < 64 else np.zeros(0, dtype=int)
        if mode == ZEROACC_HALF:
            return slice(512, 1024) if imm & 1 else slice(0, 512)
        return slice(0, 1024)

    def zeroacc(self, t: int, f: Fields) -> None:
        """ZEROACC: mark 1, 16, 512 or 1024 Dst rows invalid (``clear_zero_flags`` =
        Revert). With :attr:`rwc_plans`, half or all of Dst reads only the Dst addressing
        bits, and the 1- and 16-row forms' rows and RWC update are remembered per (fields,
        thread, configuration, counters) when they reported nothing."""
        if not self.rwc_plans:
            self._zeroacc_long(t, f)
            return
        mode = f["clear_mode"]
        if (mode == ZEROACC_HALF or mode == ZEROACC_ALL) and not f["clear_zero_flags"]:
            # half or all of Dst (nothing to report): the rows are the fields'; of the
            # configuration only sync_dst_config's two bits
            # (item() with all indices: no view of the write-counting arrays)
            bank = self.thread_config.bank(t)
            words = self.config.words
            dst = self.dst
            dst.remap_addrs = bool(words.item(bank, _REMAP_ADDRS[0]) >> _REMAP_ADDRS[1]
                                   & _REMAP_ADDRS[2])
            dst.swizzle_32b = bool(words.item(bank, _SWIZZLE_32B[0]) >> _SWIZZLE_32B[1]
                                   & _SWIZZLE_32B[2])
            if mode == ZEROACC_ALL:
                dst.valid[:] = False
            elif f["where"] & 1:
                dst.valid[512:1024] = False
            else:
                dst.valid[0:512] = False
            return
        regs = self.math_regs(t)
        v = self.rwc.v
        key = (id(f), t, id(regs), v[t].tobytes())
        hit = self._zeroacc.get(key)
        dst = self.dst
        if hit is not None and hit[0] is f and hit[1] is regs:
            self.sync_dst_config(t, regs)
            dst.valid[hit[2]] = False
            if hit[3] is not None:
                v[t] = hit[3]
            return
        ubs = self._ubs
        rows = self._zeroacc_long(t, f)
        if self._ubs == ubs:  # (so not Revert: the rows were marked invalid)
            if isinstance(rows, np.ndarray):
                rows = rows.copy()
                rows.flags.writeable = False
            after = v[t].copy() if f["clear_mode"] & 3 in (ZEROACC_ONE_ROW,
                                                           ZEROACC_16_ROWS) else None
            if len(self._zeroacc) > 1024:
                self._zeroacc.clear()
            self._zeroacc[key] = (f, regs, rows, after)

    def _zeroacc_long(self, t: int, f: Fields) -> np.ndarray | slice:
        """ZEROACC the long way; returns the rows it marked."""
        self.sync_dst_config(t)
        if f["clear_mode"] > 3:
            self.report_ub(f"ZEROACC clear_mode {f['clear_mode']} (only 0..3 exist)")
        revert = bool(f["clear_zero_flags"])
        if revert:
            self.report_ub("ZEROACC with Revert (clear_zero_flags) set")
        rows = self.zeroacc_rows(t, f)
        self.dst.valid[rows] = revert
        if f["clear_mode"] & 3 in (ZEROACC_ONE_ROW, ZEROACC_16_ROWS):
            self.advance(t, f["addr_mode"])
        return rows

    def zerosrc(self, t: int, f: Fields) -> None:
        """ZEROSRC: clear the unpacker's bank, the Matrix Unit's (``write_mode``) or both
        (``bank_mask``) of SrcA (bit 0) and/or SrcB (bit 1). ``zero_val`` bit 0 selects -inf
        (all ones) as the clear value, on SrcA only (Wormhole's documented NegativeInfSrcA);
        other ``zero_val`` bits are Blackhole's wider clear-value field, not documented."""
        if f["zero_val"] & ~1:
            raise NotImplementedInstruction(
                f"not implemented: ZEROSRC zero_val={f['zero_val']:#x}")
        neg_inf = bool(f["zero_val"] & 1)
        for bit, src in ((1, self.srca), (2, self.srcb)):
            if not f["src_mask"] & bit:
                continue
            if f["bank_mask"]:
                banks = [0, 1]
            elif f["write_mode"]:
                banks = [src.matrix_bank]
            else:
                banks = [src.unpacker_bank]
            value = F.SRC_MASK if neg_inf and bit == 1 else 0
            for b in banks:
                src.cells[b] = value

    def trnspsrcb(self, t: int, f: Fields) -> None:
        """TRNSPSRCB: transpose rows 16..31 of the Matrix Unit's SrcB bank in place."""
        bank = self.srcb.cells[self.srcb.matrix_bank]
        bank[16:32] = bank[16:32].T.copy()

    # -- bank hand-over ---------------------------------------------------------------------

    def setdvalid(self, t: int, f: Fields) -> None:
        """SETDVALID: the unpackers' SrcA (bit 0) / SrcB (bit 1) banks go to the Matrix Unit.
        Unsupported on Blackhole (its implied format becomes unpredictable): reported as
        undefined behaviour; when continuing, the implied format is left as it was."""
        flips = f["setvalid"]
        if flips & ~3:
            self.report_ub(f"SETDVALID {flips:#x}: only bits 0 and 1 are defined")
        self.report_ub("SETDVALID is unsupported on Blackhole (UNPACR_NOP 0x7 is the "
                       "alternative)")
        if flips & 1:
            self.srca.give_to_matrix_unit(t, self.thread_config.get(t, "SRCA_SET_Base"))
        if flips & 2:
            self.srcb.give_to_matrix_unit(t, self.thread_config.get(t, "SRCB_SET_Base"))

    def cleardvalid(self, t: int, f: Fields) -> None:
        """CLEARDVALID: the Matrix Unit's banks go back to the unpackers and (unless
        KeepReadingSameSrc, bit 1 of ``reset``) the Matrix Unit flips to the other bank; bit
        0 of ``reset`` resets everything (unsupported: reported, then done as documented)."""
        flips, reset = f["cleardvalid"], f["reset"]
        if reset & ~3:
            raise NotImplementedInstruction(f"not implemented: CLEARDVALID reset={reset:#x} "
                                            "(Blackhole's dest-dvalid fields)")
        if reset & 1:
            self.report_ub("CLEARDVALID Reset is unsupported functionality")
            for src in (self.srca, self.srcb):
                src.owners.changes += 1
                src.matrix_bank = src.unpacker_bank = 0
                src.allowed_client = [SrcClient.UNPACKERS, SrcClient.UNPACKERS]
                src.implied_fmt[:] = 0
            return
        keep = bool(reset & 2)
        if flips & 1:
            self.srca.release_to_unpackers(flip=not keep)
        if flips & 2:
            self.srcb.release_to_unpackers(flip=not keep)

    def unpacr_nop_wait(self, t: int, f: Fields) -> str | None:
        """UNPACR_NOP's ZEROSRC form waits for the bank to belong to the unpackers."""
        if f["Unpack_Pop"] & 3 != 1:
            return None
        src = self.srcb if f["Unpacker_Select"] else self.srca
        like_unpacr = f["Bank_Clr_Ctrl"]  # WaitLikeUnpacr (bit 4 of the operation)
        bank = src.unpacker_bank if like_unpacr else src.matrix_bank
        if src.allowed_client[bank] == _UNPACKERS:
            return None
        # (a retry gets the same string: Coprocessor keeps its blocked object)
        return _zerosrc_reason(src.name, bank)

    def unpacr_nop(self, t: int, f: Fields) -> None:
        """UNPACR_NOP: the SETDVALID form (low bits 0x7) and the ZEROSRC form (low bits
        0x1)."""
        form = self._zerosrc_forms.get(id(f)) if self.rwc_plans else None
        if form is not None and form[0] is f:  # the ZEROSRC form on one bank, decoded
            src = self.srcb if form[1] else self.srca
            src.cells[src.unpacker_bank] = form[2]
            return
        which = f["Unpacker_Select"]
        src = self.srcb if which else self.srca
        low = f["Unpack_Pop"] | (f["Src_ClrVal_Ctrl"] << 2) | (f["Bank_Clr_Ctrl"] << 4)
        if low == 0x7:  # SETDVALID
            base = self.thread_config.get(t, "SRCB_SET_Base" if which else "SRCA_SET_Base")
            src.implied_fmt[src.unpacker_bank] = self.cfg(
                t, f"THCON_SEC{which}_REG2_Out_data_format")
            src.give_to_matrix_unit(t, base)
            return
        if f["Unpack_Pop"] == 1:  # op 0x1: ZEROSRC
            neg_inf = bool(f["Src_ClrVal_Ctrl"] & 1)
            both = bool(f["Src_ClrVal_Ctrl"] & 2)
            if both:
                self.report_ub("UNPACR_NOP ZEROSRC on both banks is unsupported functionality")
            banks = [0, 1] if both else [src.unpacker_bank]
            for b in banks:
                src.cells[b] = F.SRC_MASK if neg_inf else 0
            if not both and self.rwc_plans:  # (nothing to report: remember the form)
                if len(self._zerosrc_forms) > 256:
                    self._zerosrc_forms.clear()
                self._zerosrc_forms[id(f)] = (f, which, F.SRC_MASK if neg_inf else 0)
            return
        raise NotImplementedInstruction(f"not implemented: UNPACR_NOP (operation {low:#x})")


def _bank_wait(src: SrcRegs) -> str | None:
    if src.matrix_ready():
        return None
    # (a retry gets the same string: Coprocessor keeps its blocked object)
    return _bank_reason(src.name, src.matrix_bank)


@functools.cache
def _bank_reason(name: str, bank: int) -> str:
    return f"waiting for {name} bank {bank} to be given to the Matrix Unit"


@functools.cache
def _zerosrc_reason(name: str, bank: int) -> str:
    return f"UNPACR_NOP ZEROSRC waiting for {name} bank {bank} to belong to the unpackers"


_MATRIX_UNIT = SrcClient.MATRIX_UNIT
_UNPACKERS = SrcClient.UNPACKERS

__all__ = ["IMPLIED_CODE", "MVMUL_OPCODE", "NEEDS_BOTH", "NEEDS_SRCA", "NEEDS_SRCB",
           "MathRegs", "MatrixUnit", "MvmulPlan", "thread_cfg"]
