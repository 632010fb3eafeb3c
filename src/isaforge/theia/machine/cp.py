"""The THEIA control processor (CP), at instruction level.

256 x 32-bit instruction RAM and 256 x 32-bit registers; the IP is 8 bits and wraps. The
opcode is the low 5 bits of bits 31..24 (the RTL's decoder width). Semantics as the beta_2.0
RTL builds them:

* ADD SUB AND OR SHL SHR: ``R[DST] = R[SRC1] op R[SRC0]`` (32-bit, unsigned, shifts of 32 or
  more give 0); ASSIGN: ``R[DST] = instruction[15:0]``.
* BRANCH, BEQ BNE BG BL BGE BLE (unsigned compare of R[SRC1] with R[SRC0]): the target is the
  DST field; the instruction after a branch (the delay slot) always executes.
* Register 2 reads the STATUS bit (1: no memory copy pending); register 3 is also the
  BLOCK_DST register that COPYBLOCK uses as the destination id.
* COPYBLOCK: a request to the memory controller: ``{R[3], R[SRC1], R[SRC0]}`` where SRC0
  holds the tag (bit 31), BLKLEN (30..20) and DST offset (19..0).
* DELIVERCOMMAND: a CCB message ``{DST field, R[SRC1][7:0], R[SRC0][15:0]}``.
* EXIT ends the CP program (as designed; in the RTL it is a no-op and the IP runs on through
  the zero-filled RAM: ``exit_is_noop``). NOT writes ``~R[SRC1]`` (as designed; the RTL has
  no NOT and writes nothing: ``not_is_noop``). Opcodes 19..31 do nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ...core.errors import EmulationError
from .ccb import Message
from .memory import CopyRequest

MASK32 = 0xFFFF_FFFF
CP_RAM_SIZE = 256

(NOP, DELIVERCOMMAND, ADD, SUB, AND, OR, BRANCH, BEQ, BNE, BG, BL, BGE, BLE, ASSIGN,
 COPYBLOCK, EXIT, NOT, SHL, SHR) = range(19)
REG_STATUS = 2
REG_BLOCK_DST = 3


class CpBus(Protocol):
    """What the CP talks to."""

    def cp_status(self) -> int: ...

    def cp_copy(self, request: CopyRequest) -> None: ...

    def cp_message(self, message: Message) -> None: ...


class ControlProcessor:
    """The CP: fetch, execute, delay slot."""

    def __init__(self, program: Sequence[int] = (), exit_is_noop: bool = False,
                 not_is_noop: bool = False) -> None:
        if len(program) > CP_RAM_SIZE:
            raise EmulationError(
                f"control program has {len(program)} words; the CP RAM holds {CP_RAM_SIZE}")
        self.ram = [w & MASK32 for w in program] + [0] * (CP_RAM_SIZE - len(program))
        self.regs = [0] * 256
        self.ip = 0
        self._target: int | None = None  # a taken branch's target, after the delay slot
        self.exited = False
        self.steps = 0
        self.side_effects = 0  # COPYBLOCKs and DELIVERCOMMANDs executed
        self.exit_is_noop = exit_is_noop
        self.not_is_noop = not_is_noop
        self.exits_ignored = 0
        self.nots = 0
        self.wraps = 0  # times the IP ran past 255 back to 0 (the program starts over)

    def read(self, reg: int, bus: CpBus) -> int:
        return bus.cp_status() if reg == REG_STATUS else self.regs[reg]

    def step(self, bus: CpBus) -> None:
        """Execute one instruction."""
        word = self.ram[self.ip]
        op = word >> 24 & 0x1F
        dst = word >> 16 & 0xFF
        s1 = word >> 8 & 0xFF
        s0 = word & 0xFF
        taken: int | None = None
        regs = self.regs
        if op == ASSIGN:
            regs[dst] = word & 0xFFFF
        elif ADD <= op <= OR or op in (SHL, SHR):
            a = self.read(s1, bus)
            b = self.read(s0, bus)
            if op == ADD:
                v = a + b
            elif op == SUB:
                v = a - b
            elif op == AND:
                v = a & b
            elif op == OR:
                v = a | b
            elif op == SHL:
                v = a << b if b < 32 else 0
            else:
                v = a >> b if b < 32 else 0
            regs[dst] = v & MASK32
        elif op == BRANCH:
            taken = dst
        elif BEQ <= op <= BLE:
            a = self.read(s1, bus)
            b = self.read(s0, bus)
            cond = {BEQ: a == b, BNE: a != b, BG: a > b, BL: a < b, BGE: a >= b,
                    BLE: a <= b}[op]
            if cond:
                taken = dst
        elif op == COPYBLOCK:
            self.side_effects += 1
            bus.cp_copy(CopyRequest.from_registers(regs[REG_BLOCK_DST], self.read(s1, bus),
                                                   self.read(s0, bus)))
        elif op == DELIVERCOMMAND:
            self.side_effects += 1
            bus.cp_message(Message.build(dst, self.read(s1, bus), self.read(s0, bus)))
        elif op == NOT:
            self.nots += 1
            if not self.not_is_noop:
                regs[dst] = ~self.read(s1, bus) & MASK32
        elif op == EXIT:
            if not self.exit_is_noop:
                self.exited = True
                self.steps += 1
                return
            self.exits_ignored += 1
        self.steps += 1
        if self._target is not None:
            self.ip = self._target
            self._target = None
        else:
            self.ip = (self.ip + 1) & 0xFF
            if not self.ip:
                self.wraps += 1
        if taken is not None:
            self._target = taken


__all__ = ["CP_RAM_SIZE", "REG_BLOCK_DST", "REG_STATUS", "ControlProcessor", "CpBus"]
