"""Adreno afuc: the CP/SQE microcontroller of Adreno a5xx/a6xx/a7xx GPUs.

Python API (Capstone/Keystone style)::

    from isaforge import afuc
    fw = afuc.assemble(text)                   # bytes, Mesa afuc-asm compatible
    for ins in afuc.disassemble(fw):           # Instruction objects
        print(ins.address, ins.mnemonic, ins.op_str)
    print(afuc.listing(fw))                    # Mesa afuc-disasm compatible text
    emu = afuc.Emulator(fw_bytes); emu.feed("CP_ME_INIT 0"); emu.run(); emu.effects
"""

from .asm import assemble
from .disasm import Instruction, disassemble, listing
from .emu import Effect, Emulator
from .firmware import Firmware, load_firmware, parse_gpu
from .isa import isa_for

__all__ = [
    "Effect",
    "Emulator",
    "Firmware",
    "Instruction",
    "assemble",
    "disassemble",
    "isa_for",
    "listing",
    "load_firmware",
    "parse_gpu",
]
