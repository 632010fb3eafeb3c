"""Adreno afuc: the CP/SQE microcontroller of Adreno a5xx/a6xx/a7xx GPUs.

Python API (Capstone/Keystone/Unicorn style)::

    from isaforge import afuc
    fw = afuc.assemble(text)                   # bytes, Mesa afuc-asm compatible
    for ins in afuc.disassemble(fw):           # an iterator of isaforge.core.insn.Instruction
        print(ins.address, ins.mnemonic, ins.op_str)
    print(afuc.listing(fw))                    # Mesa afuc-disasm compatible text
    emu = afuc.Emulator(fw_bytes)
    h = emu.hook_add("reg_write", lambda emu, reg, value, info: print(info.name, value))
    emu.feed("CP_ME_INIT 0"); emu.run(); emu.effects; emu.hook_del(h)
"""

from ..core.insn import Instruction
from .asm import assemble
from .decode import disassemble
from .image import Firmware, load_firmware, parse_gpu
from .isa import isa_for
from .listing import listing
from .machine import Effect, Emulator, RegWrite

__all__ = [
    "Effect",
    "Emulator",
    "Firmware",
    "Instruction",
    "RegWrite",
    "assemble",
    "disassemble",
    "isa_for",
    "listing",
    "load_firmware",
    "parse_gpu",
]
