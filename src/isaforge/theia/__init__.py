"""THEIA GPU: the VP (64-bit vector processor) and CP (32-bit control processor) instruction sets.

Compatible with the upstream compiler of freecores/theia_gpu beta_2.0: the disassembly is the
text of its ``code.list`` / ``cp_code.list`` listings, and those listings assemble back to its
``code.mem`` / ``control_code.mem`` images.

Python API (Capstone/Keystone/Unicorn style)::

    from isaforge import theia
    words = theia.assemble("ADD R[0].x__ I(0) 0")          # [0x8001900000000000]
    for ins in theia.disassemble(words):                    # core Instruction records
        print(ins.address, ins.size, ins.mnemonic, ins.op_str)   # byte address, 8 bytes
        ins.text                      # readable (code.list's text): may hide bits, named in
        ins.detail.hidden_fields      # ({} when ins.text reads back to the word)
        ins.detail.lossless_asm       # the round-trip form: reads back to exactly the word
    text = theia.write_mem(words)                           # code.mem text
    cp_words = theia.read_mem(open("control_code.mem").read(), cp=True)
    theia.disassemble(words, labels={16: "done"})            # labels by byte address
    gpu = theia.Gpu(cores=4)                                # the designed machine
    handle = gpu.hook_add("insn", lambda gpu, address, size, info: ...)
    rtl = theia.Gpu(rtl=True)           # the RTL, as `isaforge theia run --rtl` (cycle model)
    rtl.load(code_words, control_words, tmem_words)
    result = rtl.run()                  # registers/OMEM as the RTL's dumps; result.cycles
"""

from ..core.insn import Instruction
from .asm import assemble
from .compiler import compile_cp, compile_vp
from .decode import TheiaDetail, decode_one, disassemble
from .image import read_mem, write_mem
from .isa import cp_isa, isa_for, vp_isa
from .listing import listing
from .machine.gpu import Gpu

__all__ = [
    "Gpu",
    "Instruction",
    "TheiaDetail",
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
