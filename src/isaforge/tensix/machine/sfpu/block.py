"""Loops of Vector Unit instructions executed at once (:class:`SfpBlocks`): a kernel's SFP
code is a body of a few instructions repeated over Dst (add1: ``SFPLOAD``, ``SFPADD``,
``SFPNOP``, ``SFPSTORE`` 32 times, the Dst address moving by 2). Such a run executes as one
pass over the body whose values are ``(iterations, 32)`` arrays: each body instruction once,
on every iteration's lanes.

That is the result of one instruction at a time only when nothing links the iterations, so
a body is taken only when:

* its instructions are SFPLOAD, SFPSTORE, SFPMAD/SFPADD/SFPMUL (no indirect VA/VD),
  SFPLOADI, SFPNOP, none with ``VD >= 12`` (the back-door template load), no SFPLOAD mode
  keeping half of the old LReg;
* every LReg it reads is one it does not write, or one an earlier body instruction wrote (no
  value carried from one iteration to the next; the last iteration's values are kept);
* (when it runs) every lane is enabled (no LaneConfig, no lane flags in use, no
  SFPLOADMACRO work), the RWCs stay where they are (its AddrMods move nothing: the Dst
  addresses are the instructions' immediates), no SFPLOAD/SFPSTORE uses the stack pointer
  (``MOD0_FMT_INT32_ALL``), every Dst row it touches is valid (no undefined behaviour to
  report), and no Dst cell is written twice or read by one iteration after another
  iteration wrote it, unless the body's order gives the same.

Otherwise the instructions execute one at a time (:meth:`~isaforge.tensix.machine.
coprocessor.Coprocessor._sfp_run` does both). ``tests/tensix/machine/test_sfp_runs.py``
compares the two on random bodies.

A body of SFPLOAD, a MAD and SFPSTORE of its result in BF16 (add1's) whose stores write the
cells its loads read (or none of them) runs as one compiled call, element by element
(:func:`.fma_jit._load_mad_store_prog`; exact products, add1's SFPADD, add in the machine's
FP32 where that gives the model's bits: ``SfpBlocks.fused_add``). Single instructions
issued while another thread runs take short ways too (:meth:`SfpBlocks.single`,
:meth:`~SfpBlocks.loadi`, :meth:`~SfpBlocks.nop`). Each short way has a switch (``SfpBlocks.*``);
``tests/tensix/machine/test_sfp_fast.py`` compares each on and off.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ....core.errors import DecodeError
from ...decode import decode
from .. import formats as F
from .arithmetic import INDIRECT_VA, INDIRECT_VD, NEGATE_VB, NEGATE_VC
from .base import ALL_LANES, SIGN
from .convert import (
    BF16,
    FP16,
    FP32,
    HI16,
    HI16_ONLY,
    INT8,
    INT8_COMP,
    INT16,
    INT32,
    INT32_SM,
    LO16,
    LO16_ONLY,
    LOAD32,
    LOAD_TABLE_MODES,
    LOADI_LOWER,
    LOADI_UPPER,
    SRCB,
    STORE32,
    UINT16,
    ZERO,
    load_table,
    loadi_value,
    store_convert,
    store_table_bf16,
)
from .fma import compiled, fma
from .fma_jit import ADD_FAST
from .lregs import N_WRITABLE, all_true, all_zero
from .ops import Op, parse, sfp_names

#: the fewest iterations worth a pass, the longest body looked for
MIN_REPS, MAX_PERIOD = 4, 8
_MAD = frozenset({"SFPMAD", "SFPADD", "SFPMUL"})
_NAMES = frozenset({"SFPLOAD", "SFPSTORE", "SFPLOADI", "SFPNOP"}) | _MAD
#: SFPLOAD modes (resolved) a pass reads: a function of the Dst cell alone
_LOAD_MODES = frozenset(LOAD_TABLE_MODES | {FP32, INT32, INT32_SM})
#: SFPSTORE modes (resolved) a pass writes (not the stack pointer's INT32_ALL)
_STORE_MODES = frozenset({FP16, BF16, FP32, INT32, INT32_SM, INT8, INT8_COMP, LO16_ONLY,
                          UINT16, HI16_ONLY, INT16, LO16, HI16, ZERO})
_LOADI_MODES = frozenset({0, 1, 2, 4, 8, 10})


@cache
def _store_bf16_cells() -> np.ndarray:
    """``store_table_bf16()`` as the uint16 cells SFPSTORE writes (its values are < 2**16)."""
    table = store_table_bf16()
    cells = table.astype(np.uint16)
    assert np.array_equal(cells, table)
    cells.flags.writeable = False
    return cells


def _key(op: Op) -> int:
    """What must be equal in every iteration: the word, but an SFPLOAD/SFPSTORE's Imm10."""
    return op.word & ~0x3FF if op.name in ("SFPLOAD", "SFPSTORE") else op.word


def _body_ok(body: list[Op]) -> bool:
    """Whether ``body`` may run as a pass (its instructions, and no value carried between
    iterations: see the module documentation)."""
    writes: list[int | None] = []
    for op in body:
        if op.name not in _NAMES:
            return False
        if op.name == "SFPNOP":
            writes.append(None)
            continue
        if op.vd >= 12:
            return False
        if op.name in _MAD and op.mod & (INDIRECT_VA | INDIRECT_VD):
            return False
        if op.name == "SFPLOAD" and (op.vd >= N_WRITABLE or op.mod in (LO16_ONLY, HI16_ONLY)):
            return False
        if op.name == "SFPLOADI" and op.mod not in _LOADI_MODES:
            return False
        writes.append(op.vd if op.name != "SFPSTORE" and op.vd < N_WRITABLE else None)
    written = {w for w in writes if w is not None}
    seen: set[int] = set()
    for op, w in zip(body, writes, strict=True):
        for r in _reads(op):
            if r in written and r not in seen:
                return False  # carried from the previous iteration
        if w is not None:
            seen.add(w)
    return True


def _reads(op: Op) -> tuple[int, ...]:
    if op.name in _MAD:
        return (op.va, op.b, op.c)
    if op.name == "SFPSTORE":
        return (op.vd,)
    if op.name == "SFPLOADI" and op.mod in (8, 10):  # the half it keeps
        return (op.vd,)
    return ()


class _Plan:
    """A block's Dst cells (per SFPLOAD/SFPSTORE body position: its mode, 32-bit or not, the
    ``(iterations, 32)`` flat DstBits indices, those of the low halves or None) and the Dst
    rows it touches and writes."""

    __slots__ = ("cells", "rows", "stored", "fused", "prog")

    def __init__(self, cells: dict[int, tuple[int, bool, np.ndarray, np.ndarray | None]],
                 rows: np.ndarray, stored: np.ndarray) -> None:
        self.cells, self.rows, self.stored = cells, rows, stored
        #: a load-MAD-store body in one compiled call (:meth:`SfpBlocks._fusable`), or None
        self.fused: tuple[Any, ...] | None = None
        #: that call's indices and scalars (:func:`.fma_jit._load_mad_store_prog`), or None
        self.prog: np.ndarray | None = None


class _Loop:
    """A loop's words worked out once: the words, its Ops, body and iterations, the AddrMod
    sections its SFPLOAD/SFPSTOREs apply (empty: it has none), and its plans by (RWC row
    bytes, Sp, _SfpuRegs' id, MathRegs' id) -> (those objects, the plan or None)."""

    __slots__ = ("words", "period", "ops", "body", "reps", "modes", "plans")

    def __init__(self, words: tuple[int, ...], ops: list[Op], period: int) -> None:
        self.words, self.period, self.ops = words, period, ops
        self.body = ops[:period]
        self.reps = len(ops) // period
        # (in the order of a set, as the long way tries them)
        self.modes = tuple({op.addr_mode for op in self.body
                            if op.name in ("SFPLOAD", "SFPSTORE")})
        self.plans: dict[tuple[object, ...], tuple[object, object, _Plan | None]] = {}


class _Single:
    """A single SFPLOAD/SFPSTORE worked out for one thread, RWC row, Sp and configuration
    (its Op, _SfpuRegs and MathRegs, which the key names by id): the mode, the Dst rows and
    cells (low halves: ``at_lo``), the load table (modes that read 16 bits through one),
    the RWC row after (None: the AddrMod moves nothing) and the compiled call's name for
    BF16 cells."""

    __slots__ = ("op", "regs", "mregs", "load", "mode", "is32", "phys", "at", "at_lo", "table",
                 "after", "kernel")

    def __init__(self, op: Op, regs: object, mregs: object, load: bool, mode: int, is32: bool,
                 phys: np.ndarray, at: np.ndarray, after: np.ndarray | None) -> None:
        self.op, self.regs, self.mregs, self.load = op, regs, mregs, load
        self.mode, self.is32, self.phys, self.at = mode, is32, phys, at
        self.at_lo = at + 128 if is32 else None
        self.table = load_table(mode) if load and not is32 else None
        self.after = after
        #: the compiled call for BF16 cells (:mod:`.fma_jit`), or ""
        self.kernel = "" if mode != BF16 or is32 else "load_bf16" if load else "store_bf16"


class SfpBlocks:
    """Finds loops in runs of SFP words (:meth:`segments`) and executes them (:meth:`run`)
    on the Vector Unit ``sfpu``; single instructions the short way (:meth:`single`,
    :meth:`loadi`, :meth:`nop`)."""

    #: a single SFPLOAD/SFPSTORE's Dst cells and RWCs after from a plan made once per
    #: instruction, thread, RWCs and configuration (False: worked out each time; tests compare)
    single_plans = True
    #: a loop found again with the same RWCs, Sp and configuration objects reuses what its
    #: last pass worked out (the AddrMod check, the plan); False: worked out each time
    run_plans = True
    #: SFPLOADI and SFPNOP the short way when every lane is enabled (False: Sfpu._issue)
    quick_ops = True
    #: a pass of SFPLOAD, a MAD and SFPSTORE of its result (add1's loop) in one compiled
    #: call when the compiled multiply-add is loaded (False: numpy, one body step at a time)
    fused = True
    #: in that call, the elements whose product is exact (a factor is +-1.0: add1's SFPADD)
    #: add in the machine's FP32 where that gives the model's bits (:data:`.fma_jit.ADD_FAST`;
    #: False: every element by the model's integer steps)
    fused_add = True
    #: a single SFPLOAD/SFPSTORE's BF16 cells by a compiled call when it is loaded (False:
    #: through the conversion tables)
    compiled_bf16 = True

    def __init__(self, sfpu: Any) -> None:
        self.sfpu = sfpu  # the :class:`~.unit.Sfpu` (which holds this object)
        self._segments: dict[tuple[int, ...], dict[int, tuple[int, int]]] = {}
        self._plans: dict[tuple[object, ...], _Plan | None] = {}
        #: (words, body length) -> the loop worked out; the words' id -> the same (the loop
        #: holds its words: the id is not reused while it is here)
        self._loops: dict[tuple[tuple[int, ...], int], _Loop] = {}
        self._loop_ids: dict[int, _Loop] = {}
        #: loops_of: (head, the stream list's id) -> (that list, the words, their loops)
        self._memo: dict[tuple[object, ...], tuple[list[int], tuple[int, ...], Any]] = {}
        #: (Op's id, thread, RWC row bytes, Sp, _SfpuRegs' id, MathRegs' id) -> a single
        #: SFPLOAD/SFPSTORE worked out
        self._singles: dict[tuple[object, ...], _Single] = {}
        #: SFPLOADI's Op id -> (Op, the old LReg row's bytes it was worked out from or None
        #: when its mode ignores them, the LReg row it writes)
        self._loadis: dict[int, tuple[Op, bytes | None, np.ndarray]] = {}
        #: DstBits, and its flat view
        self._bits: np.ndarray | None = None
        self._flat = np.zeros(0, dtype=np.uint16)

    def _flat_bits(self) -> np.ndarray:
        """``dst.bits.reshape(-1)`` (made again when ``dst.bits`` is another array)."""
        bits = self.sfpu.dst.bits
        if bits is not self._bits:
            self._flat = bits.reshape(-1)
            self._bits = bits
            if self._flat.base is None:  # (a copy would not write through)
                self._bits = None
        return self._flat

    def _every_lane(self) -> bool:
        """Whether an instruction now sees every lane enabled and nothing scheduled: no
        SFPLOADMACRO work, no back-door exec mask, no LaneConfig, no lane flags in use (or
        all set)."""
        s = self.sfpu
        if s.macros.pending or s._landing or s.exec_mask is not ALL_LANES \
                or not all_zero(s.lane_config):
            return False
        lanes = s.lanes
        return all_zero(lanes.use_flags) or all_true(lanes.flags)

    def segments(self, words: tuple[int, ...]) -> dict[int, tuple[int, int]]:
        """The loops in ``words`` (SFP words, in order; none from the first that does not
        decode): start index -> (body length, words in the loop)."""
        key, hit = words, self._segments.get(words)
        if hit is not None:
            return hit
        for k, w in enumerate(words):
            try:
                decode(w)
            except DecodeError:
                words = words[:k]
                break
        names = sfp_names()
        ops = [parse(names[w >> 24], w) for w in words]
        keys = [_key(op) for op in ops]
        n, i = len(words), 0
        found: dict[int, tuple[int, int]] = {}
        while i + MIN_REPS <= n:
            best = (0, 0)
            for p in range(1, MAX_PERIOD + 1):
                if i + p * MIN_REPS > n:
                    break
                body = keys[i:i + p]
                r = 1
                while i + (r + 1) * p <= n and keys[i + r * p:i + (r + 1) * p] == body:
                    r += 1
                if r >= MIN_REPS and r * p > best[0] * best[1] and _body_ok(ops[i:i + p]):
                    best = (p, r)
            if best[0]:
                found[i] = (best[0], best[0] * best[1])
                i += best[0] * best[1]
            else:
                i += 1
        if len(self._segments) > 256:
            self._segments.clear()
        self._segments[key] = found
        return found

    def loops_of(self, head: tuple[int, ...], stream: list[int], limit: int
                 ) -> tuple[tuple[int, ...], dict[int, tuple[int, int, tuple[int, ...]]]]:
        """The words ``head + stream`` (at most ``limit``) and their loops (:meth:`segments`),
        each with its words: start -> (body length, words in the loop, those words).
        Remembered for the same ``head`` and the same ``stream`` list object (which the
        caller never modifies): a kernel's runs come back as the same objects, whose loops
        :meth:`run` finds by identity."""
        if len(head) + len(stream) > limit:
            return self._loops_in((head + tuple(stream))[:limit])
        key = (head, id(stream))
        hit = self._memo.get(key)
        if hit is not None and hit[0] is stream:
            return hit[1], hit[2]
        words, loops = self._loops_in(head + tuple(stream))
        if len(self._memo) > 256:
            self._memo.clear()
        self._memo[key] = (stream, words, loops)
        return words, loops

    def _loops_in(self, words: tuple[int, ...]
                  ) -> tuple[tuple[int, ...], dict[int, tuple[int, int, tuple[int, ...]]]]:
        return words, {i: (p, n, words[i:i + n]) for i, (p, n) in self.segments(words).items()}

    def run(self, t: int, words: tuple[int, ...], period: int) -> bool:
        """Execute the loop ``words`` (body length ``period``; from :meth:`segments`) as
        thread ``t`` in one pass; False (nothing changed) when its conditions do not hold
        now (see the module documentation)."""
        ready = self.prepare(t, words, period)
        if ready is None:
            return False
        self._pass(ready[0].body, ready[0].reps, ready[1])
        return True

    def execute(self, ready: tuple[_Loop, _Plan | None]) -> None:
        """The pass :meth:`prepare` made ``ready`` for (its conditions still holding: the
        caller knows; the Dst addressing bits set as ``prepare`` set them)."""
        self._pass(ready[0].body, ready[0].reps, ready[1])

    def prepare(self, t: int, words: tuple[int, ...], period: int
                ) -> tuple[_Loop, _Plan | None] | None:
        """What :meth:`run` executes (the loop worked out, its plan or None when it touches
        no Dst), or None when its conditions do not hold now; changes nothing but the Dst
        addressing bits (``sync_dst_config``, as the loop's first SFPLOAD/SFPSTORE would)."""
        if not self._every_lane():
            return None
        loop = self._loop_ids.get(id(words))  # (the same words object: loops_of's)
        if loop is None or loop.words is not words or loop.period != period:
            loop = self._loops.get((words, period))
            if loop is None:
                names = sfp_names()
                loop = _Loop(words, [parse(names[w >> 24], w) for w in words], period)
                if len(self._loops) > 256:
                    self._loops.clear()
                self._loops[words, period] = loop
            if len(self._loop_ids) > 256:
                self._loop_ids.clear()
            self._loop_ids[id(words)] = loop
        plan = None
        if loop.modes:
            s = self.sfpu
            matrix, rwc, dst = s.matrix, s.rwc, s.dst
            regs, mregs = s._regs(t), matrix.math_regs(t)
            v = rwc.v[t]
            key = (v.tobytes(), rwc.sp.item(t), id(regs), id(mregs))
            hit = loop.plans.get(key) if self.run_plans else None
            matrix.sync_dst_config(t, mregs)
            if hit is not None and hit[0] is regs and hit[1] is mregs:
                plan = hit[2]  # (its AddrMods were seen to move nothing from this row)
            else:
                row = v.tolist()
                for mode in loop.modes:
                    matrix.advance(t, mode, update_fidelity=False)
                    if rwc.v[t].tolist() != row:
                        rwc.v[t] = row
                        return None
                pkey = (words, period, tuple(row), int(rwc.sp[t]), regs.srcb_mode,
                        regs.math_offset, regs.regw_base, regs.sp_base,
                        bool(dst.remap_addrs), bool(dst.swizzle_32b))
                if pkey in self._plans:
                    plan = self._plans[pkey]
                else:
                    plan = self._plan(t, loop.ops, period, regs)
                    if len(self._plans) > 256:
                        self._plans.clear()
                    self._plans[pkey] = plan
                if self.run_plans:
                    if len(loop.plans) > 64:
                        loop.plans.clear()
                    loop.plans[key] = (regs, mregs, plan)
            if plan is None or not all_true(dst.valid[plan.rows]):
                return None
        return loop, plan

    def single(self, t: int, op: Op) -> bool:
        """Execute one SFPLOAD, SFPSTORE or MAD-family instruction ``op`` as thread ``t``
        the short way when every lane is enabled (the conditions of a pass, for one
        instruction); False (nothing changed) when it must go the long way."""
        if op.vd >= 12 or not self._every_lane():
            return False
        s = self.sfpu
        lreg = s.lreg
        name = op.name
        if name in _MAD:
            if op.mod & (INDIRECT_VA | INDIRECT_VD):
                return False
            if op.vd >= N_WRITABLE:
                return True  # (no LReg written)
            b, c = lreg[op.b], lreg[op.c]
            if op.mod & NEGATE_VB:
                b = b ^ SIGN
            if op.mod & NEGATE_VC:
                c = c ^ SIGN
            kernel = compiled("lanes")
            if kernel is not None:  # (lane by lane: VD may be an operand)
                kernel(lreg[op.va], b, c, lreg[op.vd])
            else:
                lreg[op.vd] = fma(lreg[op.va], b, c)
            return True
        load = name == "SFPLOAD"
        if load and op.vd >= N_WRITABLE or op.macro:
            return False
        matrix, dst, rwc = s.matrix, s.dst, s.rwc
        regs, mregs = s._regs(t), matrix.math_regs(t)
        v = rwc.v[t]
        key = (id(op), t, v.tobytes(), rwc.sp.item(t), id(regs), id(mregs))
        plan = self._singles.get(key) if self.single_plans else None
        if plan is not None and plan.op is op and plan.regs is regs and plan.mregs is mregs:
            matrix.sync_dst_config(t, mregs)
            if not all_true(dst.valid[plan.phys]):
                return False  # (the long way reports it)
            flat = self._flat_bits()
            vd = op.vd
            kernel = compiled(plan.kernel) if plan.kernel and self.compiled_bf16 else None
            if kernel is not None:  # (BF16 cells by arithmetic: into or from the LReg's row)
                kernel(flat, plan.at, lreg[vd])
            elif not load:
                self._store(flat, plan.mode, plan.at, plan.at_lo, lreg[vd])
            elif plan.table is not None:
                lreg[vd] = plan.table.take(flat[plan.at])
            else:
                lreg[vd] = F.dst32_halves_to_fp32(flat[plan.at], flat[plan.at_lo])
            if plan.after is not None:
                v[:] = plan.after
            return True
        mode = regs.srcb_mode if op.mod == SRCB else op.mod
        if mode not in (_LOAD_MODES if load else _STORE_MODES):
            return False
        matrix.sync_dst_config(t)
        is32 = mode in (LOAD32 if load else STORE32)
        phys, at = s._cells(s._addr(t, regs, op.addr, mode), is32)
        if not all_true(dst.valid[phys]):
            return False  # (the long way reports it)
        self._move(op, load, mode, is32, at)
        before = v.copy()
        matrix.advance(t, op.addr_mode, update_fidelity=False)
        if len(self._singles) > 1024:
            self._singles.clear()
        self._singles[key] = _Single(op, regs, mregs, load, mode, is32, phys, at,
                                     None if np.array_equal(v, before) else v.copy())
        return True

    def loadi(self, t: int, op: Op) -> bool:
        """SFPLOADI ``op`` the short way when every lane is enabled (with no back-door
        load); False (nothing changed) when it must go the long way."""
        if not self.quick_ops or op.vd >= 12 or not self._every_lane():
            return False
        vd = op.vd
        if vd >= N_WRITABLE:
            return True  # (LReg 8..11: no effect)
        lreg = self.sfpu.lreg
        hit = self._loadis.get(id(op))
        if hit is not None and hit[0] is op and (hit[1] is None
                                                 or lreg[vd].tobytes() == hit[1]):
            lreg[vd] = hit[2]
            return True
        old = lreg[vd]
        new = loadi_value(op.mod, op.imm16, old)
        if new is None:
            return False  # (the long way reports it)
        # (the modes that keep half of the LReg: the result for the same old value)
        was = old.tobytes() if op.mod in (LOADI_UPPER, LOADI_LOWER) else None
        lreg[vd] = new
        if len(self._loadis) > 1024:
            self._loadis.clear()
        new.flags.writeable = False
        self._loadis[id(op)] = (op, was, new)
        return True

    def nop(self, t: int, op: Op) -> bool:
        """SFPNOP the short way: nothing to do when no SFPLOADMACRO work is scheduled (and
        no TEN-2932 check applies: VD outside 4..7)."""
        s = self.sfpu
        return self.quick_ops and not (s.macros.pending or s._landing or 4 <= op.vd < 8)

    @staticmethod
    def _store(flat: np.ndarray, mode: int, at: np.ndarray, at_lo: np.ndarray | None,
               v: np.ndarray) -> None:
        """SFPSTORE's cells of the words ``v`` (shaped as ``at``) to DstBits ``flat``."""
        if mode == BF16:  # (16 bits: the cells as they are stored)
            flat[at] = _store_bf16_cells().take(v >> 16)
            return
        cells = store_convert(mode, v)
        if at_lo is not None:  # (32-bit: the high half, the low half 8 rows further)
            flat[at] = (cells >> 16).astype(np.uint16)
            flat[at_lo] = cells.astype(np.uint16)
        else:
            flat[at] = cells.astype(np.uint16)

    def _move(self, op: Op, load: bool, mode: int, is32: bool, at: np.ndarray) -> None:
        """A single SFPLOAD/SFPSTORE's data: Dst cells ``at`` to/from ``LReg[op.vd]``."""
        s = self.sfpu
        lreg = s.lreg
        flat = self._flat_bits()
        if load:
            if is32:
                lreg[op.vd] = F.dst32_halves_to_fp32(flat[at], flat[at + 128])
            else:
                lreg[op.vd] = load_table(mode)[flat[at]]
        else:
            self._store(flat, mode, at, at + 128 if is32 else None, lreg[op.vd])

    def _plan(self, t: int, ops: list[Op], period: int, regs: object) -> _Plan | None:
        """The block's Dst cells, or None when its iterations cannot run at once."""
        s = self.sfpu
        dst = s.dst
        reps = len(ops) // period
        cells: dict[int, tuple[int, bool, np.ndarray, np.ndarray | None]] = {}
        rows, stored = [], []
        touched: dict[int, np.ndarray] = {}
        for p, op in enumerate(ops[:period]):
            if op.name not in ("SFPLOAD", "SFPSTORE"):
                continue
            load = op.name == "SFPLOAD"
            mode = regs.srcb_mode if op.mod == SRCB else op.mod  # type: ignore[attr-defined]
            if mode not in (_LOAD_MODES if load else _STORE_MODES):
                return None
            is32 = mode in (LOAD32 if load else STORE32)
            at, phys = [], []
            for k in range(reps):
                addr = s._addr(t, regs, ops[k * period + p].addr, mode)  # type: ignore[arg-type]
                ph, a = s._cells(addr, is32)
                at.append(a)
                phys.append(ph)
            at_arr = np.stack(at)
            cells[p] = (mode, is32, at_arr, at_arr + 128 if is32 else None)
            rows.extend(phys)
            if not load:
                stored.extend(phys)
            touched[p] = np.concatenate([at_arr, at_arr + 128], axis=1) if is32 else at_arr
        # Dst hazards: the pass does body position after body position, all iterations each
        owner = np.full(dst.bits.size, -1, dtype=np.int64)
        n_stored = 0
        for p, cell in touched.items():
            if ops[p].name == "SFPSTORE":
                seq = np.arange(reps)[:, None] * period + p
                owner[cell] = np.broadcast_to(seq, cell.shape)
                n_stored += cell.size
        if n_stored and np.count_nonzero(owner >= 0) != n_stored:
            return None  # a cell written twice
        for p, cell in touched.items():
            if ops[p].name != "SFPLOAD":
                continue
            o = owner[cell]
            seq = np.arange(reps)[:, None] * period + p
            hit = o >= 0
            if hit.any() and ((o[hit] < np.broadcast_to(seq, o.shape)[hit])
                              != (o[hit] % period < p)).any():
                return None  # one iteration reads what another wrote
        plan = _Plan(cells, np.unique(np.concatenate(rows)),
                     np.unique(np.concatenate(stored)) if stored else np.zeros(0, np.int64))
        plan.fused = self._fusable(ops[:period], cells)
        if plan.fused is not None:
            vd, mad, sel, xb, xc, at_load, at_store = plan.fused
            plan.prog = np.concatenate([
                np.array([at_load.size, sel, xb, xc, mad.va, mad.b, mad.c, vd, mad.vd,
                          plan.stored.size], dtype=np.int64),
                at_load, at_store, plan.stored]).astype(np.int64)
            plan.prog.flags.writeable = False
        return plan

    @staticmethod
    def _fusable(body: list[Op], cells: dict[int, tuple[int, bool, np.ndarray, np.ndarray | None]]
                 ) -> tuple[Any, ...] | None:
        """For a body of SFPLOAD (BF16), a MAD writing LReg 0..7 and SFPSTORE of its result
        (BF16; SFPNOPs anywhere) whose stores write the very cells its loads
        read, element for element, or none of them (so no element reads what another
        writes: element by element is the pass), what :func:`.fma_jit._load_mad_store`
        needs: (load VD, MAD Op, sel, xb, xc, load cells, store cells); else None."""
        steps = [(p, op) for p, op in enumerate(body) if op.name != "SFPNOP"]
        if len(steps) != 3:
            return None
        (pl, load), (_, mad), (ps, store) = steps
        if load.name != "SFPLOAD" or mad.name not in _MAD or store.name != "SFPSTORE" \
                or mad.vd >= N_WRITABLE or store.vd != mad.vd:
            return None
        lmode, l32, at_load, _ = cells[pl]
        smode, s32, at_store, _ = cells[ps]
        if l32 or s32 or lmode != BF16 or smode != BF16:
            return None
        if not np.array_equal(at_load, at_store) \
                and np.intersect1d(at_load, at_store).size:
            return None
        sel = sum(bit for bit, r in ((1, mad.va), (2, mad.b), (4, mad.c)) if r == load.vd)
        xb = 0x80000000 if mad.mod & NEGATE_VB else 0
        xc = 0x80000000 if mad.mod & NEGATE_VC else 0
        return (load.vd, mad, sel, xb, xc, np.ascontiguousarray(at_load.reshape(-1)),
                np.ascontiguousarray(at_store.reshape(-1)))

    def _pass(self, body: list[Op], reps: int, plan: _Plan | None) -> None:
        """Each body instruction once, on ``(reps, 32)`` values."""
        s = self.sfpu
        lreg = s.lreg
        flat = self._flat_bits()
        if plan is not None and plan.prog is not None and self.fused:
            kernel = compiled("load_mad_store_prog")
            if kernel is not None:  # (and the LRegs and valid bits as the pass leaves them)
                kernel(flat, s.dst.valid, lreg, plan.prog, ADD_FAST if self.fused_add else 0)
                return
        wide: dict[int, np.ndarray] = {}
        for p, op in enumerate(body):
            name = op.name
            if name == "SFPLOAD":
                mode, is32, at, at_lo = plan.cells[p]  # type: ignore[union-attr]
                if is32:
                    wide[op.vd] = F.dst32_halves_to_fp32(flat[at], flat[at_lo])
                else:
                    wide[op.vd] = load_table(mode).take(flat[at])
            elif name == "SFPSTORE":
                mode, is32, at, at_lo = plan.cells[p]  # type: ignore[union-attr]
                v = wide.get(op.vd)
                if v is None:
                    v = lreg[op.vd]
                if v.shape != at.shape:
                    v = np.broadcast_to(v, at.shape)
                self._store(flat, mode, at, at_lo, v)
            elif name == "SFPNOP":
                continue
            elif name == "SFPLOADI":
                old = wide.get(op.vd)
                if op.vd < N_WRITABLE:
                    new = loadi_value(op.mod, op.imm16, lreg[op.vd] if old is None else old)
                    wide[op.vd] = new  # type: ignore[assignment]
            else:  # the MAD family
                a, b, c = (wide.get(r) for r in (op.va, op.b, op.c))
                a = lreg[op.va] if a is None else a
                b = lreg[op.b] if b is None else b
                c = lreg[op.c] if c is None else c
                if op.mod & NEGATE_VB:
                    b = b ^ SIGN
                if op.mod & NEGATE_VC:
                    c = c ^ SIGN
                d = fma(a, b, c)
                if op.vd < N_WRITABLE:
                    wide[op.vd] = d
        for r, v in wide.items():
            lreg[r] = v[-1] if v.ndim == 2 else v
        if plan is not None and plan.stored.size:
            s.dst.valid[plan.stored] = True


__all__ = ["MAX_PERIOD", "MIN_REPS", "SfpBlocks"]
