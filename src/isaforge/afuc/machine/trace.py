"""Mesa's emulator trace format: each executed instruction, then the state it changed.

A line per instruction (``\\t%04x: %08x  text``), then the registers written since the last
clear, grouped as Mesa's ``emu_dump_state_change`` prints them: GPRs, GPU registers, pipe
registers, control registers, SQE registers, memory. Like Mesa, the written sets are cleared
at the start of each step and of each ``(rep)`` iteration, and printed after each iteration
that leaves ``$rem`` non-zero, before each ``(xmovN)`` extra move, and at the end of the step;
so a dump repeats what an earlier dump of the same iteration showed. Mesa prints every
instruction at pc ``0000`` (it disassembles a one-word buffer); we print the real pc.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..decode import Decoder, LabelContext
from ..isa import nop_literal

if TYPE_CHECKING:
    from .processor import Processor

PAD = " " * 14
SPECIAL_DST = {0x1C: "$rem", 0x1D: "$addr", 0x1E: "$usraddr", 0x1F: "$data"}
_GPR_NAMES = [SPECIAL_DST.get(n, f"${n:02x}") for n in range(32)]


class TraceState:
    """What changed in the current step, and how to print it."""

    def __init__(self, out: Callable[[str], None], jumptbl_offset: int | None = None) -> None:
        self.out = out
        self.gpr: set[int] = set()
        self.gpu: set[int] = set()
        self.pipe: set[int] = set()
        self.ctrl: set[int] = set()
        self.sqe: set[int] = set()
        self.mem: list[int] = []
        self.jumptbl_offset = jumptbl_offset
        self._dec: Decoder | None = None
        self._ctx: LabelContext | None = None
        # (processor name, pc) of an instruction already shown (the debugger's prompt shows
        # the next one): if the next line is that one, it is not printed again
        self.skip: tuple[str, int] | None = None
        self._names: dict[tuple[str, int], str] = {}  # (space, register) -> dump name

    def clear(self) -> None:
        self.gpr.clear()
        self.gpu.clear()
        self.pipe.clear()
        self.ctrl.clear()
        self.sqe.clear()
        self.mem.clear()

    def line(self, proc: Processor, pc: int) -> None:
        if self.skip is not None:
            skip, self.skip = self.skip, None
            if skip == (proc.name, pc):
                return
        if self._dec is None:
            self._dec = Decoder(proc.gen, proc.db)
            # branch targets print as numbers, as in Mesa's one-instruction disassembly
            self._ctx = LabelContext(proc.db, 1, labels=False)
        word = proc.image[pc]
        if (self.jumptbl_offset is not None
                and word == nop_literal(self.jumptbl_offset, proc.gen)):
            text = "[#jumptbl]"
        else:
            text = self._dec.text(word, self._ctx)
        self.out(f"\t{pc:04x}: {word:08x}  {text}")

    def dump(self, proc: Processor) -> None:
        out = self.out
        if self.gpr:
            g = proc.gpr
            for n in sorted(self.gpr):
                out(f"{PAD}GPR:  {_GPR_NAMES[n]}: {g[n]:08x}")
        if self.gpu:
            gpu = proc.emu.gpu
            for n in sorted(self.gpu):
                out(f"{PAD}GPU:  {self._name(proc, 'gpu', n)}: {int(gpu[n]):08x}")
        if self.pipe:
            for n in sorted(self.pipe):
                out(f"{PAD}PIPE: {self._name(proc, 'pipe', n)}: {int(proc.pipe[n]):08x}")
        if self.ctrl:
            for n in sorted(self.ctrl):
                out(f"{PAD}CTRL: {self._name(proc, 'ctrl', n)}: {int(proc.control[n]):08x}")
        if self.sqe:
            for n in sorted(self.sqe):
                out(f"{PAD}SQE: {self._name(proc, 'sqe', n)}: {int(proc.sqe[n]):08x}")
        if self.mem:
            mem = proc.emu.mem
            for a in self.mem:
                out(f"{PAD}MEM:  0x{a:016x}: 0x{mem.get(a, 0):08x}")

    def _name(self, proc: Processor, space: str, n: int) -> str:
        """A register as the dump names it (looked up once per register)."""
        key = (space, n)
        got = self._names.get(key)
        if got is None:
            db = proc.db
            if space == "gpu":
                got = db.gpu_reg_name(n) or f"0x{n:04x}"
            else:
                name = {"pipe": db.pipe_reg_name, "ctrl": db.control_reg_name,
                        "sqe": db.sqe_reg_name}[space](n)
                sigil = "|" if space == "pipe" else "@"
                got = sigil + name if name else f"0x{n:03x}"
            self._names[key] = got
        return got
