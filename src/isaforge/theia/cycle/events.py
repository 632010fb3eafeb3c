"""What the cycle model reports: one record per issue, per commit and per taken branch.

The records carry what the RTL's FlowDumper prints (``vplog`` turns them into vp.N.log
lines) and what the VCD writer draws. Cycle numbers count from the model's first cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..machine.alu import Lanes


@dataclass(slots=True)
class Issue:
    """An instruction put on the issue bus (station ``rs``; 0 = NOP, printed by nobody)."""

    cycle: int
    thread: int
    ip: int  # the issue unit's PC register - 1, as the RTL prints it
    address: int  # where the instruction was fetched from
    word: int
    rs: int
    dst: int
    we: int
    offset: int  # frame offset (R3.x) used for the addresses
    index: int  # index register (R3.z)
    dep1: int  # station computing SRC1 (0: none)
    dep0: int
    raw1: Lanes  # operands before the SMU (register or immediate)
    raw0: Lanes
    known1: int  # lanes of raw1/raw0 that hold a defined value (x=4, y=2, z=1)
    known0: int
    mod1: Lanes  # operands after the SMU (a pending operand shows its tag)
    mod0: Lanes
    src1_x: int  # raw SRC1.x (IMM mode 011 adds it to the destination)
    src1_addr: int  # RF rows read (as the RTL computes oSourceAddress1/0)
    src0_addr: int


@dataclass(slots=True)
class Commit:
    """A result on the commit bus (written to the RF under its write enables)."""

    cycle: int
    thread: int
    rs: int
    word: int  # the instruction
    dst: int
    we: int
    result: Lanes
    known: int  # lanes of the result that are defined


@dataclass(slots=True)
class BranchTaken:
    """The issue unit saw a taken-branch condition on the commit bus (the RTL's message)."""

    cycle: int
    thread: int


Event = Issue | Commit | BranchTaken
