"""Reservation stations: which one an opcode goes to, when it is busy, and what it holds.

IDs are the RTL's (the value on the issue and commit buses; 0 means "none"):
ADD_0=1, ADD_1=2, DIV=3, MUL=4, SQRT=5, LOGIC=6, IO=7. ADD, MUL, SQRT and LOGIC finish in one
cycle; DIV takes 66 cycles; IO is an OMEM write (no result) or a TMEM read (15 cycles).
"""

from __future__ import annotations

from collections import deque

from ..machine.alu import OP_ADD, OP_DIV, OP_IO, OP_LOGIC, OP_MUL, OP_SQRT, Lanes

RS_NONE, RS_ADD0, RS_ADD1, RS_DIV, RS_MUL, RS_SQRT, RS_LOGIC, RS_IO = range(8)
NUM_STATIONS = 7  # ids 1..7
RS_NAMES = ("0000", "ADD_0", "ADD_1", "DIV", "MUL", "SQRT", "LOGIC", "IO")
NEVER = 1 << 62  # a cycle that never comes

# opcode -> the station(s) it may use (ADD has two)
OPCODE_STATION = {OP_ADD: RS_ADD0, OP_DIV: RS_DIV, OP_MUL: RS_MUL, OP_SQRT: RS_SQRT,
                  OP_LOGIC: RS_LOGIC, OP_IO: RS_IO}
# opcode -> its one station (0: ADD, which has two, and NOP / opcode 7, which have none)
FIXED_STATION = tuple(0 if o == OP_ADD else OPCODE_STATION.get(o, 0) for o in range(8))
# the stations whose busy line the RTL's issue unit checks (quirk rtl_structural)
RTL_CHECKED = (RS_ADD0, RS_ADD1, RS_DIV, RS_MUL, RS_IO)


class Op:
    """One issued instruction, from issue to commit."""

    __slots__ = ("word", "thread", "rs", "dst", "we", "src1", "src0", "dep1", "dep0",
                 "issue", "start", "result", "branch", "io", "seq", "waits", "pend1", "pend0",
                 "raw1", "raw0", "known")

    def __init__(self, word: int, thread: int, rs: int, dst: int, we: int, issue: int,
                 seq: int, branch: bool | None = None, io: int | None = None) -> None:
        self.word = word
        self.thread = thread
        self.rs = rs
        self.dst = dst
        self.we = we
        self.src1: Lanes | None = None  # operands as the execution unit sees them
        self.src0: Lanes | None = None
        self.dep1 = 0  # station still computing SRC1 (0: none)
        self.dep0 = 0
        self.issue = issue
        self.start = NEVER  # cycle the execution unit starts
        self.result: Lanes = (0, 0, 0)
        self.known = 7  # lanes of the result that are defined (x=4): an x operand lane
        # (a register never written) makes its result lane x, as in the RTL
        self.branch = bool(word >> 57 & 1) if branch is None else branch
        # 0 OMWRITE, 1 TMREAD, -1 not IO
        self.io = (word >> 59 & 7 if word >> 48 & 7 == OP_IO else -1) if io is None else io
        self.seq = seq
        self.waits = False  # issued with a dependency (waited in its station)
        # designed renaming: lanes of SRC1/SRC0 still to come, lane -> producing op, and the
        # raw operand being assembled
        self.pend1: dict[int, Op] | None = None
        self.pend0: dict[int, Op] | None = None
        self.raw1: list[int] | None = None
        self.raw0: list[int] | None = None


class Station:
    """A reservation station and its execution unit.

    ``busy_end`` is the last cycle the station reports busy to the issue unit (inclusive);
    ``out`` holds results waiting for the commit bus as ``(ready_cycle, op)``.
    """

    __slots__ = ("id", "name", "busy_from", "busy_end", "waiting", "out", "executed")

    def __init__(self, sid: int) -> None:
        self.id = sid
        self.name = RS_NAMES[sid]
        self.busy_from = NEVER
        self.busy_end = -1
        self.waiting: Op | None = None
        self.out: deque[tuple[int, Op]] = deque()
        self.executed = 0

    def busy(self, t: int) -> bool:
        return self.busy_from <= t <= self.busy_end
