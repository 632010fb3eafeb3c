"""Deterministic scheduling of the five cores and the three Tensix threads.

A round gives each running core, in the fixed order BRISC, NCRISC, TRISC0, TRISC1, TRISC2, up
to ``quantum`` instructions, then lets the coprocessor issue as long as any of its threads can
(up to a bound per round). A core leaves its quantum early when it parks (it polls memory that
has not changed), stalls (an access that cannot complete yet) or enters reset. Everything is a
function of instruction counts, so a run is the same every time.

Waking: a write through a window by another agent (a core, the coprocessor's STOREREG/STOREIND,
the host) wakes the parked cores watching that address; when the coprocessor executes anything,
cores parked on state it owns (semaphores, GPRs, configuration, Dst) wake; a stalled core wakes
when its access can complete.

Time: the wall clock is the cycle count, advanced each round by the most instructions any core
ran in it (at least one), plus, for a core reading it, what that core ran so far this round.

When no core can run and the coprocessor cannot move, the run is over: it returns if the
caller's ``until`` holds (or none was given) and raises :class:`~.errors.TileDeadlock` naming
each core's pc, symbol and wait otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .core import PARKED, RESET, RUNNING, STALLED, Core
from .errors import TileDeadlock, TileStepLimit
from .mmio import TileView

#: coprocessor rounds per scheduler round at most (it yields to the cores after that)
COPROCESSOR_BURST = 4096


@dataclass(frozen=True)
class RunResult:
    """What one :meth:`Scheduler.run` did."""

    instructions: int  # RISC-V instructions, all cores
    tensix_instructions: int
    rounds: int
    reason: str  # "until" (the condition held) or "idle" (nothing can move)


class Scheduler:
    def __init__(self, tile: TileView, quantum: int) -> None:
        self.tile = tile
        self.watchers = tile.watchers
        self.quantum = quantum
        self.cycles = 0
        self.rounds = 0
        self._current: Core | None = None
        self._current_start = 0

    # -- time ---------------------------------------------------------------------------------

    def now(self, core: Core | None = None) -> int:
        if core is not None and core is self._current:
            return self.cycles + core.hart.instret - self._current_start
        return self.cycles

    # -- waking -------------------------------------------------------------------------------

    #: a write looks only at the tile's parked cores (:class:`.core.Watchers`), none when
    #: it misses the span of all they watch (False: at every core, as ``watch_span`` was
    #: introduced; tests compare)
    watch_span = True

    def wrote(self, addr: int, size: int, by: Core | None) -> None:
        """Someone wrote ``[addr, addr + size)``: wake the cores watching it."""
        end = addr + size
        if self.watch_span:
            w = self.watchers
            if addr >= w.hi or end <= w.lo:
                return
            for core in w.parked:  # (parked, with a watch; a wake makes a new tuple)
                if core is not by:
                    wait = core.wait
                    if addr < wait.hi and wait.lo < end:
                        for a, s in wait.watch:
                            if a < end and addr < a + s:
                                core.wake()
                                break
            return
        for core in self.tile.cores.values():
            if core.state == PARKED and core is not by:
                wait = core.wait  # core.watches(addr, size), inlined (called on every write)
                if wait is not None and addr < wait.hi and wait.lo < end:
                    for a, s in wait.watch:
                        if a < end and addr < a + s:
                            core.wake()
                            break

    def _coprocessor_moved(self) -> None:
        for core in self.tile.cores.values():
            if core.state == PARKED and core.wait is not None and core.wait.coprocessor:
                core.wake()

    def _check_stalls(self) -> None:
        for core in self.tile.cores.values():
            if core.state == STALLED and core.wait is not None and core.wait.ready():
                core.wake()

    # -- the coprocessor ---------------------------------------------------------------------

    def _run_coprocessor(self) -> int:
        cp = self.tile.cp
        start = cp.steps
        cp.burst(COPROCESSOR_BURST)  # stops when every unfinished thread waits: a core may
        # unblock it later
        moved = cp.steps - start
        if moved:
            self._coprocessor_moved()
        return moved

    # -- the loop -----------------------------------------------------------------------------

    def any_running(self) -> bool:
        return any(c.state == RUNNING for c in self.tile.cores.values())

    def round(self, left: int | None = None, cores: list[Core] | None = None
              ) -> tuple[int, int, int]:
        """One round: each running core (in ``cores``' order, the processor order by default)
        runs up to a quantum, then the coprocessor issues. ``left`` bounds the RISC-V
        instructions of the round (past it the round ends at once, before the coprocessor).
        Returns (RISC-V instructions, most by one core, Tensix instructions). The caller
        advances the clock."""
        self._check_stalls()
        total = longest = 0
        for core in cores if cores is not None else self.tile.cores.values():
            if core.state != RUNNING:
                continue
            budget = self.quantum
            if left is not None:
                budget = min(budget, left - total + 1)
            self._current, self._current_start = core, core.hart.instret
            try:
                done = core.run(budget)
            finally:
                self._current = None
            total += done
            longest = max(longest, done)
            if left is not None and total > left:
                return total, longest, 0
        return total, longest, self._run_coprocessor()

    def run(self, max_steps: int | None, until: Callable[[], bool] | None) -> RunResult:
        total = tensix = rounds = 0
        while True:
            if until is not None and until():
                return RunResult(total, tensix, rounds, "until")
            done, longest, moved = self.round(None if max_steps is None else max_steps - total)
            total += done
            if max_steps is not None and total > max_steps:
                raise TileStepLimit(f"the run did not finish within {max_steps} RISC-V "
                                    f"instructions (--max-steps); {self.describe_cores()}")
            tensix += moved
            self.cycles += max(longest, 1)
            rounds += 1
            self.rounds += 1
            if longest == 0 and moved == 0:
                self._check_stalls()
                if self.any_running():
                    continue
                if until is None or until():
                    return RunResult(total, tensix, rounds, "until" if until else "idle")
                raise self.deadlock()

    # -- reports ------------------------------------------------------------------------------

    def waits(self) -> dict[str, str]:
        out = {}
        for core in self.tile.cores.values():
            if core.state == RESET:
                out[core.name] = "held in reset"
            else:
                pc = core.hart.pc
                sym = core.symbol(pc)
                at = f"pc {pc:#x}" + (f" <{sym}>" if sym else "")
                reason = core.wait.reason if core.wait else core.state
                out[core.name] = f"{at}: {reason}"
        for t, th in enumerate(self.tile.cp.threads):
            if not th.finished:
                out[f"tensix{t}"] = str(th.blocked or "waiting")
        return out

    def describe_cores(self) -> str:
        return "; ".join(f"{k}: {v}" for k, v in self.waits().items())

    def deadlock(self) -> TileDeadlock:
        waits = self.waits()
        return TileDeadlock("deadlock: no core and no Tensix thread can make progress ("
                            + "; ".join(f"{k}: {v}" for k, v in waits.items()) + ")", waits)


__all__ = ["COPROCESSOR_BURST", "RunResult", "Scheduler"]
