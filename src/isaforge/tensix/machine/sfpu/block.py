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
"""

from __future__ import annotations

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
    SRCB,
    STORE32,
    UINT16,
    ZERO,
    load_table,
    loadi_value,
    store_convert,
    store_table_bf16,
)
from .fma import fma
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
    ``(iterations, 32)`` flat DstBits indices) and the Dst rows it touches and writes."""

    __slots__ = ("cells", "rows", "stored")

    def __init__(self, cells: dict[int, tuple[int, bool, np.ndarray]], rows: np.ndarray,
                 stored: np.ndarray) -> None:
        self.cells, self.rows, self.stored = cells, rows, stored


class SfpBlocks:
    """Finds loops in runs of SFP words (:meth:`segments`) and executes them (:meth:`run`)
    on the Vector Unit ``sfpu``."""

    #: a single SFPLOAD/SFPSTORE's Dst cells and RWCs after from a plan made once per
    #: instruction, thread, RWCs and configuration (False: worked out each time; tests compare)
    single_plans = True

    def __init__(self, sfpu: Any) -> None:
        self.sfpu = sfpu  # the :class:`~.unit.Sfpu` (which holds this object)
        self._segments: dict[tuple[int, ...], dict[int, tuple[int, int]]] = {}
        self._plans: dict[tuple[object, ...], _Plan | None] = {}
        self._ops: dict[tuple[int, ...], list[Op]] = {}
        #: (Op's id, thread, RWC row bytes, Sp, _SfpuRegs' id, MathRegs' id) -> a single
        #: SFPLOAD/SFPSTORE worked out: (op, regs, math regs, mode, is32, rows, cells, RWCs
        #: after)
        self._singles: dict[tuple[object, ...], tuple[Any, ...]] = {}

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

    def run(self, t: int, words: tuple[int, ...], period: int) -> bool:
        """Execute the loop ``words`` (body length ``period``; from :meth:`segments`) as
        thread ``t`` in one pass; False (nothing changed) when its conditions do not hold
        now (see the module documentation)."""
        s = self.sfpu
        if s.macros.pending or s._landing or s.exec_mask is not ALL_LANES \
                or not all_zero(s.lane_config):
            return False
        lanes = s.lanes
        if not (all_zero(lanes.use_flags) or all_true(lanes.flags)):
            return False
        ops = self._ops.get(words)
        if ops is None:
            names = sfp_names()
            ops = [parse(names[w >> 24], w) for w in words]
            if len(self._ops) > 256:
                self._ops.clear()
            self._ops[words] = ops
        body = ops[:period]
        plan = None
        if any(op.name in ("SFPLOAD", "SFPSTORE") for op in body):
            matrix, rwc = s.matrix, s.rwc
            matrix.sync_dst_config(t)
            row = rwc.v[t].tolist()
            for mode in {op.addr_mode for op in body if op.name in ("SFPLOAD", "SFPSTORE")}:
                matrix.advance(t, mode, update_fidelity=False)
                if rwc.v[t].tolist() != row:
                    rwc.v[t] = row
                    return False
            regs = s._regs(t)
            dst = s.dst
            key = (words, period, tuple(row), int(rwc.sp[t]), regs.srcb_mode,
                   regs.math_offset, regs.regw_base, regs.sp_base, bool(dst.remap_addrs),
                   bool(dst.swizzle_32b))
            if key in self._plans:
                plan = self._plans[key]
            else:
                plan = self._plan(t, ops, period, regs)
                if len(self._plans) > 256:
                    self._plans.clear()
                self._plans[key] = plan
            if plan is None or not all_true(dst.valid[plan.rows]):
                return False
        self._pass(body, len(words) // period, plan)
        return True

    def single(self, t: int, op: Op) -> bool:
        """Execute one SFPLOAD, SFPSTORE or MAD-family instruction ``op`` as thread ``t``
        the short way when every lane is enabled (the conditions of a pass, for one
        instruction); False (nothing changed) when it must go the long way."""
        s = self.sfpu
        if s.macros.pending or s._landing or s.exec_mask is not ALL_LANES \
                or op.vd >= 12 or not all_zero(s.lane_config):
            return False
        lanes = s.lanes
        if not (all_zero(lanes.use_flags) or all_true(lanes.flags)):
            return False
        lreg = s.lreg
        name = op.name
        if name in _MAD:
            if op.mod & (INDIRECT_VA | INDIRECT_VD):
                return False
            b, c = lreg[op.b], lreg[op.c]
            if op.mod & NEGATE_VB:
                b = b ^ SIGN
            if op.mod & NEGATE_VC:
                c = c ^ SIGN
            d = fma(lreg[op.va], b, c)
            if op.vd < N_WRITABLE:
                lreg[op.vd] = d
            return True
        load = name == "SFPLOAD"
        if load and op.vd >= N_WRITABLE or op.macro:
            return False
        regs = s._regs(t)
        matrix, dst, rwc = s.matrix, s.dst, s.rwc
        mregs = matrix.math_regs(t)
        key = (id(op), t, rwc.v[t].tobytes(), int(rwc.sp[t]), id(regs), id(mregs))
        plan = self._singles.get(key) if self.single_plans else None
        if plan is not None and plan[0] is op and plan[1] is regs and plan[2] is mregs:
            _, _, _, mode, is32, phys, at, after = plan
            matrix.sync_dst_config(t, mregs)
            if not all_true(dst.valid[phys]):
                return False  # (the long way reports it)
            self._move(op, load, mode, is32, at)
            rwc.v[t] = after
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
        matrix.advance(t, op.addr_mode, update_fidelity=False)
        if len(self._singles) > 1024:
            self._singles.clear()
        self._singles[key] = (op, regs, mregs, mode, is32, phys, at, rwc.v[t].copy())
        return True

    def _move(self, op: Op, load: bool, mode: int, is32: bool, at: np.ndarray) -> None:
        """A single SFPLOAD/SFPSTORE's data: Dst cells ``at`` to/from ``LReg[op.vd]``."""
        s = self.sfpu
        lreg = s.lreg
        flat = s.dst.bits.reshape(-1)
        if load:
            if is32:
                lreg[op.vd] = F.dst32_halves_to_fp32(flat[at], flat[at + 128])
            else:
                lreg[op.vd] = load_table(mode)[flat[at]]
        else:
            v = lreg[op.vd]
            cells = store_table_bf16()[v >> 16] if mode == BF16 else store_convert(mode, v)
            if is32:
                flat[at] = (cells >> 16).astype(np.uint16)
                flat[at + 128] = cells.astype(np.uint16)
            else:
                flat[at] = cells.astype(np.uint16)

    def _plan(self, t: int, ops: list[Op], period: int, regs: object) -> _Plan | None:
        """The block's Dst cells, or None when its iterations cannot run at once."""
        s = self.sfpu
        dst = s.dst
        reps = len(ops) // period
        cells: dict[int, tuple[int, bool, np.ndarray]] = {}
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
            cells[p] = (mode, is32, at_arr)
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
        return _Plan(cells, np.unique(np.concatenate(rows)),
                     np.unique(np.concatenate(stored)) if stored else np.zeros(0, np.int64))

    def _pass(self, body: list[Op], reps: int, plan: _Plan | None) -> None:
        """Each body instruction once, on ``(reps, 32)`` values."""
        s = self.sfpu
        lreg = s.lreg
        wide: dict[int, np.ndarray] = {}
        flat = s.dst.bits.reshape(-1)
        for p, op in enumerate(body):
            name = op.name
            if name == "SFPLOAD":
                mode, is32, at = plan.cells[p]  # type: ignore[union-attr]
                if is32:
                    wide[op.vd] = F.dst32_halves_to_fp32(flat[at], flat[at + 128])
                else:
                    wide[op.vd] = load_table(mode)[flat[at]]
            elif name == "SFPSTORE":
                mode, is32, at = plan.cells[p]  # type: ignore[union-attr]
                v = wide.get(op.vd)
                if v is None:
                    v = lreg[op.vd]
                v = np.broadcast_to(v, at.shape)
                if mode == BF16:
                    cells = store_table_bf16()[v >> 16]
                else:
                    cells = store_convert(mode, v)
                if is32:
                    flat[at] = (cells >> 16).astype(np.uint16)
                    flat[at + 128] = cells.astype(np.uint16)
                else:
                    flat[at] = cells.astype(np.uint16)
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
