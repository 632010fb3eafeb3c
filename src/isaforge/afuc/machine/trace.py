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
    """What changed in the current step, and how to print it.

    Lines go to ``out`` one at a time, or, given ``sink``, in lists of about ``batch`` lines
    (``sink`` gets a list it must not keep; :meth:`flush` hands over the rest): the way
    for a long trace, as a call per line costs more than making the line. With a sink an
    item of the list may hold several lines joined by newlines (``joined``)."""

    GPU_TAG = f"{PAD}GPU:  "  # how a GPU-register dump line starts

    def __init__(self, out: Callable[[str], None] | None,
                 jumptbl_offset: int | None = None, *,
                 sink: Callable[[list[str]], None] | None = None, batch: int = 8192) -> None:
        self.sink = sink
        self.batch = batch
        # a "line" handed to out may hold several lines joined by newlines (with a sink:
        # they are joined anyway): traced runs may then make a packet's lines at once
        self.joined = sink is not None
        self.buf: list[str] = []
        if out is None:
            out = self.buf.append
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
        # a dump line's text before the value, by space: gpr is a list by number, the
        # others dicts filled as registers are met (names looked up once)
        self._pre_gpr = [f"{PAD}GPR:  {name}: " for name in _GPR_NAMES]
        self._pre: dict[str, dict[int, str]] = {"gpu": {}, "pipe": {}, "ctrl": {}, "sqe": {}}
        self._lines: dict[tuple[str, int], str] = {}  # (processor, pc) -> instruction line

    def flush(self) -> None:
        """Hand the lines made so far to ``sink`` (with a sink)."""
        if self.sink is not None and self.buf:
            self.sink(self.buf)
            self.buf.clear()

    def clear(self) -> None:
        if self.gpr:
            self.gpr.clear()
        if self.gpu:
            self.gpu.clear()
        if self.pipe:
            self.pipe.clear()
        if self.ctrl:
            self.ctrl.clear()
        if self.sqe:
            self.sqe.clear()
        if self.mem:
            self.mem.clear()

    def line(self, proc: Processor, pc: int) -> None:
        if self.skip is not None:
            skip, self.skip = self.skip, None
            if skip == (proc.name, pc):
                return
        key = (proc.name, pc)
        text = self._lines.get(key)
        if text is None:
            text = self._lines[key] = self._line_text(proc, pc)
        self.out(text)
        if self.sink is not None and len(self.buf) >= self.batch:
            self.flush()

    def _line_text(self, proc: Processor, pc: int) -> str:
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
        return f"\t{pc:04x}: {word:08x}  {text}"

    def dump(self, proc: Processor) -> None:
        out = self.out
        if self.gpr:
            g, pre = proc.gpr, self._pre_gpr
            for n in (sorted(self.gpr) if len(self.gpr) > 1 else self.gpr):
                out(f"{pre[n]}{g[n]:08x}")
        if self.gpu:
            gpu, pre = proc.emu.gpu, self._pre["gpu"]
            for n in (sorted(self.gpu) if len(self.gpu) > 1 else self.gpu):
                head = pre.get(n) or self._name(proc, "gpu", n)
                out(f"{head}{gpu[n]:08x}")
        if self.pipe:
            for n in sorted(self.pipe):
                out(f"{self._name(proc, 'pipe', n)}{proc.pipe[n]:08x}")
        if self.ctrl:
            for n in sorted(self.ctrl):
                out(f"{self._name(proc, 'ctrl', n)}{proc.control[n]:08x}")
        if self.sqe:
            for n in sorted(self.sqe):
                out(f"{self._name(proc, 'sqe', n)}{proc.sqe[n]:08x}")
        if self.mem:
            mem = proc.emu.mem
            for a in self.mem:
                out(f"{PAD}MEM:  0x{a:016x}: 0x{mem.get(a, 0):08x}")

    def _name(self, proc: Processor, space: str, n: int) -> str:
        """A dump line's text before the value: the register as the dump names it."""
        got = self._pre[space].get(n)
        if got is None:
            db = proc.db
            if space == "gpu":
                name = db.gpu_reg_name(n) or f"0x{n:04x}"
            else:
                found = {"pipe": db.pipe_reg_name, "ctrl": db.control_reg_name,
                         "sqe": db.sqe_reg_name}[space](n)
                sigil = "|" if space == "pipe" else "@"
                name = sigil + found if found else f"0x{n:03x}"
            tag = {"gpu": "GPU:  ", "pipe": "PIPE: ", "ctrl": "CTRL: ", "sqe": "SQE: "}[space]
            got = self._pre[space][n] = f"{PAD}{tag}{name}: "
        return got
