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

The names are imported when first used (PEP 562), so that a command that runs ``.mem`` images
on the cycle model does not pay for the compilers, the assembler or the instruction-level
simulator (numpy) at start-up; but ``listing``, also the name of a submodule (importing the
submodule would bind the package attribute to the module), is bound here, first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_names

if TYPE_CHECKING:
    from ..core.insn import Instruction
    from .asm import assemble
    from .compiler import compile_cp, compile_vp
    from .decode import TheiaDetail, decode_one, disassemble
    from .image import read_mem, write_mem
    from .isa import cp_isa, isa_for, vp_isa
    from .machine.gpu import Gpu

from .listing import listing

_WHERE = {
    "Gpu": ".machine.gpu",
    "Instruction": "..core.insn",
    "TheiaDetail": ".decode",
    "assemble": ".asm",
    "compile_cp": ".compiler",
    "compile_vp": ".compiler",
    "cp_isa": ".isa",
    "decode_one": ".decode",
    "disassemble": ".decode",
    "isa_for": ".isa",
    "read_mem": ".image",
    "vp_isa": ".isa",
    "write_mem": ".image",
}

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


__getattr__, __dir__ = lazy_names(__name__, globals(), _WHERE)
