"""Tenstorrent Blackhole Tensix: the coprocessor instruction set of a Tensix tile.

Python API (Capstone/Keystone style)::

    from isaforge import tensix
    words = tensix.assemble("ttsetc16 5,4\\nTTI_MVMUL(0, 0, 1, 0)")   # Tensix words
    for ins in tensix.disassemble(words):                              # Instruction objects
        print(ins.word, ins.mnemonic, ins.operands, ins.text)
    tensix.disassemble(stream_words, rotated=True)      # words of a RISC-V stream (.ttinsn)

Text is what ``riscv-tt-elf-objdump`` prints (``ttsetc16\\t5,4``); the assembler also reads
the LLK macro form (``TT_SETC16(5, 4)``, ``TTI_MVMUL(...)``).
"""

from .asm import assemble, assemble_bytes
from .coprocessor import Coprocessor
from .disasm import Instruction, decode_word, disassemble, listing, relist
from .isa import instr, ops, rotl2, rotr2, tensix_isa

__all__ = [
    "Coprocessor",
    "Instruction",
    "assemble",
    "assemble_bytes",
    "decode_word",
    "disassemble",
    "instr",
    "listing",
    "ops",
    "relist",
    "rotl2",
    "rotr2",
    "tensix_isa",
]
