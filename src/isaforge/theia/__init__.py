"""THEIA GPU: the VP (64-bit vector processor) and CP (32-bit control processor) instruction sets.

Compatible with the upstream compiler of freecores/theia_gpu beta_2.0: the disassembly is the
text of its ``code.list`` / ``cp_code.list`` listings, and those listings assemble back to its
``code.mem`` / ``control_code.mem`` images.

Python API (Capstone/Keystone style)::

    from isaforge import theia
    words = theia.assemble("ADD R[0].x__ I(0) 0")          # [0x8001900000000000]
    for ins in theia.disassemble(words):                    # Instruction objects
        print(ins.address, ins.word, ins.mnemonic, ins.op_str)
    text = theia.write_mem(words)                           # code.mem text
    cp_words = theia.read_mem(open("control_code.mem").read(), cp=True)
"""

from .asm import assemble
from .compiler import compile_cp, compile_vp
from .disasm import Instruction, decode_one, disassemble, listing, read_mem, write_mem
from .gpu import Gpu
from .isa import cp_isa, isa_for, vp_isa

__all__ = [
    "Gpu",
    "Instruction",
    "assemble",
    "compile_cp",
    "compile_vp",
    "cp_isa",
    "decode_one",
    "disassemble",
    "isa_for",
    "listing",
    "read_mem",
    "vp_isa",
    "write_mem",
]
