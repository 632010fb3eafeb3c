"""Which RTL defects the cycle model reproduces, and the latencies it uses.

By default the model runs the VP pipeline *as designed* (the architecture document): every
instruction is issued once, a stalled instruction is issued when its reservation station
frees up, a branch is resolved when its own result is committed, and the run ends once
everything in flight has committed. ``Quirks.rtl()`` switches on every defect of the
beta_2.0 RTL that shows in its ``vp.N.log`` traces; each flag can also be set alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Timing:
    """Latencies in clock cycles (measured on the RTL traces in refdata/theia)."""

    div: int = 66  # DIV: issue (or start) -> commit
    tmread_commit: int = 15  # TMREAD: issue -> commit
    tmread_busy: int = 12  # TMREAD: cycles after issue during which the IO station is busy
    omwrite_busy: int = 5  # OMWRITE: cycles after issue during which the IO station is busy
    # from a producer's commit to the cycle a waiting station starts executing
    forward_rtl: int = 3  # RTL: dependent 1-cycle op commits 4 cycles after its producer
    forward_designed: int = 1  # design document: the SMU presents the value the next cycle
    # RTL, branch issued with a pending dependency: cycles from the producer's commit to the
    # re-issue of the branch (measured once, test_branches_1: DIV commit 1203 -> 1213)
    branch_dep_reissue: int = 10


@dataclass(frozen=True)
class Quirks:
    """RTL defects, each off by default (the designed machine)."""

    # The PC is not advanced when the issue unit resumes through its commit FIFO
    # (II_FIFO_UPDATE -> II_ISSUE_REQUEST), so the next fetch reads the same instruction
    # again: the first instruction after every branch is issued twice ("MUL issued twice",
    # "TMREAD issued twice"), and an instruction that waited for its busy station is issued
    # again each time the station frees (the "DIV re-issued" livelock of perf_div_livelock).
    # Conversely, with SMT a FETCH in the second cycle of a thread's slot advances the PC
    # without issuing, so an instruction is skipped (never seen in the traces: the RTL's own
    # slot rhythm avoids it, but the designed branch timing would hit it).
    refetch_after_fifo: bool = False
    # A branch whose operands are still being computed is executed by its station when they
    # arrive, but the issue unit ignores that result and issues the branch a second time.
    branch_dep_reissue: bool = False
    # The dependency table entry of a result is cleared when the result is committed even
    # if a younger instruction has claimed the register since (no owner check), and an
    # instruction issued in the cycle its producer commits keeps waiting for it.
    rtl_scoreboard: bool = False
    # The run stops at the first cycle an EOF instruction reaches the issue unit; results
    # still in flight (a 66-cycle DIV) are never committed.
    stop_at_eof: bool = False
    # A branch is decided by whatever is on the commit bus the cycle after it is issued
    # (normally its own result), not by waiting for its own commit.
    branch_next_cycle: bool = False
    # TMREAD returns row 0 of TMEM banks 0..2 for every address (RUN.md, test1_IO).
    tmem_row0: bool = False
    # The SMU's 4 dep-store slots are not a stall condition (the RTL issue unit has no SMU
    # busy input); the designed machine stalls issue when they are all in use (Table 12).
    no_smu_stall: bool = False
    # The RTL checks a structural hazard only for ADD, DIV, MUL and IO.
    rtl_structural: bool = False
    # A TMREAD waits for the round-robin arbiter of each TMEM bank it reads (the token turns
    # every cycle from reset; cycle numbers from the test bench's clock, ``clock0``) instead
    # of taking the fixed ``Timing.tmread_busy`` / ``tmread_commit``.
    tmem_tokens: bool = False
    timing: Timing = Timing()

    @classmethod
    def rtl(cls, **overrides: object) -> Quirks:
        """Every defect on: the model reproduces the RTL's vp.N.log."""
        q = cls(refetch_after_fifo=True, branch_dep_reissue=True, rtl_scoreboard=True,
                stop_at_eof=True, branch_next_cycle=True, tmem_row0=True, no_smu_stall=True,
                rtl_structural=True, tmem_tokens=True)
        return replace(q, **overrides) if overrides else q

    @property
    def forward_delay(self) -> int:
        return self.timing.forward_rtl if self.rtl_scoreboard else self.timing.forward_designed


DESIGNED = Quirks()
RTL = Quirks.rtl()
