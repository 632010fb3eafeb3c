"""The instruction issue unit (IIU) of one VP thread: its state and what it looks up.

An :class:`IssueUnit` holds what the RTL's Module_InstructionIssue holds: PC, the state of
its finite-state machine (:mod:`.states`), the dependency table, the 2-entry commit FIFO, the
branch it waits for. The machine's transitions are written once, in the cycle loop of
:meth:`VPCycleModel.run <isaforge.theia.cycle.model.VPCycleModel.run>`, which steps one or
(with SMT) both units each cycle; this module has the lookups it makes: which station an
instruction goes to and whether that is a structural hazard, which stations its operands
wait for, where a taken branch goes.

The instruction memory is read synchronously: the word examined in cycle t is the one at the
PC of cycle t-1 (``prev_pc``). The RTL prints ``PC - 1`` as the issue's IP.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

from ..machine.alu import OP_ADD, Addressing, Lanes, addressing, branch_taken, branch_target, flags
from .quirks import Quirks
from .states import FETCH, PC_MASK, RESET, UNDEF
from .stations import FIXED_STATION, NEVER, RS_ADD0, RS_ADD1, RTL_CHECKED, Op, Station


class IssueContext(Protocol):
    """What an issue unit reads of the model around it."""

    quirks: Quirks
    stations: list[Station]
    rf: list[Lanes]

    def operand_rows(self, w: int) -> Addressing: ...

    def pending(self, addr: int | None, c: Op | None) -> dict[int, Op] | None: ...


class IssueUnit:
    """One thread's issue unit."""

    __slots__ = ("bubble", "branch_op", "branch_target", "checked", "ctx", "enabled", "ended",
                 "eof_stops", "fifo", "issued", "latched", "one_more", "pc", "prev_pc",
                 "resume_at", "sb", "stall_cycles", "state", "stations", "thread")

    def __init__(self, ctx: IssueContext, thread: int, code_offset: int = 0) -> None:
        self.ctx = ctx
        self.thread = thread
        self.pc = code_offset
        self.prev_pc = code_offset
        self.state = FETCH
        q = ctx.quirks
        # dependency table: register -> station computing it (0: none; UNDEF: the RTL's
        # table RAM is not initialised, an entry never written reads as x)
        self.sb = [UNDEF if q.rtl_scoreboard else 0] * 256
        self.fifo: deque[Op] = deque()
        self.latched: Op | None = None  # the commit of the previous cycle (forwarding)
        self.branch_op: Op | None = None
        self.branch_target: int | None = None  # decided target (-1: not taken)
        self.resume_at = NEVER  # RTL: cycle a branch with a dependency is fetched again
        self.ended = False
        self.bubble = False  # designed: the next FETCH sees a stale instruction word
        self.issued = 0
        self.stall_cycles = 0
        # SMT: this thread owns the issue bus this cycle; it is the first of its two cycles
        # (both always, without SMT)
        self.enabled = True
        self.one_more = True
        self.stations = ctx.stations
        # the RTL stops the whole run at thread 0's EOF (quirk stop_at_eof)
        self.eof_stops = thread == 0 and q.stop_at_eof
        # by opcode: whether a busy station is a structural hazard (the RTL checks only
        # ADD, DIV, MUL and IO)
        self.checked = tuple(FIXED_STATION[o] in RTL_CHECKED or not q.rtl_structural
                             for o in range(8))

    def reset(self, code_offset: int) -> None:
        """The RTL holds the second thread's unit in reset while multithreading is off."""
        self.state = RESET
        self.pc = self.prev_pc = code_offset & PC_MASK
        self.fifo.clear()
        self.latched = None
        self.branch_op = None
        self.branch_target = None
        self.bubble = False

    def station_for(self, w: int, t: int) -> tuple[int, bool]:
        """(station the instruction would be issued to, structural hazard) in cycle t."""
        st = self.stations
        op = w >> 48 & 7
        if op == OP_ADD:
            s = st[RS_ADD0]
            if not s.busy_from <= t <= s.busy_end:
                return RS_ADD0, False
            s = st[RS_ADD1]
            return (0, True) if s.busy_from <= t <= s.busy_end else (RS_ADD1, False)
        sid = FIXED_STATION[op]
        if not sid:
            return 0, False
        s = st[sid]
        if s.busy_from <= t <= s.busy_end:
            return 0, self.checked[op]
        return sid, False

    def deps(self, w: int, fwd: Op | None) -> tuple[int, int]:
        """Stations still computing SRC1 / SRC0 of ``w``, from the dependency table."""
        ctx = self.ctx
        a = ctx.operand_rows(w)
        if ctx.quirks.rtl_scoreboard:
            sb = self.sb
            imm = w >> 63
            d1 = 0 if imm or a.src1_addr is None else sb[a.src1_addr]
            d0 = 0 if (imm and w >> 47 & 1) or a.src0_addr is None else sb[a.src0_addr]
            if fwd is not None:
                if d1 and fwd.dst == a.src1_addr:
                    d1 = 0
                if d0 and fwd.dst == a.src0_addr:
                    d0 = 0
            return d1, d0
        p1 = ctx.pending(a.src1_addr, None) if a.src1_value is None else None
        p0 = ctx.pending(a.src0_addr, None)
        return (next(iter(p1.values())).rs if p1 else 0,
                next(iter(p0.values())).rs if p0 else 0)

    def commit_seen(self, c: Op) -> None:
        """Designed machine: a branch learns its fate when its own result commits."""
        if c is self.branch_op and not self.ctx.quirks.branch_next_cycle:
            zero, sign = flags(c.result)
            w = c.word
            if branch_taken(w >> 54 & 7, zero, sign):
                self.branch_target = self.target(w)
            else:
                self.branch_target = -1

    def target(self, w: int) -> int:
        """Where the branch ``w`` goes when taken (the DST literal, or a register's x)."""
        if not w >> 63:  # the DST literal
            return w >> 34 & 0xFF
        rf = self.ctx.rf
        r3 = rf[3]
        a = addressing(w, r3[0] & 0xFF, r3[2] & 0xFF)
        raw0 = rf[a.src0_addr] if a.src0_addr is not None else (0, 0, 0)
        return branch_target(w, raw0) & PC_MASK


__all__ = ["IssueContext", "IssueUnit"]
