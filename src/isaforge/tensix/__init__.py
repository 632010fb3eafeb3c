"""Tenstorrent Blackhole Tensix: the coprocessor instruction set of a Tensix tile.

Python API (Capstone/Keystone/Unicorn style)::

    from isaforge import tensix
    words = tensix.assemble("ttsetc16 5,4\\nTTI_MVMUL(0, 0, 1, 0)")   # Tensix words
    for ins in tensix.disassemble(words):                              # a generator
        print(ins.address, ins.word, ins.mnemonic, ins.op_str, ins.text)
    tensix.disassemble(stream_words, rotated=True)      # words of a RISC-V stream (.ttinsn)
    tensix.listing(words, verbose=True)                 # the text form

    cp = tensix.Coprocessor()
    cp.load_program(prog_s_text)
    h = cp.hook_add("insn", lambda cp, address, size, ev: print(ev.thread, ev.insn.text))
    cp.run()
    cp.hook_del(h)

Text is what ``riscv-tt-elf-objdump`` prints (``ttsetc16\\t5,4``); the assembler also reads
the LLK macro form (``TT_SETC16(5, 4)``, ``TTI_MVMUL(...)``).

Modules: :mod:`.isa` (the instruction set and configuration registers, as data),
:mod:`.decode`, :mod:`.listing` (text, objdump listings), :mod:`.asm`, :mod:`.image` (word
streams), :mod:`.program` (PROG.s), :mod:`.machine` (the coprocessor), :mod:`.cli`,
:mod:`.demo`.
"""

from ..core.insn import Instruction
from .asm import assemble, assemble_bytes
from .decode import decode_word, disassemble
from .isa import instr, ops, rotl2, rotr2, tensix_isa
from .listing import listing, relist
from .machine import Coprocessor, Executed, RunResult
from .program import Program, parse_program

__all__ = [
    "Coprocessor",
    "Executed",
    "Instruction",
    "Program",
    "RunResult",
    "assemble",
    "assemble_bytes",
    "decode_word",
    "disassemble",
    "instr",
    "listing",
    "ops",
    "parse_program",
    "relist",
    "rotl2",
    "rotr2",
    "tensix_isa",
]
