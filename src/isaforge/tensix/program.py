"""PROG.s: a Tensix program for the three threads, with what the RISC-V cores would set up.

One statement per line; ``#`` or ``//`` start a comment::

    .thread 1                    # the following lines go to thread 1 (default: thread 0)
    .mopcfg 0 0x1                # MopCfg[0] of the current thread (what RISC-V writes)
    .gpr 4 0x12345678            # GPR 4 of the current thread
    .semaphore 1 0 2             # semaphore 1: Value 0, Max 2
    .config ALU_ACC_CTRL_Fp32_enabled 1         # a named Config field (both banks)
    .threadconfig FIDELITY_BASE_Phase 1         # a named ThreadConfig field (current thread)
    ttsetc16 12,0x0808           # an instruction, objdump form ...
    TTI_MVMUL(0, 0, 0, 0)        # ... or LLK macro form
    .word 0x26000000             # a raw Tensix word

Errors name the file, line and column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.errors import AsmError, DecodeError, EmulationError, SourceLoc
from .asm import assemble
from .state import N_THREADS, Semaphores, config_fields, thread_config_fields

if TYPE_CHECKING:
    from .coprocessor import Coprocessor


@dataclass
class Program:
    """A parsed PROG.s."""

    streams: dict[int, list[int]] = field(default_factory=lambda: {0: [], 1: [], 2: []})
    lines: dict[int, list[int]] = field(default_factory=lambda: {0: [], 1: [], 2: []})
    mopcfg: list[tuple[int, int, int]] = field(default_factory=list)
    gprs: list[tuple[int, int, int]] = field(default_factory=list)
    semaphores: list[tuple[int, int, int]] = field(default_factory=list)
    config: list[tuple[str, int]] = field(default_factory=list)
    thread_config: list[tuple[int, str, int]] = field(default_factory=list)

    def apply(self, cp: Coprocessor) -> None:
        """Load the streams into ``cp`` and apply the directives."""
        for t, idx, value in self.mopcfg:
            cp.threads[t].mop.cfg[idx] = value
        for t, idx, value in self.gprs:
            cp.gpr.set(t, idx, value)
        for idx, value, maximum in self.semaphores:
            cp.sync.sem.value[idx] = value
            cp.sync.sem.max[idx] = maximum
        for name, value in self.config:
            cp.config.set(name, value)
        for t, name, value in self.thread_config:
            cp.thread_config.set(t, name, value)
        for t in range(N_THREADS):
            cp.set_stream(t, self.streams[t])


def _strip(line: str) -> str:
    for mark in ("//", "#"):
        pos = line.find(mark)
        if pos >= 0:
            line = line[:pos]
    return line


def _int(tok: str, loc: SourceLoc, what: str, limit: int) -> int:
    try:
        v = int(tok, 0)
    except ValueError:
        raise AsmError(f"{what}: expected a number, found '{tok}'", loc) from None
    if not 0 <= v < limit:
        raise AsmError(f"{what} {v} is out of range (0..{limit - 1})", loc)
    return v


def parse_program(text: str, filename: str = "<program>") -> Program:
    """Parse PROG.s text; :class:`AsmError` with a location on any mistake."""
    from .coprocessor import decode

    prog = Program()
    thread = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _strip(raw)
        body = line.strip()
        if not body:
            continue
        col = line.index(body[0]) + 1
        loc = SourceLoc(filename, lineno, col)
        toks = body.replace(",", " ").split()
        d = toks[0].lower()

        def want(n: int, usage: str, toks: list[str] = toks, loc: SourceLoc = loc) -> None:
            if len(toks) != n + 1:
                raise AsmError(f"{toks[0]} takes {n} operand{'s' if n != 1 else ''} "
                               f"({usage}), found {len(toks) - 1}", loc)

        if d == ".thread":
            want(1, ".thread 0|1|2")
            thread = _int(toks[1], loc, ".thread", N_THREADS)
        elif d == ".mopcfg":
            want(2, ".mopcfg INDEX VALUE")
            prog.mopcfg.append((thread, _int(toks[1], loc, ".mopcfg index", 9),
                                _int(toks[2], loc, ".mopcfg value", 1 << 32)))
        elif d == ".gpr":
            want(2, ".gpr N VALUE")
            prog.gprs.append((thread, _int(toks[1], loc, ".gpr index", 64),
                              _int(toks[2], loc, ".gpr value", 1 << 32)))
        elif d == ".semaphore":
            want(3, ".semaphore N VALUE MAX")
            prog.semaphores.append((_int(toks[1], loc, ".semaphore index", Semaphores.N),
                                    _int(toks[2], loc, ".semaphore value", 16),
                                    _int(toks[3], loc, ".semaphore max", 16)))
        elif d in (".config", ".threadconfig"):
            want(2, f"{d} FIELD VALUE")
            table = config_fields() if d == ".config" else thread_config_fields()
            f = table.get(toks[1])
            if f is None:
                raise AsmError(f"{d}: unknown field '{toks[1]}'", loc)
            value = _int(toks[2], loc, f"{d} {f.name}", 1 << f.size)
            if d == ".config":
                prog.config.append((f.name, value))
            else:
                prog.thread_config.append((thread, f.name, value))
        elif d == ".word":
            want(1, ".word 0x...")
            word = _int(toks[1], loc, ".word", 1 << 32)
            try:
                decode(word)
            except DecodeError as e:
                raise AsmError(f".word {word:#010x}: {e.message}", loc) from None
            prog.streams[thread].append(word)
            prog.lines[thread].append(lineno)
        elif d.startswith(".") and d != ".ttinsn":
            raise AsmError(f"unknown directive '{toks[0]}' (.thread, .mopcfg, .gpr, "
                           f".semaphore, .config, .threadconfig, .word)", loc)
        else:
            try:
                words = assemble(line, filename)
            except AsmError as e:
                c = e.loc.col if e.loc is not None else col
                raise AsmError(e.message, SourceLoc(filename, lineno, c)) from None
            prog.streams[thread].extend(words)
            prog.lines[thread].extend([lineno] * len(words))
    return prog


def load_file(path: str) -> Program:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as e:
        raise EmulationError(f"{path}: not a text file ({e.reason})") from None
    return parse_program(text, path)


__all__ = ["Program", "load_file", "parse_program"]
