"""SFPLOADMACRO's scheduler: up to four instructions per macro, each run later on its own
sub-unit (simple, MAD, round, store), alongside what the thread issues.

Source: the ISA documentation's Blackhole ``SFPLOADMACRO.md`` (functional model) and
``SFPCONFIG.md`` (LoadMacroConfig); the official simulator (ttsim) does not model
SFPLOADMACRO ("explicitly out of scope"), so no oracle checks this; its tests compare tt-llk
kernels that use it with their SFPLOADMACRO-free versions. What is modelled:

* LoadMacroConfig per lane: ``InstructionTemplate[4]`` (SFPCONFIG VD 0..3, or the back-door
  load: any SFP instruction with ``VD = 12 + i`` while DISABLE_BACKDOOR_LOAD is clear),
  ``Sequence[4]`` (VD 4..7: a byte per sub-unit: bits 0..2 what to run (0 nothing, 2
  SFPNOP, 3 SFPSTORE of LReg 0, 4..7 template 0..3), bits 3..5 the delay, bit 6 "VD = 16",
  bit 7 "the loaded register is VB rather than VC"), ``Misc`` (VD 8: StoreMod0, a
  UsesLoadMod0ForStore bit per macro, a UnitDelayKind bit per sub-unit). The configuration
  a macro uses must be the same in every lane (per-lane differences are not modelled);
* time: this is a functional model without clocks, so a *cycle* is one instruction the
  coprocessor executes. An instruction scheduled with delay ``d`` runs ``d + 1`` cycles
  after its SFPLOADMACRO. When some scheduled instruction counts Vector Unit instructions
  (UnitDelayKind), only cycles in which a thread issues an SFP instruction count, for all
  of them; otherwise every executed instruction is a cycle (:meth:`Sfpu.idle_cycle`). When
  the program ends, what is still scheduled runs (:meth:`Sfpu.drain`);
* a cycle's instructions read the state as it was before the cycle and their LReg writes
  are merged (the unit executes them load, MAD, round, store, then simple: the simple
  sub-unit's lane-flag changes take effect for the next cycle, SFPSTORE writes Dst after
  the cycle's load read it). A scheduled instruction displaces one the thread issues to the
  same sub-unit in the same cycle, as the documentation says;
* a new instruction replaces one already scheduled on its sub-unit for the same cycle. The
  documentation's pseudo-code forgets that one even when the new sequence byte schedules
  nothing (kind 0); tt-llk's Blackhole reciprocal kernels (``ckernel_sfpu_recip.h``, the
  8-bit and 24-bit ones) rely on a kind-0 byte leaving it in place, so we follow them.

Not modelled: the documented restrictions on simple and round both writing (or not) LReg 16,
and SFPSWAP's extra MAD/round slots; the automatic stalls around SFPMAD (functionally
invisible).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dispatch import Report
from ..state import NotImplementedInstruction
from .lregs import LREG_MACRO, LaneState
from .ops import MAD, ROUND, SIMPLE, STORE, SUBUNIT_NAMES, SUBUNIT_OPS, Op, parse, sfp_names

UNITS = (SIMPLE, MAD, ROUND, STORE)


@dataclass
class Scheduled:
    """An instruction waiting for its cycle on a sub-unit."""

    unit: int
    op: Op
    countdown: int
    by_instructions: bool  # UnitDelayKind: counts issued SFP instructions, not cycles


def _uniform(values: np.ndarray, what: str) -> int:
    if not (values == values[0]).all():
        raise NotImplementedInstruction(f"not implemented: SFPLOADMACRO with {what} "
                                        "differing between lanes")
    return int(values[0])


class MacroScheduler:
    """The instructions SFPLOADMACROs scheduled, not yet run."""

    def __init__(self) -> None:
        self.pending: list[Scheduled] = []

    def tick(self, issued: bool) -> list[Scheduled]:
        """One cycle passes (``issued``: a thread issues an SFP instruction in it): the
        instructions due in it, in sub-unit order."""
        pending = self.pending
        if not pending or (not issued and any(e.by_instructions for e in pending)):
            return []
        due = [e for e in pending if e.countdown == 0]
        rest = [e for e in pending if e.countdown > 0]
        for e in rest:
            e.countdown -= 1
        self.pending = rest
        return sorted(due, key=lambda e: e.unit)

    def schedule(self, lanes: LaneState, load: Op, addr: int, report_ub: Report) -> None:
        """What SFPLOADMACRO ``load`` (whose load part used Dst address ``addr``) adds."""
        macro = load.word >> 22 & 3
        vd = load.vd
        sequence = _uniform(lanes.sequences[macro], f"LoadMacroConfig.Sequence[{macro}]")
        misc = _uniform(lanes.misc, "LoadMacroConfig.Misc")
        for i in UNITS:
            bits = sequence >> (8 * i) & 0xFF
            delay = bits >> 3 & 7
            kind = bits & 7
            if kind == 0:  # nothing scheduled: nothing forgotten either (see above)
                continue
            if delay != 7:
                self.pending = [e for e in self.pending
                                if not (e.unit == i and e.countdown == delay)]
            if kind == 1:
                report_ub(f"SFPLOADMACRO: macro {macro} gives the {SUBUNIT_NAMES[i]} sub-unit "
                          "instruction kind 1")
                continue
            if kind == 2:
                op = parse("SFPNOP", 0x8F << 24)
            elif kind == 3:
                op = parse("SFPSTORE", 0x72 << 24)
            else:
                word = _uniform(lanes.templates[kind - 4],
                                f"LoadMacroConfig.InstructionTemplate[{kind - 4}]")
                name = sfp_names().get(word >> 24, "")
                op = parse(name, word) if name else parse("SFPNOP", 0x8F << 24)
            if op.name not in SUBUNIT_OPS[i]:
                if i == STORE:
                    report_ub(f"SFPLOADMACRO: macro {macro} gives the store sub-unit "
                              f"{op.name}")
                    continue
                op = parse("SFPNOP", 0x8F << 24)
            op.macro = True
            if i != STORE:
                if bits & 0x80:
                    op.vb = vd
                    if op.vc is None:
                        op.vc = op.vd
                else:
                    op.vc = vd
                    if op.vb is None:
                        op.vb = op.vd
                op.vd = LREG_MACRO if bits & 0x40 else vd
            else:
                if bits & 0x40:
                    op.vd = LREG_MACRO
                elif not bits & 0x80:
                    op.vd = vd
                uses_load_mod0 = misc >> (4 + macro) & 1
                op.mod = load.mod if uses_load_mod0 else misc & 15
                op.store_addr = addr
            by_instr = bool(misc >> (8 + i) & 1)
            self.pending.append(Scheduled(i, op, delay, by_instr))


__all__ = ["MacroScheduler", "Scheduled", "UNITS"]
