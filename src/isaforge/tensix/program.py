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
    .include "matmul_kernel.s"   # another PROG.s, here (next to this file, else bundled)

Errors name the file, line and column. The result is data (:class:`Program`): the three
instruction streams and the setup the directives ask for, which
:meth:`isaforge.tensix.Coprocessor.load_program` applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import AsmError, DecodeError, EmulationError, SourceLoc
from .asm import assemble
from .decode import decode
from .isa import (
    N_GPRS,
    N_MOPCFG,
    N_SEMAPHORES,
    N_THREADS,
    config_fields,
    rotr2,
    thread_config_fields,
)
from .listing import listing_lines, looks_like_listing


def _per_thread() -> dict[int, list[int]]:
    return {t: [] for t in range(N_THREADS)}


@dataclass
class Program:
    """A parsed PROG.s: per thread the Tensix words and the line each came from, and the
    directives in order (``(thread, index, value)`` for ``.mopcfg``/``.gpr``, ``(index,
    value, max)`` for ``.semaphore``, ``(field, value)`` for ``.config`` (both banks),
    ``(thread, field, value)`` for ``.threadconfig``)."""

    streams: dict[int, list[int]] = field(default_factory=_per_thread)
    lines: dict[int, list[int]] = field(default_factory=_per_thread)
    mopcfg: list[tuple[int, int, int]] = field(default_factory=list)
    gprs: list[tuple[int, int, int]] = field(default_factory=list)
    semaphores: list[tuple[int, int, int]] = field(default_factory=list)
    config: list[tuple[str, int]] = field(default_factory=list)
    thread_config: list[tuple[int, str, int]] = field(default_factory=list)


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


# where ``.include "FILE"`` looks after the including file's own directory: the bundled
# kernels (``isaforge/tensix/data``)
_BUNDLED = Path(__file__).resolve().parent / "data"
_MAX_INCLUDE_DEPTH = 16


def parse_program(text: str, filename: str = "<program>") -> Program:
    """Parse PROG.s text; :class:`AsmError` with a location on any mistake."""
    prog = Program()
    root = () if filename.startswith("<") else (str(Path(filename).resolve()),)
    _parse_into(prog, text, filename, 0, root)
    return prog


def _include_path(name: str, filename: str, loc: SourceLoc) -> Path:
    """The file ``.include "name"`` in ``filename`` means: ``name`` relative to that file's
    directory, else one of the bundled kernels."""
    here = Path(filename).parent if not filename.startswith("<") else Path()
    for cand in (here / name, _BUNDLED / name):
        if cand.is_file():
            return cand
    raise AsmError(f".include: no file '{name}' next to {filename} or among the bundled "
                   f"kernels ({', '.join(sorted(p.name for p in _BUNDLED.glob('*.s')))})", loc)


def _parse_into(prog: Program, text: str, filename: str, thread: int,
                including: tuple[str, ...]) -> int:
    """Parse ``text`` into ``prog``, starting in ``thread``; the thread current at the end
    (an included file continues the includer's thread and leaves its own ``.thread``, as a
    textual include does)."""
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
            prog.mopcfg.append((thread, _int(toks[1], loc, ".mopcfg index", N_MOPCFG),
                                _int(toks[2], loc, ".mopcfg value", 1 << 32)))
        elif d == ".gpr":
            want(2, ".gpr N VALUE")
            prog.gprs.append((thread, _int(toks[1], loc, ".gpr index", N_GPRS),
                              _int(toks[2], loc, ".gpr value", 1 << 32)))
        elif d == ".semaphore":
            want(3, ".semaphore N VALUE MAX")
            prog.semaphores.append((_int(toks[1], loc, ".semaphore index", N_SEMAPHORES),
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
        elif d == ".include":
            m = re.fullmatch(r'\.include\s+"([^"]+)"', body, re.IGNORECASE)
            if m is None:
                raise AsmError('.include takes one quoted file name (.include "FILE")', loc)
            path = _include_path(m.group(1), filename, loc)
            key = str(path.resolve())
            if key in including or len(including) >= _MAX_INCLUDE_DEPTH:
                raise AsmError(f".include: '{m.group(1)}' includes itself", loc)
            try:
                sub = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise AsmError(f".include: cannot read {path}: {e}", loc) from None
            thread = _parse_into(prog, sub, str(path), thread, (*including, key))
        elif d.startswith(".") and d != ".ttinsn":
            raise AsmError(f"unknown directive '{toks[0]}' (.thread, .mopcfg, .gpr, "
                           f".semaphore, .config, .threadconfig, .word, .include)", loc)
        else:
            try:
                words = assemble(line, filename)
            except AsmError as e:
                c = e.loc.col if e.loc is not None else col
                raise AsmError(e.message, SourceLoc(filename, lineno, c)) from None
            prog.streams[thread].extend(words)
            prog.lines[thread].extend([lineno] * len(words))
    return thread


# a listing's section header: objdump's "…/trisc1.elf:  file format …" line, or the
# "######## TRISC1 (math) …" banner of the multi-core listings
_SECTION_RE = re.compile(r"(?:trisc(?P<elf>[0-2])\.elf:\s+file format)|"
                         r"(?:^#+\s*TRISC(?P<banner>[0-2])\b)|"
                         r"(?:(?P<other>[bn]risc)\.elf:\s+file format)|"
                         r"(?:^#+\s*(?P<otherb>[BN]RISC)\b)", re.IGNORECASE)


def parse_listing(text: str, filename: str = "<listing>",
                  thread: int | None = None) -> Program:
    """A :class:`Program` from an objdump listing of TRISC compute kernels: every Tensix
    instruction line (``tt...``/``sfp...``) in listing order becomes a word of the stream of
    the thread its section names (``trisc<k>.elf: file format``, or a ``######## TRISC<k>``
    banner; TRISC<k> drives thread k); lines of BRISC/NCRISC sections are ignored, and a
    listing without sections goes to thread 0. With ``thread``, only that thread's sections
    are taken (all the lines of a listing without sections go to it). Lines with the word
    objdump showed take it (un-rotated: the stream holds each Tensix word rotated left by 2);
    lines without it (``--no-show-raw-insn``) are assembled from their text.

    This is the listing's static order: loops and branches of the RISC-V code around the
    words are not followed, so the stream is what the listing shows once."""
    prog = Program()
    sections: list[tuple[int, int | None]] = []  # (first line, thread or None for B/NCRISC)
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _SECTION_RE.search(line)
        if m is not None:
            k = m.group("elf") or m.group("banner")
            sections.append((lineno, int(k) if k is not None else None))
    found = 0
    for ln in listing_lines(text):
        t: int | None = thread if thread is not None else 0
        if sections:
            t = None
            for first, k in sections:
                if first <= ln.lineno:
                    t = k
            if thread is not None and t != thread:
                t = None
        if t is None:
            continue
        loc = SourceLoc(filename, ln.lineno, 1)
        if ln.raw is not None:
            word = rotr2(ln.raw)
            try:
                decode(word)
            except DecodeError as e:
                raise AsmError(f"{ln.raw:#010x} ({ln.text}): {e.message}", loc) from None
            words = [word]
        else:
            try:
                words = assemble(ln.text, filename)
            except AsmError as e:
                raise AsmError(f"{ln.text}: {e.message}", loc) from None
        prog.streams[t].extend(words)
        prog.lines[t].extend([ln.lineno] * len(words))
        found += 1
    if not found:
        which = f"TRISC{thread}" if thread is not None else "a TRISC"
        raise EmulationError(f"{filename}: the listing shows no Tensix instruction of {which}")
    return prog


def load_file(path: str, thread: int | None = None) -> Program:
    """Parse the PROG.s file ``path``, or the objdump listing it holds
    (:func:`parse_listing`, with ``thread``)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as e:
        raise EmulationError(f"{path}: not a text file ({e.reason})") from None
    if looks_like_listing(text.encode("utf-8")):
        return parse_listing(text, path, thread)
    if thread is not None:
        raise EmulationError(f"{path}: --thread applies to an objdump listing; a PROG.s "
                             f"names its threads with .thread")
    return parse_program(text, path)


__all__ = ["Program", "load_file", "parse_listing", "parse_program"]
