"""The instruction issue unit (IIU) of one VP thread: fetch, dependency table, issue, branch.

The finite-state machine is the RTL's (Module_InstructionIssue, beta_2.0), one state per
clock cycle:

* ``FETCH``: the instruction memory output is examined; the PC advances when the station is
  free, the instruction is not a branch and no commit is queued. A commit seen here clears
  its dependency-table entry directly.
* ``ISSUE`` / ``ISSUE_FWD``: the issue packet goes to the stations; the destination's entry
  in the dependency table is set to the station. ``ISSUE_FWD`` follows a commit and takes
  the just-committed value (forwarding). An instruction therefore issues every 2 cycles.
* ``FIFO_UPDATE``: a commit that arrived while the unit was busy is taken from its 2-entry
  FIFO and its dependency-table entry cleared (one cycle each).
* ``UPDATE_PC``: after a branch, wait for its result on the commit bus and load the target.

The instruction memory is read synchronously: the word examined in cycle t is the one at the
PC of cycle t-1 (``prev_pc``). The RTL prints ``PC - 1`` as the issue's IP.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from ..machine.alu import (
    OP_ADD,
    OP_DIV,
    OP_IO,
    OP_LOGIC,
    OP_MUL,
    OP_SQRT,
    addressing,
    branch_taken,
    branch_target,
    flags,
)
from .stations import NEVER, RS_ADD0, RS_ADD1, RS_DIV, RS_IO, RS_LOGIC, RS_MUL, RS_SQRT, Op

if TYPE_CHECKING:
    from .model import VPCycleModel

FETCH, ISSUE_FWD, ISSUE, FIFO_UPDATE, UPDATE_PC = 1, 2, 3, 4, 6  # the RTL's state numbers
STATE_NAMES = {FETCH: "FETCH", ISSUE_FWD: "ISSUE_FWD", ISSUE: "ISSUE",
               FIFO_UPDATE: "FIFO_UPDATE", UPDATE_PC: "UPDATE_PC", 0: "IDLE"}
FIFO_DEPTH = 2
PC_MASK = 0xFFFF
UNDEF = -1  # an x in the RTL's dependency table


class IssueUnit:
    """One thread's issue unit."""

    __slots__ = ("m", "thread", "pc", "prev_pc", "state", "sb", "fifo", "latched",
                 "branch_op", "branch_target", "resume_at", "ended", "bubble", "issued",
                 "stall_cycles", "reg_base", "reg_mask", "eof_stops", "rtl_sb", "refetch",
                 "bnc", "bdr", "smu_check", "checked", "imem", "trace",
                 "issue")

    def __init__(self, model: VPCycleModel, thread: int, code_offset: int = 0) -> None:
        self.m = model
        self.thread = thread
        self.pc = code_offset
        self.prev_pc = code_offset
        self.state = FETCH
        # dependency table: register -> station computing it (0: none; UNDEF: the RTL's
        # table RAM is not initialised, an entry never written reads as x)
        self.sb = [UNDEF if model.quirks.rtl_scoreboard else 0] * 256
        self.fifo: deque[Op] = deque()
        self.latched: Op | None = None  # the commit of the previous cycle (forwarding)
        self.branch_op: Op | None = None
        self.branch_target: int | None = None  # decided target (-1: not taken)
        self.resume_at = NEVER  # RTL: cycle a branch with a dependency is fetched again
        self.ended = False
        self.bubble = False  # designed: the next FETCH sees a stale instruction word
        self.issued = 0
        self.stall_cycles = 0
        # the instruction memory as the PC addresses it (16 bits; unwritten words read 0)
        self.imem = model.code[:PC_MASK + 1] + [0] * (PC_MASK + 1 - min(len(model.code),
                                                                         PC_MASK + 1))
        self.trace = model.trace
        self.issue = model.issue
        # the quirk flags, read every cycle (the model's quirks never change)
        q = model.quirks
        self.eof_stops = thread == 0 and q.stop_at_eof
        self.rtl_sb = q.rtl_scoreboard
        self.refetch = q.refetch_after_fifo
        self.bnc = q.branch_next_cycle
        self.bdr = q.branch_dep_reissue
        self.smu_check = not q.no_smu_stall
        # by opcode: whether a busy station is a structural hazard (the RTL checks only
        # ADD, DIV, MUL and IO)
        self.checked = tuple(_FIXED.get(o) in (RS_DIV, RS_MUL, RS_IO) or not q.rtl_structural
                             for o in range(8))

    # ---------------------------------------------------------------------------------------
    # Helpers
    # ---------------------------------------------------------------------------------------

    def word(self) -> int:
        code = self.m.code
        p = self.prev_pc
        return code[p] if p < len(code) else 0

    def station_for(self, w: int, t: int) -> tuple[int, bool]:
        """(station the instruction would be issued to, structural hazard) in cycle t."""
        st = self.m.stations
        op = w >> 48 & 7
        if op == OP_ADD:
            s = st[RS_ADD0]
            if not s.busy_from <= t <= s.busy_end:
                return RS_ADD0, False
            s = st[RS_ADD1]
            return (0, True) if s.busy_from <= t <= s.busy_end else (RS_ADD1, False)
        sid = _FIXED.get(op)
        if sid is None:
            return 0, False
        s = st[sid]
        if s.busy_from <= t <= s.busy_end:
            checked = sid in (RS_DIV, RS_MUL, RS_IO) or not self.m.quirks.rtl_structural
            return 0, checked
        return sid, False

    def deps(self, w: int, fwd: Op | None) -> tuple[int, int]:
        """Stations still computing SRC1 / SRC0 of ``w``, from the dependency table."""
        m = self.m
        plan = m._plans.get(w)  # the word's decoded addressing when it does not depend on R3
        a = plan[2] if plan is not None else None
        if a is None:
            a = m.addressing(w)
        sb = self.sb
        imm = w >> 63
        if self.rtl_sb:
            d1 = 0 if imm or a.src1_addr is None else sb[a.src1_addr]
            d0 = 0 if (imm and w >> 47 & 1) or a.src0_addr is None else sb[a.src0_addr]
            if fwd is not None:
                if d1 and fwd.dst == a.src1_addr:
                    d1 = 0
                if d0 and fwd.dst == a.src0_addr:
                    d0 = 0
            return d1, d0
        p1 = m.pending(a.src1_addr, None) if a.src1_value is None else None
        p0 = m.pending(a.src0_addr, None)
        return (next(iter(p1.values())).rs if p1 else 0,
                next(iter(p0.values())).rs if p0 else 0)

    def _push(self, c: Op) -> None:
        if len(self.fifo) < FIFO_DEPTH:
            self.fifo.append(c)
        else:
            self.m.fifo_overflows += 1

    def commit_seen(self, c: Op) -> None:
        """Designed machine: a branch learns its fate when its own result commits."""
        if c is self.branch_op and not self.m.quirks.branch_next_cycle:
            zero, sign = flags(c.result)
            w = c.word
            if branch_taken(w >> 54 & 7, zero, sign):
                self.branch_target = self._target(w)
            else:
                self.branch_target = -1

    def _target(self, w: int) -> int:
        if not w >> 63:  # the DST literal
            return w >> 34 & 0xFF
        m = self.m
        a = addressing(w, m.offset, m.index)
        raw0 = m.rf[a.src0_addr] if a.src0_addr is not None else (0, 0, 0)
        return branch_target(w, raw0) & PC_MASK

    # ---------------------------------------------------------------------------------------
    # One clock cycle
    # ---------------------------------------------------------------------------------------

    def reset(self, code_offset: int) -> None:
        """The RTL holds the second thread's unit in reset while multithreading is off."""
        self.state = 0
        self.pc = self.prev_pc = code_offset & PC_MASK
        self.fifo.clear()
        self.latched = None
        self.branch_op = None
        self.branch_target = None
        self.bubble = False

    def step(self, t: int, c: Op | None, enabled: bool = True, one_more: bool = True,
             mt: bool = False) -> bool:
        """Cycle ``t`` with ``c`` on the commit bus (None: bus idle).

        ``enabled``: this thread owns the issue bus this cycle (always, without SMT);
        ``one_more``: it is the first of the thread's two cycles; ``mt``: SMT is on.
        Returns whether the model has to look (the unit waits or ended: ``idle_hint``, or
        the run finished).
        """
        w = self.imem[self.prev_pc]
        st = self.state
        if st == 0:  # out of reset: one cycle, then FETCH
            self.state = FETCH
            self.prev_pc = self.pc
            return False
        fifo = self.fifo
        if t == self.resume_at:  # RTL: the branch with a dependency is fetched again
            self.resume_at = NEVER
            fifo.clear()
            st = FETCH
        if w >> 58 & 1 and self.eof_stops:
            self.m.finish(t)
            return True
        c_raw = c
        if c is not None:
            if w >> 57 & 1 and self.trace and c.rs == self.station_for(w, t)[0]:
                zero, sign = flags(c.result)
                if branch_taken(w >> 54 & 7, zero, sign):
                    self.m.branch_taken(t, self.thread)
            if mt and (c.dst >> 7) != self.thread:
                c = None  # SMT: each thread listens to the commits of its half of the RF
        m = self.m
        hint = False
        if st == FETCH:
            if self.bubble:  # designed: the word at the new PC arrives next cycle
                self.bubble = False
                if fifo:
                    fifo.popleft()
                if c is not None:
                    self._push(c)
                self.latched = c
                self.prev_pc = self.pc
                return False
            if enabled:
                # the station the instruction would go to, and whether it is a structural
                # hazard (station_for, inlined: this runs every FETCH cycle)
                opc = w >> 48 & 7
                stations = m.stations
                busy = False
                if opc == OP_ADD:
                    s = stations[RS_ADD0]
                    sid = RS_ADD0
                    if s.busy_from <= t <= s.busy_end:
                        s = stations[RS_ADD1]
                        sid = RS_ADD1
                        if s.busy_from <= t <= s.busy_end:
                            sid = 0
                            busy = True
                else:
                    sid = _FIXED_BY_OP[opc]
                    if sid:
                        s = stations[sid]
                        if s.busy_from <= t <= s.busy_end:
                            sid = 0
                            busy = self.checked[opc]
                if not busy and sid and self.smu_check and m.smu.used > 2:
                    d1, d0 = self.deps(w, None)
                    n = (d1 > 0) + (d0 > 0)
                    if n and not m.smu.has_room(n):
                        busy = True
                        m.smu.stalls += 1
            else:
                busy = True
            if c is not None:
                if self.rtl_sb:
                    self.sb[c.dst] = 0
                inc = not busy and not w >> 57 & 1
                if not busy and (not mt or one_more):
                    nxt = ISSUE_FWD
                elif fifo:
                    nxt = FIFO_UPDATE
                elif busy or (mt and not one_more):
                    # the commit is queued below, so the loop will not skip cycles
                    nxt = FETCH
                    self.stall_cycles += 1
                    if mt:
                        m.idle_hint = hint = True
                else:
                    nxt = ISSUE
            else:
                inc = not busy and not w >> 57 & 1 and not fifo
                if fifo:
                    nxt = FIFO_UPDATE
                elif busy or (mt and not one_more):
                    nxt = FETCH
                    self.stall_cycles += 1
                    m.idle_hint = hint = True
                else:
                    nxt = ISSUE
            if not self.refetch and nxt != ISSUE and nxt != ISSUE_FWD:
                inc = False  # RTL: a FETCH late in an SMT slot advances the PC anyway
            # end of cycle (nothing popped, no PC loaded)
            if c is not None:
                if len(fifo) < FIFO_DEPTH:
                    fifo.append(c)
                else:
                    m.fifo_overflows += 1
            self.latched = c
            pc = self.pc
            self.prev_pc = pc
            if inc and not w >> 58 & 1:
                self.pc = (pc + 1) & PC_MASK
            self.state = nxt
            return hint
        if st == ISSUE or st == ISSUE_FWD:
            inc = False
            nxt = st
            if not enabled:
                nxt = FIFO_UPDATE if fifo else st
            elif w >> 58 & 1:  # EOF: the thread ends here (the RTL just never issues it)
                if not m.quirks.stop_at_eof:
                    self.ended = True
                    m.idle_hint = hint = True
                    nxt = 0
            else:
                op = self.issue(self, w, t, self.latched if st == ISSUE_FWD else None, c)
                if w >> 57 & 1:
                    nxt = UPDATE_PC
                    self.branch_op = op
                    self.branch_target = None
                    if self.bdr:
                        inc = not (op is not None and op.waits)
                    else:
                        inc = True
                else:
                    nxt = FETCH
            # end of cycle (no PC loaded)
            if st == ISSUE_FWD and fifo:
                fifo.popleft()
            if c is not None:
                if len(fifo) < FIFO_DEPTH:
                    fifo.append(c)
                else:
                    m.fifo_overflows += 1
            self.latched = c
            pc = self.pc
            self.prev_pc = pc
            if inc and not w >> 58 & 1:
                self.pc = (pc + 1) & PC_MASK
            self.state = nxt
            return hint
        nxt = st
        inc = False
        pop = False
        setpc = -1
        if st == FIFO_UPDATE:
            if fifo and self.rtl_sb:
                self.sb[fifo[0].dst] = 0
            pop = True
            sid, busy = self.station_for(w, t)
            busy = busy or not enabled
            branch = w >> 57 & 1
            if self.branch_op is not None and not self.bnc:
                nxt = UPDATE_PC
            elif not busy and not branch and (not mt or one_more):
                nxt = ISSUE
                inc = mt or not self.refetch
            else:
                nxt = FETCH
        elif st == UPDATE_PC:
            bop = self.branch_op
            if self.bnc:
                # RTL: the FIFO is popped (the entry is lost); the PC is loaded whenever the
                # commit bus shows a result of the station this instruction would use that
                # meets its branch condition (any thread's result, any cycle in this state)
                had_fifo = bool(fifo)
                if fifo:
                    fifo.popleft()
                if (c_raw is not None and w >> 57 & 1
                        and c_raw.rs == self.station_for(w, t)[0]):
                    zero, sign = flags(c_raw.result)
                    if branch_taken(w >> 54 & 7, zero, sign):
                        setpc = self._target(w)
                if (not mt and bop is not None and bop.waits and self.bdr):
                    # measured, not derived: the branch is fetched again a fixed time after
                    # its producer commits (test_branches_1)
                    if c is not None and (c.rs == bop.dep1 or c.rs == bop.dep0):
                        # the PC still holds the branch's address (not advanced at issue)
                        self.resume_at = t + m.quirks.timing.branch_dep_reissue - 1
                        for i in range(256):
                            if self.sb[i] == c.rs:
                                self.sb[i] = 0
                    setpc = -1
                    nxt = UPDATE_PC
                    m.idle_hint = hint = True
                else:
                    d1, d0 = self.deps(w, None) if w >> 57 & 1 else (0, 0)
                    if not (d1 or d0):
                        self.branch_op = None
                        nxt = FETCH
                    elif had_fifo:
                        nxt = FIFO_UPDATE
            else:
                if self.branch_target is not None:
                    if self.branch_target >= 0:
                        setpc = self.branch_target
                    self.branch_op = None
                    self.branch_target = None
                    nxt = FETCH
                    self.bubble = True
                elif fifo:
                    nxt = FIFO_UPDATE
                elif c is None or mt:  # (a commit is queued below: nothing to skip)
                    m.idle_hint = hint = True
        else:  # ended
            if c is not None:
                self._push(c)
            m.idle_hint = True
            return True
        # end of cycle: FIFO, PC, instruction memory address, state
        if pop and fifo:
            fifo.popleft()
        if c is not None:
            if len(fifo) < FIFO_DEPTH:
                fifo.append(c)
            else:
                m.fifo_overflows += 1
        self.latched = c
        self.prev_pc = self.pc
        if setpc >= 0:
            self.pc = setpc
        elif inc and not w >> 58 & 1:
            self.pc = (self.pc + 1) & PC_MASK
        self.state = nxt
        return hint


_FIXED = {OP_DIV: RS_DIV, OP_MUL: RS_MUL, OP_SQRT: RS_SQRT, OP_LOGIC: RS_LOGIC, OP_IO: RS_IO}
_FIXED_BY_OP = tuple(_FIXED.get(o, 0) for o in range(8))  # opcode -> station (0: none)
