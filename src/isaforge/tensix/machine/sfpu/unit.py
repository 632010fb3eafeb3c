"""The Vector Unit (:class:`Sfpu`): every Blackhole SFP instruction, on all 32 lanes at once.

Each instruction a thread issues goes through :meth:`Sfpu._issue`: its word becomes an
:class:`~.ops.Op`; when SFPLOADMACRO has instructions waiting (:mod:`.macros`), the cycle
runs them with it; otherwise it executes alone. Before executing, two rules that cut across
instructions apply:

* the back-door template load: an SFP instruction (not SFPCONFIG, SFPLOADMACRO, SFPNOP)
  with ``VD >= 12`` writes its own word to ``LoadMacroConfig.InstructionTemplate[VD - 12]``
  in every lane whose LaneConfig DISABLE_BACKDOOR_LOAD is clear, and executes only in the
  other lanes (where it reaches LReg 12..15) -- when every lane takes the back door it has
  no other effect;
* erratum TEN-2932 (from ttsim's sources): with LaneConfig ENABLE_DEST_INDEX set, a result
  written to LReg 4..7 by most instructions is architecturally undefined: reported as
  undefined behaviour (the documented result is written).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..dispatch import Execute, Fields, Report, Unit
from ..matrix import MatrixUnit
from ..regfiles import Dst
from ..state import Config, RWCs, ThreadConfig
from .arithmetic import ArithmeticMixin
from .base import ALL_LANES
from .block import SfpBlocks
from .conditions import ConditionMixin
from .lregs import DISABLE_BACKDOOR_LOAD, ENABLE_DEST_INDEX, reset_lregs
from .macros import MacroScheduler, Scheduled
from .movement import MovementMixin
from .ops import (
    LOAD,
    MAD,
    NO_BACKDOOR,
    ROUND,
    SIMPLE,
    STORE,
    Op,
    encode,
    parse,
    sfp_names,
    subunit_of,
)

#: instructions TEN-2932 does not affect (besides the load-style ones)
_NOT_TEN2932 = frozenset({"SFPCONFIG", "SFPSWAP", "SFPLOADMACRO", "SFPLOAD", "SFPLOADI",
                          "SFPSTORE"})
#: the order a cycle's instructions execute in (see :mod:`.macros`)
_CYCLE_ORDER = {LOAD: 0, MAD: 1, ROUND: 2, STORE: 3, SIMPLE: 4}


class Sfpu(MovementMixin, ArithmeticMixin, ConditionMixin, Unit):
    """The Vector Unit: the LRegs (``lreg``, ``(17, 32)`` uint32, given), lane predication,
    the flag stack, the PRNG and LoadMacroConfig (``lanes``), and SFPLOADMACRO's scheduled
    instructions (``macros``)."""

    def __init__(self, dst: Dst, lreg: np.ndarray, lane_config: np.ndarray, rwc: RWCs,
                 config: Config, thread_config: ThreadConfig, matrix: MatrixUnit,
                 report_ub: Report) -> None:
        super().__init__(dst, lreg, lane_config, rwc, config, thread_config, matrix,
                         report_ub)
        reset_lregs(lreg)
        self.macros = MacroScheduler()
        #: loops of SFP instructions run at once (None: one at a time, as tests compare)
        self.blocks: SfpBlocks | None = SfpBlocks(self)
        #: MAD sub-unit LReg writes of the last cycle, written at the end of this one
        self._landing: list[tuple[np.ndarray, np.ndarray]] = []
        self._exec: dict[str, Callable[[int, Op], object]] = {
            name: getattr(self, "x_" + name.lower()) for name in sfp_names().values()
            if name != "SFPLOADMACRO"}
        self._exec["SFPLOADMACRO"] = self.x_sfpload

    def handlers(self) -> Mapping[str, Execute]:
        # the coprocessor's decoded fields are one object per word (decode is cached): the
        # Op parsed from them is kept with them (issued Ops are never modified)
        ops: dict[int, tuple[object, Op]] = {}

        # the short ways (SfpBlocks' methods; self.blocks None: none)
        quick: dict[str, Callable[[SfpBlocks, int, Op], bool]] = dict.fromkeys(
            ("SFPLOAD", "SFPSTORE", "SFPMAD", "SFPADD", "SFPMUL"), SfpBlocks.single)
        quick.update(SFPLOADI=SfpBlocks.loadi, SFPNOP=SfpBlocks.nop)

        def handler(name: str) -> Execute:
            short = quick.get(name)

            def run(t: int, f: Fields) -> None:
                hit = ops.get(id(f))
                if hit is None or hit[0] is not f:
                    if len(ops) > 4096:
                        ops.clear()
                    hit = ops[id(f)] = (f, parse(name, encode(name, f)))
                blocks = self.blocks
                if short is not None and blocks is not None and short(blocks, t, hit[1]):
                    return
                self._issue(t, hit[1])
            return run
        return {name: handler(name) for name in sfp_names().values()}

    def execute_word(self, t: int, word: int) -> None:
        """Issue the SFP instruction ``word`` as thread ``t`` (as the coprocessor would)."""
        self._issue(t, parse(sfp_names()[word >> 24], word))

    # ---- issue, cycles, SFPLOADMACRO -----------------------------------------------------

    @property
    def scheduled(self) -> bool:
        """Whether SFPLOADMACRO's work is unfinished (instructions waiting to run, or MAD
        results not yet written)."""
        return bool(self.macros.pending or self._landing)

    def _issue(self, t: int, op: Op) -> None:
        if not self.macros.pending:
            self._land()
            addr = self._execute(t, op)
        else:
            due = self.macros.tick(issued=True)
            unit = subunit_of(op.name)
            group: list[tuple[int, Op]] = [(e.unit, e.op) for e in due]
            if all(u != unit for u, _ in group):  # else the scheduled one displaces it
                group.append((unit, op))
            addrs = self._cycle(t, group, op)
            addr = addrs.get(id(op), 0)
        if op.name == "SFPLOADMACRO":
            self.macros.schedule(self.lanes, op, addr, self.report_ub)

    def idle_cycle(self, t: int = 0) -> None:
        """A cycle in which no SFP instruction is issued (another unit's instruction)."""
        due = self.macros.tick(issued=False)
        if due:
            self._cycle(t, [(e.unit, e.op) for e in due], None)
        else:
            self._land()

    def drain(self, t: int = 0) -> None:
        """Run every scheduled instruction, as cycles without other instructions would."""
        for _ in range(64):
            if not self.macros.pending:
                break
            due: list[Scheduled] = self.macros.tick(issued=True)
            if due:
                self._cycle(t, [(e.unit, e.op) for e in due], None)
            else:
                self._land()
        self._land()

    def _land(self) -> None:
        """The MAD results of the previous cycle reach the LRegs."""
        for changed, values in self._landing:
            self.lreg[changed] = values[changed]
        self._landing = []

    def _cycle(self, t: int, group: list[tuple[int, Op]], issued: Op | None) -> dict[int, int]:
        """Execute one cycle's instructions as if simultaneously: each reads the LRegs as
        they were before the cycle (the thread's ``issued`` one also sees the MAD results
        landing in this cycle, as the automatic stall would give it), their LReg writes are
        merged at the end; a MAD sub-unit result lands one cycle later. Returns the Dst
        address each load formed (by ``id`` of its Op)."""
        group = sorted(group, key=lambda g: _CYCLE_ORDER[g[0]])
        addrs: dict[int, int] = {}
        lreg = self.lreg
        start = lreg.copy()
        landing, self._landing = self._landing, []
        forwarded = None
        writes = []
        for unit, op in group:
            base = start
            if op is issued and landing:
                if forwarded is None:
                    forwarded = start.copy()
                    for changed, values in landing:
                        forwarded[changed] = values[changed]
                base = forwarded
            lreg[:] = base
            addrs[id(op)] = self._execute(t, op)
            changed = lreg != base
            if changed.any():
                (self._landing if unit == MAD else writes).append((changed, lreg.copy()))
        lreg[:] = start
        for changed, values in landing + writes:
            lreg[changed] = values[changed]
        return addrs

    def _execute(self, t: int, op: Op) -> int:
        """Execute one instruction (back-door load and TEN-2932 first); returns the Dst
        address of a load (0 otherwise)."""
        if op.vd >= 12 and not op.macro and op.name not in NO_BACKDOOR:
            backdoor = ~self.lanes.lane_flag(DISABLE_BACKDOOR_LOAD)
            if backdoor.any():
                tpl = self.lanes.templates[op.vd - 12]
                tpl[backdoor] = op.word
                if backdoor.all():
                    return 0
                self.exec_mask = ~backdoor
        if 4 <= op.vd < 8 and op.name not in _NOT_TEN2932 \
                and np.count_nonzero(self.lane_config) \
                and np.count_nonzero(self.lanes.lane_flag(ENABLE_DEST_INDEX)):
            self.report_ub(f"{op.name} writes LReg {op.vd} while LaneConfig ENABLE_DEST_INDEX "
                           "is set: the result is undefined (erratum TEN-2932)")
        try:
            addr = self._exec[op.name](t, op)
        finally:
            self.exec_mask = ALL_LANES
        return addr if isinstance(addr, int) else 0


__all__ = ["Sfpu"]
