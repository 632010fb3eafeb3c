"""What the cycle model reports: one record per issue, per commit and per taken branch.

The records carry what the RTL's FlowDumper prints (``vplog`` turns them into vp.N.log
lines) and what the VCD writer draws. Cycle numbers count from the model's first cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


@dataclass(slots=True)
class Replayed:
    """Iterations of a loop replayed from a recorded one (``cycle.replay``; only in the
    records of a model made with ``blocks``): iteration ``k`` has the records of
    ``template.events`` moved by ``cycle + k * template.period`` cycles, with the values
    ``values[k]``. :meth:`expand` gives them as plain records; ``vplog.LogFormatter`` prints
    them directly."""

    cycle: int  # the shift of the first iteration from the recorded one
    thread: int
    template: Any
    values: list[tuple]

    def expand(self) -> list[Issue | Commit | BranchTaken]:
        out: list[Issue | Commit | BranchTaken] = []
        p = self.template.period
        for k, v in enumerate(self.values):
            out += self.template.records(self.cycle + k * p, v)
        return out


def expand(events: list[Event]) -> list[Issue | Commit | BranchTaken]:
    """``events`` with every :class:`Replayed` block replaced by its records."""
    if not any(type(e) is Replayed for e in events):
        return events  # type: ignore[return-value]
    out: list[Issue | Commit | BranchTaken] = []
    for e in events:
        if type(e) is Replayed:
            out += e.expand()
        else:
            out.append(e)
    return out


Event = Issue | Commit | BranchTaken | Replayed
