"""Vector Unit lane predication: SFPSETCC, SFPENCC, SFPPUSHC, SFPPOPC, SFPCOMPC, SFPLE and
SFPGT (ISA documentation, Blackhole; ``VectorUnit.md`` for the state).

Each lane has ``LaneFlags`` and ``UseLaneFlagsForLaneEnable`` and a stack of up to 8 such
pairs (:class:`~.lregs.LaneState`). SFPENCC sets, keeps or inverts the "use" bit and sets
the flags; SFPSETCC (and SFPIADD, SFPLZ, SFPEXEXP, SFPLE, SFPGT) set the flags of enabled
lanes; SFPPUSHC pushes or rewrites the stack top, SFPPOPC pops or peeks at it, both with
the twelve boolean combinations of Mod1 1..12; SFPCOMPC is the ``else`` of an ``if``.
A push onto a full stack and a pop (or a rewrite of the top) of an empty one are undefined
behaviour and are reported.
"""

from __future__ import annotations

import numpy as np

from .base import SfpuBase
from .convert import sign_mag_key
from .lregs import LANE, STACK_DEPTH
from .ops import Op

# SFPSETCC Mod1
SETCC_IMM_BIT0, SETCC_CLEAR = 1, 8
# SFPENCC Mod1 / Imm2
ENCC_EC, ENCC_EI, ENCC_RI = 1, 2, 8
ENCC_IMM_E, ENCC_IMM_R = 1, 2
# SFPLE / SFPGT Mod1
CMP_SET_CC, CMP_MUTATE_STACK, CMP_MUTATE_OR, CMP_SET_VD = 1, 2, 4, 8


def boolean_op(mod1: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``BooleanOp(Mod1, A, B)`` of SFPPUSHC/SFPPOPC (Mod1 1..12)."""
    table = {1: lambda: b, 2: lambda: ~b, 3: lambda: a & b, 4: lambda: a | b,
             5: lambda: a & ~b, 6: lambda: a | ~b, 7: lambda: ~a & b, 8: lambda: ~a | b,
             9: lambda: ~a & ~b, 10: lambda: ~a | ~b, 11: lambda: a != b, 12: lambda: a == b}
    return np.asarray(table[mod1](), dtype=bool)


class ConditionMixin(SfpuBase):
    """The condition-code instructions (see the module documentation)."""

    def x_sfpsetcc(self, t: int, op: Op) -> None:
        lanes = self.enabled()
        st = self.lanes
        if op.mod & SETCC_CLEAR:
            flags = np.zeros(32, dtype=bool)
        elif op.mod & SETCC_IMM_BIT0:
            flags = np.full(32, bool(op.imm12 & 1))
        else:
            c = self.lreg[op.c].view(np.int32)
            flags = {0: c < 0, 2: c != 0, 4: c >= 0, 6: c == 0}[op.mod & 6]
        self.set_flags(flags & st.use_flags, lanes)

    def x_sfpencc(self, t: int, op: Op) -> None:
        st, lanes, imm = self.lanes, self.exec_mask, op.imm12 & 3
        use = st.use_flags
        if op.mod & ENCC_EI:
            use = np.full(32, bool(imm & ENCC_IMM_E))
        elif op.mod & ENCC_EC:
            use = ~use
        flags = np.full(32, bool(imm & ENCC_IMM_R) if op.mod & ENCC_RI else True)
        st.use_flags = np.where(lanes, use, st.use_flags)
        st.flags = np.where(lanes, flags, st.flags)

    def x_sfppushc(self, t: int, op: Op) -> None:
        st, lanes = self.lanes, self.exec_mask
        if op.mod == 0:
            full = lanes & (st.depth >= STACK_DEPTH)
            if full.any():
                self.report_ub("SFPPUSHC onto a full flag stack (8 entries)")
            push = lanes & ~full
            st.stack_flags[st.depth[push], LANE[push]] = st.flags[push]
            st.stack_use[st.depth[push], LANE[push]] = st.use_flags[push]
            st.depth = st.depth + push
            return
        if (lanes & (st.depth == 0)).any():
            self.report_ub(f"SFPPUSHC Mod1={op.mod} with an empty flag stack")
        top_flags, _ = st.top(False, False)
        use = st.use_flags
        if op.mod <= 12:
            new = boolean_op(op.mod, top_flags, st.flags)
        elif op.mod == 13:
            st.flags = np.where(lanes, ~st.flags, st.flags)
            new = st.flags
        else:  # 14: (true, true); 15: (false, true)
            new = np.full(32, op.mod == 14)
            use = np.ones(32, dtype=bool)
        st.set_top(lanes, new, use)

    def x_sfppopc(self, t: int, op: Op) -> None:
        st, lanes = self.lanes, self.exec_mask
        top_flags, top_use = st.top(False, False)
        if op.mod == 0:
            empty = lanes & (st.depth == 0)
            if empty.any():
                self.report_ub("SFPPOPC from an empty flag stack")
            st.depth = np.where(lanes & ~empty, st.depth - 1, st.depth)
            use, flags = top_use, top_flags
        elif op.mod <= 12:
            use, flags = top_use, boolean_op(op.mod, st.flags, top_flags)
        elif op.mod == 13:
            use, flags = st.use_flags, ~st.flags
        else:
            use, flags = np.ones(32, dtype=bool), np.full(32, op.mod == 14)
        st.use_flags = np.where(lanes, use, st.use_flags)
        st.flags = np.where(lanes, flags, st.flags)

    def x_sfpcompc(self, t: int, op: Op) -> None:
        st, lanes = self.lanes, self.exec_mask
        top_flags, top_use = st.top(True, True)
        flags = top_use & st.use_flags & top_flags & ~st.flags
        st.flags = np.where(lanes, flags, st.flags)

    def _compare(self, op: Op, result: np.ndarray) -> None:
        """SFPLE/SFPGT's effects of the per-lane comparison ``result``."""
        lanes = self.enabled()
        st = self.lanes
        if op.mod & CMP_SET_VD:
            self.write(op.vd, np.where(result, np.uint32(0xFFFFFFFF), np.uint32(0)), lanes)
        if op.mod & CMP_SET_CC:
            self.set_flags(result, lanes)
        if op.mod & CMP_MUTATE_STACK:
            top, use = st.top(False, False)
            new = top | result if op.mod & CMP_MUTATE_OR else top & result
            st.set_top(self.exec_mask, new, use)

    def x_sfple(self, t: int, op: Op) -> None:
        self._compare(op, sign_mag_key(self.lreg[op.c]) >= sign_mag_key(self.lreg[op.b]))

    def x_sfpgt(self, t: int, op: Op) -> None:
        self._compare(op, sign_mag_key(self.lreg[op.c]) < sign_mag_key(self.lreg[op.b]))


__all__ = ["ConditionMixin", "boolean_op"]
